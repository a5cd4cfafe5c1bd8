// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The host runtime of device assertions: configuration (environment or code), checking for
// failures, acknowledging them, and turning them into reports. Thread-safe throughout.
#pragma once

#include <tensordiag/assertions/launch_registry.hpp>
#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/backend.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tdiag {

/// A device assertion failed. report() holds one diagnostic per failing site (TDIAG-DSA-001) with
/// the first failure's details, exact counts, the launch and its host stack.
class device_assertion_error : public error {
public:
  using error::error;
};

/// Cheap check for new failures on every device in use: one load per device when there are none.
/// On new failures it builds the report, acknowledges them and throws device_assertion_error,
/// or calls the failure handler if one is set. Does not synchronize.
void check();

/// Waits for `stream` (nullptr: the current device) on the active back-end, then check().
void synchronize_and_check(stream_handle stream = nullptr);

/// The failures not yet acknowledged, as a report, and acknowledges them; std::nullopt when there
/// are none. Never throws device_assertion_error.
[[nodiscard]] std::optional<report> take_failures();

} // namespace tdiag

namespace tdiag::assertions {

/// Every knob of the runtime; from_environment() reads the TDIAG_* variables.
/// How launches made without tensordiag (<<<>>>, cudaLaunchKernel, a library's launcher, a graph
/// launch) are attributed. none: their failures name the kernel, site, values, block and thread;
/// cupti: a CUPTI callback also registers each one (grid, stream, host thread, launch-site
/// stack), at CUPTI's cost per launch (docs/assertions.md, "Plain launches").
enum class launch_binding : std::uint8_t { none, cupti };

struct runtime_config {
  bool enabled = true;                    ///< TDIAG_ASSERTIONS=0|1
  policy failure_policy = policy::record; ///< TDIAG_ASSERT_POLICY=record|trap
  std::uint32_t records = 64;             ///< TDIAG_ASSERT_RECORDS: detailed records per device
  std::uint32_t sites = 256;              ///< TDIAG_ASSERT_SITES: exact per-site counters
  std::uint32_t launches = 4096;          ///< TDIAG_LAUNCH_RECORDS: launch registry size
  bool capture_stacks = true;             ///< TDIAG_LAUNCH_STACKS=0|1
  std::uint32_t watchdog_ms = 0;          ///< TDIAG_WATCHDOG_MS; 0 = no watchdog
  std::string report_path;                ///< TDIAG_REPORT: also write JSON here
  report_format stderr_format = report_format::text; ///< TDIAG_REPORT_FORMAT
  bool print = true; ///< print reports to stderr (TDIAG_REPORT_FORMAT=none turns it off)
  launch_binding bind = launch_binding::none; ///< TDIAG_BIND=none|cupti

  /// Reads the environment; an unparsable value throws tdiag::error naming the variable.
  [[nodiscard]] static runtime_config from_environment();
};

/// Replaces the configuration: drops every failure buffer (unreported failures are reported
/// first, as at exit) and the launch registry, and restarts the watchdog as configured. Call it
/// while no kernel runs.
void configure(const runtime_config& config);
[[nodiscard]] runtime_config configuration();

/// Exact counts of failures not yet acknowledged, over every device in use.
struct failure_totals {
  std::uint64_t total = 0;     ///< failures recorded on devices
  std::uint64_t records = 0;   ///< of which have a detailed record ready to read
  std::uint64_t dropped = 0;   ///< of which found the record ring full (counted, not detailed)
  std::uint64_t in_flight = 0; ///< claimed but not yet published
};
[[nodiscard]] failure_totals pending();

/// One failure record with what the host knows about its launch.
struct failure_event {
  std::string backend;
  int device = 0;
  std::uint64_t claim = 0; ///< position in the device's failure sequence
  failure_record record{};
  std::optional<launch_info> launch; ///< nullopt when unregistered or overwritten
};

/// Every detailed record not yet acknowledged, in claim order per device, and acknowledges them
/// (as take_failures() does; counts of dropped records are acknowledged too).
[[nodiscard]] std::vector<failure_event> take_failure_events();

/// Called instead of throwing when failures are found (by check(), synchronize_and_check(), a
/// trapped launch or the watchdog); may be called from the watchdog thread. Empty: throw.
using failure_handler = std::function<void(const report&)>;
void set_failure_handler(failure_handler handler);

/// The launch registry of this process.
[[nodiscard]] launch_registry& launches();

/// Starts (or restarts with a new period) the watchdog thread that polls the failure counters and
/// reports while kernels still run; stop_watchdog() joins it.
void start_watchdog(std::chrono::milliseconds period);
void stop_watchdog();

} // namespace tdiag::assertions
