// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The launch registry: a lock-free ring of the most recent kernel launches, so that a failure
// record's 64-bit launch id leads back to the kernel, its configuration and the host stack that
// launched it. Writers never wait for each other or for readers.
#pragma once

#include <tensordiag/core/backend.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

namespace tdiag::assertions {

/// Everything known about one launch at the moment it was made. Trivially copyable: it is
/// stored word by word in the ring.
struct launch_info {
  std::uint64_t launch_id = 0;
  const void* kernel = nullptr;      ///< kernel address (host stub on GPUs)
  const char* kernel_name = nullptr; ///< as written at TDIAG_LAUNCH, or nullptr
  const char* file = nullptr;        ///< launch site, static storage
  const char* function = nullptr;
  std::uint32_t line = 0;
  std::int32_t device = 0;
  extent3 grid;
  extent3 block;
  std::uint64_t shared_memory = 0;
  std::uint64_t stream = 0;
  std::uint64_t host_ticks = 0;  ///< the CPU's cycle counter at the launch (see the report)
  std::uint64_t host_thread = 0; ///< small per-process thread number (1, 2, ...)
  const void* backend = nullptr; ///< the tdiag::backend it ran on
  raw_stack stack;               ///< size 0 when stack capture is off
};
static_assert(std::is_trivially_copyable_v<launch_info>);

/// A fixed-capacity ring indexed by launch id (ids start at 1 and never repeat in a process).
/// Thread-safe and lock-free: each slot is a sequence lock over relaxed atomic words.
class launch_registry {
public:
  /// `capacity` launches are kept (rounded up to a power of two, at least 2). Ids start at
  /// `first_id` (at least 1): a registry that replaces another continues its ids, so that a launch
  /// id never names two launches in one process (a graph slot keeps its id for good).
  explicit launch_registry(std::uint32_t capacity, std::uint64_t first_id = 1);
  ~launch_registry();
  launch_registry(const launch_registry&) = delete;
  launch_registry& operator=(const launch_registry&) = delete;

  /// Assigns the next launch id to `info` (overwriting info.launch_id), stores it, returns it.
  std::uint64_t record(launch_info& info) noexcept;
  /// The launch with id `id` if it is still in the ring (not overwritten by a later one).
  [[nodiscard]] std::optional<launch_info> find(std::uint64_t id) const noexcept;
  /// The id the next record() will get.
  [[nodiscard]] std::uint64_t next_id() const noexcept {
    return next_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }

private:
  struct slot;
  std::uint32_t capacity_;
  std::unique_ptr<slot[]> slots_;
  std::atomic<std::uint64_t> next_{1};
};

} // namespace tdiag::assertions
