// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the report reader. Any input must either parse or throw
// tdiag::input_error with a one-line message; a parsed report must write JSON that reads back
// to the same bytes. Anything else (a crash, a sanitizer report, another exception) is a bug.
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  tdiag::report r;
  try {
    r = tdiag::parse_report_json(input, "fuzz.json");
  } catch (const tdiag::input_error& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos)
      std::abort();
    return 0;
  }
  const std::string json = tdiag::to_json(r);
  if (tdiag::to_json(tdiag::parse_report_json(json, "again")) != json)
    std::abort();
  // Every writer must accept whatever the reader accepted.
  (void)tdiag::to_text(r, {.color = true});
  (void)tdiag::to_github(r);
  (void)tdiag::to_junit(r);
  (void)tdiag::to_sarif(r);
  return 0;
}
