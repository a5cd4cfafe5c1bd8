// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the Flight Recorder dump reader (pickle or JSON) and the analysis: any
// input must be refused with tdiag::input_error or read; a dump read is then analysed beside a
// second rank holding the same ring less its newest entry (refused, if at all, with
// tdiag::input_error), and every rendering must not crash.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/flight_recorder.hpp>

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fr = tdiag::trace::fr;
  tdiag::trace::pickle_limits limits;
  limits.max_values = 1 << 20;
  std::vector<fr::dump> dumps(1);
  try {
    dumps[0] = fr::parse_dump(std::string(reinterpret_cast<const char*>(data), size), "_dump_0", 0,
                              limits);
  } catch (const tdiag::input_error&) {
    return 0;
  }
  dumps.push_back(dumps[0]);
  dumps[1].rank = dumps[0].rank + 1;
  if (!dumps[1].entries.empty())
    dumps[1].entries.pop_back();
  // A stated world size (3) where the ranks fit in it, else the one the dumps imply; analyze()
  // may still refuse the pair (a rank past what a job can hold), with tdiag::input_error only.
  fr::analyze_options options;
  options.world_size = dumps[1].rank < 3 ? 3 : 0;
  try {
    const auto verdict = fr::analyze(dumps, options);
    (void)fr::to_json(verdict);
    (void)fr::to_text(verdict);
    (void)fr::to_report(verdict);
  } catch (const tdiag::input_error&) {
  }
  return 0;
}
