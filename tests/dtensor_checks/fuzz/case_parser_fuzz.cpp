// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the case reader and the spec notation: the input is parsed as JSONL
// cases (each readable case is also propagated and answered, and the whole file reported as a
// recording by tdiag shard report) and, line by line, as placement,
// spec, mesh and --arg notation. Any input must be answered or rejected with a diagnostic,
// never crash, leak or hit undefined behaviour.
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>
#include <tensordiag/dtensor_checks/comm_report.hpp>
#include <tensordiag/dtensor_checks/explain.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tdiag::dtensor;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto file = parse_cases(text);
  for (const auto& c : file.cases) {
    const auto answer = answer_case(c);
    (void)to_jsonl(answer);
    if (answer.ok) {
      try {
        const auto r = propagate(c.call);
        (void)explain_text(c.call, r);
        (void)explain_json(c.call, r);
      } catch (const tdiag::error&) {
      }
    }
  }
  for (const auto& e : file.errors)
    (void)to_jsonl(e);
  // A recording's report: grouping, fixes (propagation of every candidate) and renderings.
  const auto comm = build_comm_report(file, "fuzz");
  (void)to_text(comm, 0);
  (void)to_json(comm, 0);
  (void)to_report(comm, 0);
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    const auto line = text.substr(start, end - start);
    start = end + 1;
    if (line.size() > 512)
      continue;
    (void)parse_placement(line);
    try {
      (void)to_string(parse_placements(line));
    } catch (const tdiag::input_error&) {
    }
    try {
      const auto spec = parse_tensor_spec(line, 2);
      (void)to_string(spec);
      (void)to_torch_string(spec);
    } catch (const tdiag::input_error&) {
    }
    try {
      (void)parse_mesh(line).to_string();
    } catch (const tdiag::input_error&) {
    }
    try {
      (void)to_string(parse_arg(line, 2));
    } catch (const tdiag::input_error&) {
    }
  }
  return 0;
}
