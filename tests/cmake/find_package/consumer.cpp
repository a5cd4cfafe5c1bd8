// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report.hpp>
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/core/version.hpp>

#include <cstdio>

int main() {
  tdiag::report r;
  r.metadata = tdiag::make_report_metadata("consumer");
  tdiag::diagnostic d;
  d.code = "TDIAG-TEST-001";
  d.title = "consumer";
  d.message = "the installed package links";
  d.add_field("index", 17);
  r.diagnostics.push_back(d);
  const auto json = tdiag::to_json(r);
  const auto back = tdiag::parse_report_json(json, "consumer");
  std::printf("tensordiag %s: %s\n", TDIAG_VERSION_STRING,
              back == r ? "round-trip ok" : "MISMATCH");
  return back == r ? 0 : 1;
}
