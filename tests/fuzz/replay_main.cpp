// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Without libFuzzer (g++ builds), a fuzz target's LLVMFuzzerTestOneInput is linked with this
// driver, which replays the files and folders named on the command line: the seed corpus runs
// in CTest (under ASan/UBSan in the sanitizer build) even where clang's fuzzer is absent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
int replay(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
    return 1;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 0;
}
} // namespace

int main(int argc, char** argv) {
  // Seeds include declared-size bombs (memo reuse, huge counts): the readers must refuse them
  // within a small budget, as scripts/fuzz runs them, not allocate what they declare.
  setenv("TDIAG_MEMORY_LIMIT", "256M", 0);
  int failures = 0;
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file())
          failures += replay(entry.path()), ++count;
      }
    } else {
      failures += replay(arg), ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return failures == 0 ? 0 : 1;
}
