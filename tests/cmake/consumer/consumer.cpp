// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Calls one function of every component it was linked with (TDIAG_CONSUMER_HAS_<COMPONENT>), so
// a component whose package target lacks a header path or a link dependency fails here.
#include <tensordiag/core/report.hpp>
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/core/version.hpp>
#if defined(TDIAG_CONSUMER_HAS_ASSERTIONS)
#  include <tensordiag/assertions/cpu_backend.hpp>
#endif
#if defined(TDIAG_CONSUMER_HAS_DTENSOR_CHECKS)
#  include <tensordiag/dtensor_checks/mesh.hpp>
#endif
#if defined(TDIAG_CONSUMER_HAS_DTENSOR_GPU)
#  include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>
#endif
#if defined(TDIAG_CONSUMER_HAS_TRACE)
#  include <tensordiag/trace/flight_recorder.hpp>
#  include <tensordiag/trace/units.hpp>
#endif
#if defined(TDIAG_CONSUMER_HAS_CAPTURE)
#  include <tensordiag/capture/capture.hpp>
#endif

#include <cstdio>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += ok ? 0 : 1;
}

} // namespace

int main() {
  tdiag::report r;
  r.metadata = tdiag::make_report_metadata("consumer");
  tdiag::diagnostic d;
  d.code = "TDIAG-TEST-001";
  d.title = "consumer";
  d.message = "the package links";
  d.add_field("index", 17);
  r.diagnostics.push_back(d);
  check(tdiag::parse_report_json(tdiag::to_json(r), "consumer") == r, "core report round trip");
#if defined(TDIAG_CONSUMER_HAS_ASSERTIONS)
  check(tdiag::assertions::cpu_backend::shared()->device_count() == 1, "assertions cpu back-end");
#endif
#if defined(TDIAG_CONSUMER_HAS_DTENSOR_CHECKS)
  check(tdiag::dtensor::parse_mesh("2,4").ndim() == 2, "dtensor_checks mesh");
#endif
#if defined(TDIAG_CONSUMER_HAS_DTENSOR_GPU)
  check(tdiag::dtensor::runtime::gpu_device_count() >= 0, "dtensor_gpu device count");
#endif
#if defined(TDIAG_CONSUMER_HAS_TRACE)
  check(tdiag::trace::format_bytes(1536) == "1.50 KiB", "trace units");
  check(tdiag::trace::fr::parse_dump("", "_dump_3", 3).status ==
            tdiag::trace::fr::dump_status::empty_file,
        "trace flight recorder empty dump");
  check(tdiag::trace::fr::analyze({}).culprits.empty(), "trace flight recorder analyze");
#endif
#if defined(TDIAG_CONSUMER_HAS_CAPTURE)
  check(tdiag::capture::now_ns() > 0, "capture clock");
#endif
  std::printf("tensordiag %s: %d failure(s)\n", TDIAG_VERSION_STRING, failures);
  return failures == 0 ? 0 : 1;
}
