// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What the `tdiag capture` tests share: running a command line and a per-process temp path.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tdiag::capture::test {

struct outcome {
  int status = -1;
  std::string output; ///< stdout and stderr
};

inline outcome run(const std::string& command) {
  outcome o;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr)
    return o;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    o.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return o;
}

inline std::filesystem::path temp(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "." + std::to_string(getpid()));
}

} // namespace tdiag::capture::test
