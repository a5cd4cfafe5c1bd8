// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Lanes: the rows of a timeline. A GPU lane is (device, stream); a host lane is (process,
// thread); a memory lane is one device's allocator (device -1 = host memory). Every event
// record carries the id of its lane, and each event store keeps its records grouped by lane and
// sorted by time within a lane.
#pragma once

#include <tensordiag/trace/string_table.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace tdiag::trace {

using lane_id = std::uint32_t;
/// "No such lane": what lane_table::find() returns for an unknown key.
inline constexpr lane_id no_lane = 0xFFFFFFFFu;

enum class lane_kind : std::uint8_t {
  gpu_stream = 0,    ///< key: device, stream
  host_thread = 1,   ///< key: process, thread
  device_memory = 2, ///< key: device (-1 = host memory), 0
};

struct lane {
  lane_kind kind = lane_kind::host_thread;
  std::int64_t group = 0;     ///< device for gpu_stream / device_memory, process for host_thread
  std::uint64_t id = 0;       ///< stream for gpu_stream, thread for host_thread, 0 for memory
  string_id name = no_string; ///< display name ("stream 7", "python main"); may be no_string
  friend bool operator==(const lane&, const lane&) = default;
};

class lane_table {
public:
  /// The lane with this key, adding it (unnamed) if new. Not thread-safe.
  [[nodiscard]] lane_id intern(lane_kind kind, std::int64_t group, std::uint64_t id);
  [[nodiscard]] lane_id gpu(std::int64_t device, std::uint64_t stream) {
    return intern(lane_kind::gpu_stream, device, stream);
  }
  [[nodiscard]] lane_id host(std::int64_t process, std::uint64_t thread) {
    return intern(lane_kind::host_thread, process, thread);
  }
  [[nodiscard]] lane_id memory(std::int64_t device) {
    return intern(lane_kind::device_memory, device, 0);
  }
  /// The lane with this key, or no_lane.
  [[nodiscard]] lane_id find(lane_kind kind, std::int64_t group, std::uint64_t id) const noexcept {
    auto it = index_.find(std::tuple{kind, group, id});
    return it == index_.end() ? no_lane : it->second;
  }
  [[nodiscard]] lane_id find_gpu(std::int64_t device, std::uint64_t stream) const noexcept {
    return find(lane_kind::gpu_stream, device, stream);
  }
  [[nodiscard]] lane_id find_host(std::int64_t process, std::uint64_t thread) const noexcept {
    return find(lane_kind::host_thread, process, thread);
  }
  [[nodiscard]] lane_id find_memory(std::int64_t device) const noexcept {
    return find(lane_kind::device_memory, device, 0);
  }
  /// Sets the display name of lane `id` (precondition: id < size()).
  void set_name(lane_id id, string_id name) { lanes_[id].name = name; }

  /// Undefined for id >= size().
  [[nodiscard]] const lane& at(lane_id id) const noexcept { return lanes_[id]; }
  [[nodiscard]] std::size_t size() const noexcept { return lanes_.size(); }
  [[nodiscard]] const std::vector<lane>& lanes() const noexcept { return lanes_; }

  friend bool operator==(const lane_table& a, const lane_table& b) { return a.lanes_ == b.lanes_; }

private:
  std::vector<lane> lanes_;
  std::map<std::tuple<lane_kind, std::int64_t, std::uint64_t>, lane_id> index_;
};

} // namespace tdiag::trace
