// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the Kineto / Chrome JSON importer (plain and gzip), parsed in tiny
// windows so the window cutting and retry logic is exercised on every input. Any input must be
// refused with tdiag::input_error or import; the summary must then accept the trace.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/summary_analysis.hpp>

#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tdiag::trace;
  const auto bytes = std::as_bytes(std::span(data, size));
  (void)sniff_kineto(bytes);
  load_result r;
  try {
    r = import_kineto(bytes, "fuzz.json", {}, nullptr, 4096);
  } catch (const tdiag::input_error&) {
    return 0;
  }
  (void)summary_report(r.trace, summarize(r.trace));
  (void)leak_report(r.trace, find_leaks(r.trace));
  return 0;
}
