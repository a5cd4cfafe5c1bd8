// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Test helpers for comparing traces whose interning ids differ (after a file round trip or a
// merge): every event is rendered with its names and lane spelled out, and the multiset compared.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/detail/record_ids.hpp>
#include <tensordiag/trace/trace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace tdiag::trace::test {

inline std::string describe_lane(const trace& t, lane_id id) {
  if (id >= t.lanes.size())
    return "?";
  const auto& l = t.lanes.at(id);
  return fmt::format("{}:{}:{}:{}", static_cast<int>(l.kind), l.group, l.id, t.name(l.name));
}

inline std::string describe_stack(const trace& t, stack_id id) {
  std::string out;
  for (frame_id f : t.stacks.stack(id)) {
    const auto& fr = t.stacks.frame_at(f);
    out += fmt::format("{}@{}:{};", t.name(fr.function), t.name(fr.file), fr.line);
  }
  return out;
}

template <typename Record>
void describe_store(const trace& t, const event_store<Record>& store, const char* kind,
                    std::vector<std::string>& out) {
  for (const Record& e : store.all()) {
    // A memory event with its detail (its index into the trace's details is no content).
    auto r = [&] {
      if constexpr (std::is_same_v<Record, memory_event>)
        return t.record_of(e);
      else
        return e;
    }();
    std::string ids;
    detail::visit_ids(
        r,
        [&](string_id& id) {
          ids += fmt::format("s[{}]", t.name(id));
          id = 0;
        },
        [&](stack_id& id) {
          ids += fmt::format("k[{}]", describe_stack(t, id));
          id = 0;
        },
        [&](lane_id& id) {
          ids += fmt::format("l[{}]", describe_lane(t, id));
          id = 0;
        });
    std::string bytes(sizeof(r), '\0');
    std::memcpy(bytes.data(), &r, sizeof(r));
    std::string hex;
    for (unsigned char c : bytes)
      hex += fmt::format("{:02x}", c);
    out.push_back(fmt::format("{}|{}|{}", kind, ids, hex));
  }
}

/// The memory events of `t` with their details, in store order.
inline std::vector<memory_record> memory_records(const trace& t) {
  std::vector<memory_record> out;
  for (const auto& e : t.memory.all())
    out.push_back(t.record_of(e));
  return out;
}

/// Every event of `t`, id-free, sorted.
inline std::vector<std::string> canonical_events(const trace& t) {
  std::vector<std::string> out;
  describe_store(t, t.kernels, "kernel", out);
  describe_store(t, t.copies, "copy", out);
  describe_store(t, t.api_calls, "api", out);
  describe_store(t, t.ranges, "range", out);
  describe_store(t, t.markers, "marker", out);
  describe_store(t, t.memory, "memory", out);
  describe_store(t, t.assertions, "assertion", out);
  describe_store(t, t.flows, "flow", out);
  describe_store(t, t.counters, "counter", out);
  std::sort(out.begin(), out.end());
  return out;
}

/// The allocator state with stacks spelled out.
inline std::vector<std::string> canonical_state(const trace& t) {
  std::vector<std::string> out;
  if (!t.final_allocator_state)
    return out;
  out.push_back(fmt::format("time {}", t.final_allocator_state->time));
  for (const auto& s : t.final_allocator_state->segments) {
    out.push_back(fmt::format("seg {} {} {} {} {} {} {} {}", s.device, s.address, s.total_size,
                              s.stream, s.pool, static_cast<int>(s.type), s.is_expandable,
                              describe_stack(t, s.stack)));
    for (const auto& b : s.blocks)
      out.push_back(fmt::format("blk {} {} {} {} {}", b.address, b.size, b.requested_size,
                                static_cast<int>(b.state), describe_stack(t, b.stack)));
  }
  return out;
}

inline std::vector<char> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& p, const char* data, std::size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(n));
}

/// A file path under the test binary folder, private to this process (CTest runs each test in
/// its own process, in parallel).
inline std::filesystem::path temp_path(const std::string& name) {
  auto dir = std::filesystem::path(TDIAG_BINARY_DIR) / "tests" / "trace" / "tmp" /
             std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir / name;
}

inline bool has_code(const std::vector<diagnostic>& ds, std::string_view code) {
  return std::any_of(ds.begin(), ds.end(), [&](const diagnostic& d) { return d.code == code; });
}

/// Text (a hand-written trace) as the bytes an importer reads.
inline std::span<const std::byte> as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

/// A snapshot of a 2 MiB segment and a 1 MiB allocation its events leave open, whose dump holds
/// that allocation (`dump_holds_it`) or nothing: {'segments': [...], 'device_traces':
/// [[segment_alloc 2 MiB, alloc 1 MiB]]}, as pickled.
inline trace snapshot_with_open_allocation(bool dump_holds_it) {
  trace t;
  const auto lane = t.lanes.memory(0);
  memory_event seg;
  seg.action = memory_action::segment_alloc;
  seg.lane = lane;
  seg.address = 1 << 21;
  seg.size = 2 << 20;
  memory_event alloc = seg;
  alloc.action = memory_action::alloc;
  alloc.size = 1 << 20;
  alloc.time = 1;
  t.memory.push_back(seg);
  t.memory.push_back(alloc);
  allocator_state state;
  if (dump_holds_it) {
    segment s;
    s.address = seg.address;
    s.total_size = seg.size;
    s.blocks = {{seg.address, 1 << 20, 1 << 20, block_state::active_allocated, no_stack},
                {seg.address + (1 << 20), 1 << 20, 0, block_state::inactive, no_stack}};
    state.segments.push_back(s);
  }
  t.final_allocator_state = state;
  t.finalize();
  return t;
}

} // namespace tdiag::trace::test
