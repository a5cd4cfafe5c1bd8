// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: the state of one capture session, shared by the CUPTI buffer callbacks, the
// callback-API subscriber, the host-event hooks and the converter thread.
//
// Threads: CUPTI's worker thread (and any thread calling cuptiActivityFlushAll) hands completed
// buffers over and returns at once; application threads append host events under `host_mutex`;
// the converter thread alone runs the cupti_converter and feeds the .tdtrace writer, whose own
// thread does the file I/O.
#pragma once

#include <tensordiag/capture/capture.hpp>
#include <tensordiag/capture/capture_range.hpp>
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <cupti.h>

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tdiag::capture::detail {

struct host_memory {
  trace::memory_record event;
  raw_stack stack;
  std::string tag;
};
struct host_assertion {
  trace::assertion_event event;
  std::string site;
  std::string message;
};
struct host_marker {
  std::int64_t time = 0;
  std::int64_t process = 0;
  std::uint64_t thread = 0;
  std::string name;
};
struct completed_buffer {
  std::uint8_t* data = nullptr;
  std::size_t valid = 0;
};

class session {
public:
  explicit session(const options& opts);
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// The running session, or nullptr. Sessions are never freed (hooks may race with stop()).
  [[nodiscard]] static session* current() noexcept;
  /// The running session, else the last one that ran (for stats after stop()), or nullptr.
  [[nodiscard]] static session* latest() noexcept;
  /// Enables CUPTI and starts the threads; throws tdiag::error on failure.
  void begin();
  /// Forced flush, disables CUPTI, drains, closes the file.
  void end();
  /// Delivers completed buffers and host events to the writer and waits for the file.
  void flush();

  // CUPTI buffer callbacks (static trampolines in session.cpp call these).
  void buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  void buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                        std::size_t valid);

  // Host events (any thread).
  void push_correlation(const correlation_info& info);
  void push_memory(host_memory item);
  void push_assertion(host_assertion item);
  void push_marker(host_marker item);

  [[nodiscard]] const options& opts() const noexcept { return options_; }
  [[nodiscard]] std::uint64_t time_base() const noexcept { return time_base_ns_; }
  [[nodiscard]] stats snapshot() const;
  /// Asks for the launch callbacks (launch ids of the assertion runtime); idempotent, thread-safe.
  void enable_launch_callbacks() noexcept;
  [[nodiscard]] bool subscribed() const noexcept { return subscriber_ != nullptr; }

  // Capture ranges (session_range.cpp). Outside every range no activity kind is enabled and only
  // the callbacks that notice the next range start stay on.
  /// True while records are captured (no ranges, or inside one).
  [[nodiscard]] bool capturing() const noexcept {
    return capturing_.load(std::memory_order_relaxed);
  }
  /// Feeds `event` (a range_gate member call) to the ranges; applies the edge, if any.
  /// Called from CUPTI's callbacks: an allocation failing in the gate (NVTX range names) ends
  /// range tracking with one line instead of taking the program down.
  template <typename Event> void range_event(Event&& event) noexcept {
    std::lock_guard lock(range_mutex_);
    try {
      if (event(gate_))
        apply_range_edge_reporting();
    } catch (const std::exception& e) { // as apply_range_edge_reporting() says its failures
      fmt::print(stderr, "tdiag capture: capture range: {}\n", e.what());
    }
  }
  /// A top-level kernel launch, while a launches:A:B range still lies ahead or is open.
  [[nodiscard]] bool counts_launches() const noexcept {
    return counting_launches_.load(std::memory_order_relaxed);
  }

  std::atomic<std::uint64_t> stacks_captured{0};

private:
  void run_converter() noexcept;
  void convert_buffer(const completed_buffer& b);
  void drain_host();
  void recycle(std::uint8_t* buffer);
  void set_activities(bool on);
  void subscribe();
  // session_range.cpp, under range_mutex_.
  void begin_ranges();
  void apply_range_edge();
  void apply_range_edge_reporting() noexcept;
  void update_callbacks();
  void run_range_timer() noexcept;
  void end_ranges();

  options options_;
  std::uint64_t time_base_ns_ = 0;
  std::unique_ptr<trace::tdtrace_writer> writer_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::string callbacks_status_ = "off";

  // Ranges: the gate, and what is enabled now (guarded by range_mutex_).
  std::mutex range_mutex_;
  std::condition_variable range_timer_wake_;
  range_gate gate_{{}};
  std::atomic<bool> capturing_{false};
  std::atomic<bool> counting_launches_{false};
  std::atomic<bool> launch_ids_wanted_{false};
  bool activities_on_ = false;
  bool launch_callbacks_on_ = false;
  bool missing_reported_ = false;
  bool ranges_closed_ = false;
  std::thread range_timer_;

  // Buffers: completed ones wait here for the converter; spent ones are recycled.
  std::mutex buffer_mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::vector<completed_buffer> completed_;
  std::vector<std::uint8_t*> free_buffers_;
  std::size_t buffers_outstanding_ = 0;
  std::uint64_t work_requested_ = 0; // flush generations, guarded by buffer_mutex_
  std::uint64_t work_done_generation_ = 0;
  bool stopping_ = false;

  std::mutex host_mutex_;
  std::vector<correlation_info> correlations_;
  std::vector<host_memory> memory_;
  std::vector<host_assertion> assertions_;
  std::vector<host_marker> markers_;

  std::atomic<std::uint64_t> buffers_completed_{0};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> kernels_{0};
  std::atomic<std::uint64_t> copies_{0};
  std::atomic<std::uint64_t> api_calls_{0};
  std::atomic<std::uint64_t> memory_events_{0};

  // Converter-thread state.
  std::unique_ptr<cupti_converter> converter_;
  std::uint32_t max_api_correlation_ = 0;
  bool stop_done_ = false;
  std::thread converter_thread_;
};

/// Subscriber callback (callbacks.cpp).
void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data);
/// The launch id the calling thread's next launch callback attaches (callbacks.cpp).
void set_pending_launch_id(std::uint64_t launch_id) noexcept;
/// Enables (or disables) the launch and stream-ordered allocation callbacks on `subscriber`.
void enable_launch_callbacks(CUpti_SubscriberHandle subscriber, bool on = true);
/// The callbacks that notice a range start: profiler start/stop, the NVTX domain.
void enable_range_callbacks(CUpti_SubscriberHandle subscriber, bool profiler_api, bool nvtx);
/// Enables the flush-at-teardown callbacks (context destroy, cudaDeviceReset).
void enable_teardown_callbacks(CUpti_SubscriberHandle subscriber);

/// Throws tdiag::error TDIAG-CAPTURE-001 naming `call` when `result` is not CUPTI_SUCCESS.
void check_cupti(CUptiResult result, const char* call);

/// Current CLOCK_REALTIME in nanoseconds (CUPTI's clock on Linux).
[[nodiscard]] std::uint64_t realtime_ns() noexcept;
/// The kernel's thread id (what CUPTI reports with CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM).
[[nodiscard]] std::uint64_t system_thread_id() noexcept;

} // namespace tdiag::capture::detail
