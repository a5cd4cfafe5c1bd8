// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal state of the assertions runtime, shared by runtime.cpp, failure_reader.cpp and
// report_builder.cpp. Not API.
#pragma once

#include <tensordiag/assertions/runtime.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tdiag::assertions::detail {

/// One device of one back-end in use: its failure buffer and what the host already took from it.
struct device_state {
  std::shared_ptr<backend> owner;
  int device = 0;
  device_properties properties;
  mapped_buffer buffer;
  std::uint32_t record_capacity = 0;
  std::uint32_t site_capacity = 0;
  std::size_t bound_modules = 0; // registered GPU modules when the buffer was last bound

  std::mutex mutex;                           // serializes readers (check, watchdog, exit)
  std::atomic<std::uint64_t> seen_claimed{0}; // `claimed` when failures were last taken
  std::uint64_t acked_dropped = 0;
  std::uint64_t acked_overflow = 0;
  std::map<std::uint64_t, std::uint64_t> acked_site_counts;
  std::set<std::uint64_t> taken_beyond_ack; // published records past an in-flight one, taken
  std::uint64_t watchdog_printed = 0;       // `claimed` the watchdog last printed

  // Only for a module's fallback storage (runtime_state::fallbacks), under fallback_mutex:
  const char* module_file = nullptr;
  int fallback_reads = 0; // checks that still read it: -1 every one (unbound), 0 none
};

/// A failure record with the claim index it was published under.
struct taken_record {
  std::uint64_t claim = 0;
  failure_record record{};
};

/// What one read of a device's buffer found (all counts since the last acknowledgement).
struct device_failures {
  device_state* state = nullptr;
  std::uint64_t total = 0;
  std::uint64_t dropped = 0;
  std::uint64_t overflow = 0;
  std::uint64_t in_flight = 0;
  std::map<std::uint64_t, std::uint64_t> site_counts; // descriptor address -> hits
  std::vector<taken_record> records;                  // in claim order
  std::vector<std::string> notes;                     // said in the report's first diagnostic
};

inline constexpr std::size_t max_device_states = 64;

/// A launch captured into a graph, with the capture it belonged to. Its graph slot keeps its
/// launch id for the life of the process, so the launch is kept as long: the ring would lose it
/// after TDIAG_LAUNCH_RECORDS later launches, and configure() starts a new ring.
struct graph_launch {
  launch_info info;
  std::uint64_t capture_id = 0; ///< the runtime's id of the capture sequence (unique per process)
  const void* graph = nullptr;  ///< the graph being captured into (cudaGraph_t / hipGraph_t)
};

struct runtime_state {
  std::mutex mutex; // configuration, device creation, backend cache
  runtime_config config;
  std::unique_ptr<launch_registry> registry;
  std::array<std::atomic<device_state*>, max_device_states> devices{};
  std::atomic<std::size_t> device_count{0};
  std::vector<std::unique_ptr<device_state>> owned; // kept alive for the process (see configure)
  std::vector<std::unique_ptr<launch_registry>> retired_registries;

  std::atomic<std::uint64_t> backend_generation{0};
  std::shared_ptr<backend> backend_cache;
  std::atomic<backend*> backend_fast{nullptr};

  std::mutex fallback_mutex;
  std::vector<std::unique_ptr<device_state>> fallbacks; // per (module, device); never freed
  std::atomic<std::size_t> watched_fallbacks{0};

  std::mutex graph_mutex;
  std::map<std::uint64_t, graph_launch> graph_launches; // by launch id; 32 graph slots a device

  std::mutex handler_mutex;
  failure_handler handler;

  std::mutex watchdog_mutex;
  std::condition_variable watchdog_wake;
  std::thread watchdog;
  bool watchdog_stop = false;
};

/// This host thread's small number (1, 2, ... in the order threads first launch).
[[nodiscard]] std::uint64_t small_thread_number() noexcept;

/// The host shadows of one GPU module's `device_buffer` and `fallback_storage` (see assert.h).
struct buffer_slot {
  const void* host_shadow = nullptr;
  const void* fallback_shadow = nullptr;
  const char* file = nullptr;
};
struct slot_registry {
  std::mutex mutex;
  std::vector<buffer_slot> slots;
  std::atomic<std::size_t> count{0}; // slots.size(), readable on a launch without the lock
};
[[nodiscard]] slot_registry& buffer_slot_registry();
/// Every module registered so far; GPU back-ends set each one when binding a buffer.
[[nodiscard]] std::vector<buffer_slot> registered_buffer_slots();
/// How many there are (a lock-free load: back-ends compare it on every launch).
[[nodiscard]] std::size_t registered_buffer_slot_count() noexcept;

/// A GPU back-end calls this for each registered module (index `module`) whenever it sets that
/// module's buffer pointer on `device` (`bound`: to a buffer; else to nullptr): `fallback` is the
/// device address of the module's fallback storage, which the next checks read.
void watch_module_fallback(backend& be, int device, std::size_t module, void* fallback, bool bound);

/// Appends what the watched fallback storages hold (see watch_module_fallback()).
void collect_fallbacks(runtime_state& st, bool acknowledge, std::vector<device_failures>& all);

/// A GPU back-end calls this when launch `launch_id` (just registered) took a graph slot while
/// being captured into `graph` by capture sequence `capture_id`. Only at capture, never on a
/// replay or an ordinary launch.
void pin_graph_launch(std::uint64_t launch_id, std::uint64_t capture_id, const void* graph);

/// The graph launch pinned under `launch_id`, if any.
[[nodiscard]] std::optional<graph_launch> find_graph_launch(std::uint64_t launch_id);

/// The process-wide state, created (from the environment) on first use; never destroyed.
runtime_state& state();

/// The back-end launches go to (cached until the back-end registry changes).
backend& active_backend(runtime_state& st);

/// Creates the state of `device` on `be` (failure buffer allocated, header written, bound) unless
/// another thread just did; `n` devices were known to the caller. Takes st.mutex.
device_state& create_device(runtime_state& st, backend& be, int device, std::size_t n,
                            const std::shared_ptr<backend>& owner);

/// The state of `device` on `be`, created on first use. Lock-free when it exists (every launch).
inline device_state& device_for(runtime_state& st, backend& be, int device) {
  const std::size_t n = st.device_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    device_state* ds = st.devices[i].load(std::memory_order_acquire);
    if (ds->owner.get() == &be && ds->device == device)
      return *ds;
  }
  return create_device(st, be, device, n, nullptr);
}

/// Reads and acknowledges every new failure and builds the report; std::nullopt when none. With
/// `bind_current`, first gives the active back-end's current device its buffer (a program whose
/// kernels only ran through plain launches so far gets it at its first check).
std::optional<report> take(runtime_state& st, std::string_view reason, bool bind_current);

/// The check at exit (std::atexit): reports what was never checked.
void at_exit() noexcept;

/// Start and stop the watchdog thread; the caller holds st.watchdog_mutex.
void start_watchdog_locked(runtime_state& st, std::chrono::milliseconds period);
void stop_watchdog_locked(runtime_state& st);

/// Reads everything not yet taken from `ds` and, with `acknowledge`, marks it taken.
device_failures read_failures(device_state& ds, bool acknowledge);

/// Turns the failures of every device into a report (one TDIAG-DSA-001 per site).
report build_report(const std::vector<device_failures>& failures, const runtime_config& config,
                    std::string_view reason);

/// Prints, writes TDIAG_REPORT, then calls the handler or throws device_assertion_error.
void deliver(report r, bool may_throw);

} // namespace tdiag::assertions::detail
