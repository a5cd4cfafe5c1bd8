// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the pickle reader and the PyTorch snapshot importer. Any input must be
// refused with tdiag::input_error or import; an imported trace then goes through every
// analysis (replay, summary, leaks, oom, timeline), which must not crash on odd states.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tdiag::trace;
  pickle_limits limits;
  limits.max_values = 1 << 20;
  limits.max_depth = 64;
  load_result r;
  try {
    r = import_snapshot(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pickle", {},
                        limits);
  } catch (const tdiag::input_error&) {
    return 0;
  }
  const auto& t = r.trace;
  (void)summary_report(t, summarize(t));
  (void)leak_report(t, find_leaks(t));
  (void)oom_report(t, find_ooms(t));
  (void)timeline_report(t, timeline_at(t, t.span().begin + t.span().duration() / 2));
  return 0;
}
