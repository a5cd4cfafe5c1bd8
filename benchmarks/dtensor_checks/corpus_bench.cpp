// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The whole golden corpus through tensordiag's propagation, JSON parsing included, on one core:
// read once, then time parse + propagate + answer for every case. The peer figure is PyTorch
// 2.11's own uncached propagation of the same 2,480 cases (8.0 s, from ../shared/docs).
#include <tensordiag/dtensor_checks/case_io.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace tdiag::dtensor;
  std::filesystem::path path =
      std::filesystem::path(TDIAG_SHARED_DIR) / "golden" / "dtensor_cases.jsonl";
  int repeats = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      repeats = 2;
    else
      path = argv[i];
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fmt::print("corpus_bench: skipped, no corpus at {}\n", path.string());
    return 0;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto& registry = op_registry::builtin();
  double best = 1e30;
  std::size_t cases = 0;
  std::size_t written = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const auto file = parse_cases(text);
    std::size_t bytes = 0;
    for (const auto& c : file.cases)
      bytes += to_jsonl(answer_case(c, registry)).size();
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
    cases = file.cases.size();
    written = bytes;
  }
  const double pytorch_s = 8.0;
  fmt::print("dtensor corpus: {} cases, parse + propagate + answer ({} bytes of answers)\n", cases,
             written);
  fmt::print("  tensordiag: {:.2f} ms (best of {}), {:.0f} cases/s\n", best * 1e3, repeats,
             static_cast<double>(cases) / best);
  fmt::print("  PyTorch 2.11 uncached propagation (peer figure): {:.1f} s, {:.0f} cases/s\n",
             pytorch_s, static_cast<double>(cases) / pytorch_s);
  fmt::print("  speed-up: {:.0f}x\n", pytorch_s / best);
  return 0;
}
