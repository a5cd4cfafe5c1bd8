// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/codes.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>
#include <unistd.h>

namespace tdiag {
namespace {

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

diagnostic file_diagnostic(std::string code, std::string title, const std::filesystem::path& path,
                           std::string what) {
  diagnostic d;
  d.code = std::move(code);
  d.title = std::move(title);
  d.message = fmt::format("{}: {}", path.string(), what);
  d.location.file = path.string();
  return d;
}

} // namespace

report read_report_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw input_error(file_diagnostic(std::string(codes::cannot_read), "cannot read report", path,
                                      "is a directory, expected a report file"));
  }
  file_ptr file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw input_error(file_diagnostic(std::string(codes::cannot_read), "cannot read report", path,
                                      fmt::format("cannot open: {}", std::strerror(errno))));
  }
  std::string text;
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0;)
    text.append(buffer, n);
  if (std::ferror(file.get())) {
    throw input_error(file_diagnostic(std::string(codes::cannot_read), "cannot read report", path,
                                      fmt::format("read failed: {}", std::strerror(errno))));
  }
  return parse_report_json(text, path.string());
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  // Write beside the target and rename: a reader (a CI upload step) never sees half a file.
  std::filesystem::path temp = path;
  temp += fmt::format(".tmp{}", getpid());
  const auto fail = [&](std::string_view what) {
    const int saved = errno;
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw error(file_diagnostic(std::string(codes::cannot_write), "cannot write file", path,
                                fmt::format("{}: {}", what, std::strerror(saved))));
  };
  {
    file_ptr file(std::fopen(temp.c_str(), "wb"));
    if (!file)
      fail("cannot create");
    if (std::fwrite(text.data(), 1, text.size(), file.get()) != text.size())
      fail("write failed");
    if (std::fflush(file.get()) != 0)
      fail("write failed");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    fail("cannot rename the temporary file");
}

} // namespace tdiag
