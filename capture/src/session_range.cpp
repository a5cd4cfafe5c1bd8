// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Capture ranges in the session: range_gate decides, this file maps its edges to CUPTI. Inside a
// range the activity kinds of the options are enabled (and the launch callbacks, for stacks or
// launch ids); outside every range none is, and the subscriber keeps only what notices the next
// start: the profiler start/stop callbacks, the NVTX domain, or the launch callbacks while a
// launches:A:B range lies ahead. Time ranges have a timer thread.
#include <tensordiag/capture/range_spec.hpp>

#include <cupti.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

#include "session.hpp"

namespace tdiag::capture::detail {
namespace {

// CUPTI sees NVTX calls only when NVTX loads it as its injection library; without that variable
// NVTX calls are no-ops to every tool. Set before the application's first NVTX call.
void route_nvtx_to_cupti() {
  if (const char* v = std::getenv("NVTX_INJECTION64_PATH"); v != nullptr && *v != '\0')
    return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) != 0 && info.dli_fname != nullptr)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
  else
    fmt::print(stderr, "tdiag capture: libcupti not found: set NVTX_INJECTION64_PATH to it "
                       "for nvtx: ranges\n");
}

} // namespace

void session::begin_ranges() {
  std::lock_guard lock(range_mutex_);
  gate_ = range_gate(parse_ranges(options_.ranges));
  if (gate_.has_ranges() && subscriber_ == nullptr) {
    diagnostic d;
    d.code = codes::cupti_failed;
    d.title = "capture ranges need CUPTI callbacks";
    d.message =
        fmt::format("capture ranges need the CUPTI callback API, which is {}", callbacks_status_);
    d.hint = "Run without another CUPTI client (Nsight Systems, Kineto), or without ranges.";
    throw tdiag::error(std::move(d));
  }
  if (gate_.watches_nvtx())
    route_nvtx_to_cupti();
  if (subscriber_ != nullptr)
    enable_range_callbacks(subscriber_, gate_.watches_profiler_api(), gate_.watches_nvtx());
  gate_.clock(0);
  apply_range_edge();
  if (gate_.next_clock_edge(0)) // a time range opens or closes later
    range_timer_ = std::thread([this] { run_range_timer(); });
}

void session::apply_range_edge() {
  if (ranges_closed_) // stop() has begun: nothing turns capture on again
    return;
  const bool on = gate_.active();
  if (on != activities_on_) {
    set_activities(on);
    activities_on_ = on;
    capturing_.store(on, std::memory_order_relaxed);
    if (gate_.has_ranges()) {
      push_marker({static_cast<std::int64_t>(realtime_ns() - time_base_ns_),
                   static_cast<std::int64_t>(getpid()), system_thread_id(),
                   on ? "tdiag.capture_range.begin" : "tdiag.capture_range.end"});
    }
  }
  update_callbacks();
}

void session::apply_range_edge_reporting() noexcept {
  try {
    apply_range_edge();
  } catch (const std::exception& e) {
    // On an application thread inside a CUPTI callback: say it, never take the program down.
    fmt::print(stderr, "tdiag capture: capture range: {}\n", e.what());
  }
}

void session::update_callbacks() {
  counting_launches_.store(gate_.watches_launches(), std::memory_order_relaxed);
  if (subscriber_ == nullptr)
    return;
  const bool wanted =
      counting_launches_.load(std::memory_order_relaxed) ||
      (activities_on_ && (options_.stacks || launch_ids_wanted_.load(std::memory_order_relaxed)));
  if (wanted != launch_callbacks_on_) {
    detail::enable_launch_callbacks(subscriber_, wanted);
    launch_callbacks_on_ = wanted;
  }
}

void session::run_range_timer() noexcept {
  std::unique_lock lock(range_mutex_);
  for (;;) {
    const auto now = static_cast<std::int64_t>(realtime_ns() - time_base_ns_);
    if (gate_.clock(now))
      apply_range_edge_reporting();
    const auto next = gate_.next_clock_edge(now);
    if (!next || ranges_closed_)
      return;
    range_timer_wake_.wait_for(lock, std::chrono::nanoseconds(*next - now),
                               [this] { return ranges_closed_; });
    if (ranges_closed_)
      return;
  }
}

void session::end_ranges() {
  {
    std::lock_guard lock(range_mutex_);
    ranges_closed_ = true;
  }
  range_timer_wake_.notify_all();
  if (range_timer_.joinable())
    range_timer_.join();
}

} // namespace tdiag::capture::detail
