// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The capture-range state machine: fed the events that open and close ranges (profiler start and
// stop, NVTX pushes and pops, kernel launches, the clock), it says when capture turns on or off
// (on while any range is open) and which events it still needs to watch. Plain C++, not
// thread-safe (the session serializes calls); the session maps its answers to CUPTI: activity
// kinds enabled or disabled, callbacks subscribed or not.
#pragma once

#include <tensordiag/capture/range_spec.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tdiag::capture {

class range_gate {
public:
  /// At most 64 ranges. No ranges: always on.
  explicit range_gate(std::vector<range_spec> ranges);

  /// Capture is on: no ranges, or at least one open.
  [[nodiscard]] bool active() const noexcept { return ranges_.empty() || open_ != 0; }
  [[nodiscard]] bool has_ranges() const noexcept { return !ranges_.empty(); }
  /// How many times capture turned on.
  [[nodiscard]] std::uint64_t times_opened() const noexcept { return opened_; }

  // Events. Each returns true when active() changed.
  bool profiler_start() { return set_profiler(true); }
  bool profiler_stop() { return set_profiler(false); }
  /// `stack` keys one NVTX push/pop stack: a thread (and domain).
  bool nvtx_push(std::uint64_t stack, std::string_view name);
  bool nvtx_pop(std::uint64_t stack);
  bool nvtx_start(std::uint64_t id, std::string_view name);
  bool nvtx_end(std::uint64_t id);
  /// A top-level kernel launch of the process returned (launch numbers count from 0). A
  /// launches:A:B range is open from the return of launch A-1 (from the start when A is 0) to the
  /// return of launch B-1, so exactly launches A to B-1 run while it is open.
  bool launch();
  /// `now_ns` since capture started.
  bool clock(std::int64_t now_ns);

  // What must stay watched to notice the next edge.
  [[nodiscard]] bool watches_profiler_api() const noexcept { return any(range_kind::profiler_api); }
  [[nodiscard]] bool watches_nvtx() const noexcept { return any(range_kind::nvtx); }
  /// False once every launches range is behind: the launch callbacks can go.
  [[nodiscard]] bool watches_launches() const noexcept;
  /// The next time (since start) a time range opens or closes, if any is ahead of `now_ns`.
  [[nodiscard]] std::optional<std::int64_t> next_clock_edge(std::int64_t now_ns) const noexcept;

private:
  [[nodiscard]] bool any(range_kind kind) const noexcept;
  // Sets range i open or closed; true when active() changed.
  bool set(std::size_t i, bool open);
  bool set_profiler(bool open);
  // The nvtx ranges (as a bit mask) whose name is `name`.
  [[nodiscard]] std::uint64_t nvtx_matches(std::string_view name) const noexcept;
  bool nvtx_open(std::uint64_t mask);
  bool nvtx_close(std::uint64_t mask);

  std::vector<range_spec> ranges_;
  std::uint64_t open_ = 0; // bit i: range i is open
  std::uint64_t opened_ = 0;
  std::uint64_t launches_ = 0;
  std::vector<std::uint32_t> nvtx_depth_; // open matching NVTX ranges per range
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> push_stacks_; // masks
  std::unordered_map<std::uint64_t, std::uint64_t> started_;                  // id -> mask
};

} // namespace tdiag::capture
