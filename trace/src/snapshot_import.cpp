// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>

#include "saturate.hpp"

namespace tdiag::trace {
namespace {

std::optional<memory_action> parse_action(std::string_view a) noexcept {
  if (a == "alloc")
    return memory_action::alloc;
  if (a == "free_requested")
    return memory_action::free_requested;
  if (a == "free_completed")
    return memory_action::free_completed;
  if (a == "segment_alloc")
    return memory_action::segment_alloc;
  if (a == "segment_free")
    return memory_action::segment_free;
  if (a == "segment_map")
    return memory_action::segment_map;
  if (a == "segment_unmap")
    return memory_action::segment_unmap;
  if (a == "oom")
    return memory_action::oom;
  if (a == "snapshot")
    return memory_action::snapshot;
  // Legacy single-step free: the block is reusable at once.
  if (a == "free")
    return memory_action::free_completed;
  return std::nullopt;
}

std::optional<block_state> parse_block_state(std::string_view s) noexcept {
  if (s == "active_allocated")
    return block_state::active_allocated;
  // The docstring says active_awaiting_free; the C++ writes active_pending_free.
  if (s == "active_pending_free" || s == "active_awaiting_free")
    return block_state::active_pending_free;
  if (s == "inactive")
    return block_state::inactive;
  return std::nullopt;
}

class snapshot_builder {
public:
  snapshot_builder(const pickle_document& doc, load_result& out)
      : doc_(doc), out_(out), t_(out.trace) {}

  void build() {
    const auto root = doc_.root();
    if (!root.is_dict())
      fail(root, codes::not_a_snapshot,
           fmt::format("the pickle holds a {}, not a snapshot dict", to_string(root.kind())));
    const auto segments = root.find("segments");
    const auto traces = root.find("device_traces");
    if (!segments.valid() && !traces.valid())
      fail(root, codes::not_a_snapshot,
           "the dict has neither 'segments' nor 'device_traces': not a PyTorch memory snapshot");
    t_.metadata.format = "torch-snapshot";
    t_.metadata.source_path = doc_.source_name();
    check_budget(traces, segments);
    find_origin(root);
    if (traces.valid())
      read_traces(traces);
    read_segments(segments);
    read_annotations(root.find("external_annotations"));
    read_settings(root.find("allocator_settings"));
  }

private:
  [[noreturn]] void fail(pickle_value where, std::string_view code, std::string message) const {
    diagnostic d;
    d.code = code;
    d.title = "malformed memory snapshot";
    d.message = fmt::format("{}: byte offset {}: {}", doc_.source_name(), where.offset(), message);
    d.add_field("file", doc_.source_name());
    d.add_field("offset", static_cast<std::int64_t>(where.offset()));
    d.hint = "expected the dict written by torch.cuda.memory._dump_snapshot()";
    throw input_error(std::move(d));
  }

  // "is missing", "is a dict", "is an int wider than 64 bits": what was found instead.
  static std::string found_text(pickle_value v) {
    if (!v.valid())
      return "is missing";
    if (v.kind() == pickle_kind::big_integer)
      return "is an int wider than 64 bits";
    const auto kind = to_string(v.kind());
    const bool vowel = kind.find_first_of("aeiouAEIOU") == 0;
    return fmt::format("is {} {}", vowel ? "an" : "a", kind);
  }

  void expect(pickle_value v, bool ok, std::string_view what) const { expect(v, v, ok, what); }
  // `where` locates the message (the dict when a key is missing), `found` is what was there.
  void expect(pickle_value where, pickle_value found, bool ok, std::string_view what) const {
    if (!ok)
      fail(where.valid() ? where : found, codes::malformed_snapshot,
           fmt::format("{} {}", what, found_text(found)));
  }

  pickle_value sequence(pickle_value v, std::string_view what) const {
    expect(v, v.valid() && v.is_sequence(), fmt::format("'{}' (expected a list)", what));
    return v;
  }

  // An integer field; unsigned 64-bit values (addresses, stream handles) are accepted too.
  std::uint64_t u64(pickle_value dict, std::string_view key,
                    std::optional<std::uint64_t> fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() && fallback)
      return *fallback;
    if (auto u = v.as_uint())
      return *u;
    if (auto i = v.as_int())
      return static_cast<std::uint64_t>(*i);
    expect(v.valid() ? v : dict, v, false, fmt::format("'{}' (expected an int)", key));
    return 0;
  }
  std::int64_t i64(pickle_value dict, std::string_view key,
                   std::optional<std::int64_t> fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() && fallback)
      return *fallback;
    if (auto i = v.as_int())
      return *i;
    if (auto d = v.as_double())
      return detail::to_i64(*d);
    expect(v.valid() ? v : dict, v, false, fmt::format("'{}' (expected an int)", key));
    return 0;
  }
  std::string_view str(pickle_value dict, std::string_view key,
                       std::string_view fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() || v.is_none())
      return fallback;
    if (auto s = v.as_string())
      return *s;
    expect(v, false, fmt::format("'{}' (expected a str)", key));
    return {};
  }

  // The memo lets a small file list one object a billion times: what the lists expand to is
  // counted (in time linear in the file) before anything walks or allocates it.
  void check_budget(pickle_value traces, pickle_value segments) const {
    std::uint64_t entries = 0, blocks = 0;
    for (std::size_t d = 0; traces.is_sequence() && d < traces.size(); ++d)
      if (const auto events = traces.at(d); events.is_sequence())
        entries += events.size();
    check_memory_budget(doc_.source_name(),
                        fmt::format("device_traces listing {} entries", entries),
                        entries * sizeof(memory_event));
    for (std::size_t i = 0; segments.is_sequence() && i < segments.size(); ++i)
      if (const auto b = segments.at(i).find("blocks"); b.is_sequence())
        blocks += b.size();
    const std::uint64_t n = segments.is_sequence() ? segments.size() : 0;
    check_memory_budget(doc_.source_name(), fmt::format("{} segments listing {} blocks", n, blocks),
                        n * sizeof(segment) + blocks * sizeof(block));
  }

  // Snapshot times are Unix-epoch microseconds; the trace axis starts at the earliest event.
  void find_origin(pickle_value root) {
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    const auto traces = root.find("device_traces");
    if (traces.valid() && traces.is_sequence()) {
      for (std::size_t d = 0; d < traces.size(); ++d) {
        const auto events = traces.at(d);
        if (!events.is_sequence())
          continue;
        for (std::size_t i = 0; i < events.size(); ++i) {
          const auto tv = events.at(i).find("time_us");
          if (auto us = tv.as_int())
            first = std::min(first, *us);
        }
      }
    }
    origin_us_ = first == std::numeric_limits<std::int64_t>::max() ? 0 : first;
    t_.metadata.time_origin_ns =
        detail::clamp_i64(static_cast<detail::wide_int>(origin_us_) * 1000);
  }
  std::int64_t to_ns(std::int64_t us) const {
    return detail::clamp_time((static_cast<detail::wide_int>(us) - origin_us_) * 1000);
  }

  frame_id frame_of(pickle_value f) {
    if (auto it = frame_cache_.find(f.id()); it != frame_cache_.end())
      return it->second;
    expect(f, f.is_dict(), "a frame (expected a dict)");
    frame fr;
    fr.function = t_.strings.intern(str(f, "name"));
    fr.file = t_.strings.intern(str(f, "filename"));
    const auto line = i64(f, "line", 0);
    fr.line = line > 0 && line < std::numeric_limits<std::uint32_t>::max()
                  ? static_cast<std::uint32_t>(line)
                  : 0;
    const auto id = t_.stacks.intern_frame(fr);
    frame_cache_.emplace(f.id(), id);
    return id;
  }

  // Snapshots list frames innermost first, as stack_table does. Shared traceback lists (the
  // pickle memo) are interned once.
  stack_id stack_of(pickle_value frames) {
    if (!frames.valid() || frames.is_none())
      return no_stack;
    if (auto it = stack_cache_.find(frames.id()); it != stack_cache_.end())
      return it->second;
    sequence(frames, "frames");
    scratch_.clear();
    for (std::size_t i = 0; i < frames.size(); ++i)
      scratch_.push_back(frame_of(frames.at(i)));
    const auto id = t_.stacks.intern_stack(scratch_);
    stack_cache_.emplace(frames.id(), id);
    return id;
  }

  void read_traces(pickle_value traces) {
    sequence(traces, "device_traces");
    std::uint64_t total = 0;
    for (std::size_t d = 0; d < traces.size(); ++d)
      total += sequence(traces.at(d), "device_traces[i]").size();
    t_.memory.reserve(static_cast<std::size_t>(total));
    std::map<std::string, std::size_t> unknown;
    for (std::size_t d = 0; d < traces.size(); ++d) {
      const auto events = traces.at(d);
      const auto device = static_cast<std::int32_t>(d);
      const auto lane = t_.lanes.memory(device);
      for (std::size_t i = 0; i < events.size(); ++i) {
        const auto e = events.at(i);
        expect(e, e.is_dict(), "a trace entry (expected a dict)");
        const auto action_text = str(e, "action");
        const auto action = parse_action(action_text);
        const auto time = to_ns(i64(e, "time_us", origin_us_));
        if (!action) {
          // annotate, user_defined and future actions: keep them visible as markers.
          ++unknown[std::string(action_text)];
          marker_event m;
          m.time = time;
          m.lane = lane;
          m.name = t_.strings.intern(action_text);
          m.category = t_.strings.intern("snapshot-action");
          t_.markers.push_back(m);
          continue;
        }
        memory_event m;
        m.time = time;
        m.lane = lane;
        m.action = *action;
        m.device = device;
        m.size = u64(e, "size", 0);
        m.stream = u64(e, "stream", 0);
        if (*action == memory_action::oom)
          m.device_free = u64(e, "device_free", 0);
        else
          m.address = u64(e, "addr", 0);
        m.stack = stack_of(e.find("frames"));
        if (const auto meta = str(e, "user_metadata"); !meta.empty())
          m.user_metadata = t_.strings.intern(meta);
        t_.memory.push_back(m);
        last_time_ = std::max(last_time_, time);
      }
    }
    for (const auto& [name, count] : unknown) {
      diagnostic w;
      w.level = severity::note;
      w.code = codes::snapshot_marker;
      w.title = "snapshot action kept as a marker";
      w.message = fmt::format("{}: {} '{}' trace entr{} kept as markers (no allocator effect)",
                              doc_.source_name(), count, name, count == 1 ? "y" : "ies");
      out_.warnings.push_back(std::move(w));
    }
  }

  void read_segments(pickle_value segments) {
    if (!segments.valid())
      return;
    sequence(segments, "segments");
    allocator_state state;
    state.time = last_time_;
    state.segments.reserve(segments.size());
    for (std::size_t i = 0; i < segments.size(); ++i) {
      const auto s = segments.at(i);
      expect(s, s.is_dict(), "a segment (expected a dict)");
      segment seg;
      seg.device = static_cast<std::int32_t>(i64(s, "device", 0));
      seg.address = u64(s, "address");
      seg.total_size = u64(s, "total_size");
      seg.stream = u64(s, "stream", 0);
      const auto type = str(s, "segment_type");
      seg.type = type == "small"   ? segment_type::small
                 : type == "large" ? segment_type::large
                                   : segment_type::unknown;
      if (auto e = s.find("is_expandable").as_bool())
        seg.is_expandable = *e;
      if (const auto pool = s.find("segment_pool_id"); pool.is_sequence() && pool.size() == 2) {
        const auto hi = pool.at(0).as_uint().value_or(0), lo = pool.at(1).as_uint().value_or(0);
        seg.pool = (hi << 32) | (lo & 0xffffffffu);
      }
      seg.stack = stack_of(s.find("frames"));
      const auto blocks = s.find("blocks");
      if (blocks.valid()) {
        sequence(blocks, "blocks");
        seg.blocks.reserve(blocks.size());
        for (std::size_t j = 0; j < blocks.size(); ++j)
          seg.blocks.push_back(read_block(blocks.at(j)));
      }
      state.segments.push_back(std::move(seg));
    }
    state.sort();
    t_.final_allocator_state = std::move(state);
  }

  block read_block(pickle_value b) {
    expect(b, b.is_dict(), "a block (expected a dict)");
    block blk;
    blk.address = u64(b, "address");
    blk.size = u64(b, "size");
    const auto state_text = str(b, "state");
    const auto state = parse_block_state(state_text);
    if (!state)
      fail(b.find("state"), codes::unknown_block_state,
           fmt::format("unknown block state '{}'", state_text));
    blk.state = *state;
    if (const auto frames = b.find("frames"); frames.valid()) {
      blk.stack = stack_of(frames);
      blk.requested_size = u64(b, "requested_size", blk.size);
    } else if (const auto history = b.find("history");
               history.is_sequence() && history.size() > 0) {
      // Legacy layout: [{addr, real_size, frames}], the last entry is the live allocation.
      const auto last = history.at(history.size() - 1);
      blk.stack = stack_of(last.find("frames"));
      blk.requested_size = u64(last, "real_size", blk.size);
    } else {
      blk.requested_size = u64(b, "requested_size", blk.size);
    }
    return blk;
  }

  void read_annotations(pickle_value annotations) {
    if (!annotations.valid() || !annotations.is_sequence())
      return;
    std::map<std::pair<std::int64_t, std::string_view>, std::vector<std::int64_t>> open;
    for (std::size_t i = 0; i < annotations.size(); ++i) {
      const auto a = annotations.at(i);
      if (!a.is_dict())
        continue;
      const auto stage = str(a, "stage");
      const auto name = str(a, "name");
      const auto device = i64(a, "device", 0);
      const auto time = to_ns(i64(a, "time_us", origin_us_));
      auto& starts = open[{device, name}];
      if (stage == "START") {
        starts.push_back(time);
      } else if (stage == "END" && !starts.empty()) {
        range_event r;
        r.start = starts.back();
        r.end = std::max(time, r.start);
        starts.pop_back();
        r.lane = t_.lanes.memory(static_cast<std::int32_t>(device));
        r.name = t_.strings.intern(name);
        r.kind = range_kind::external;
        t_.ranges.push_back(r);
      }
    }
  }

  void read_settings(pickle_value settings) {
    if (!settings.valid() || !settings.is_dict())
      return;
    for (std::size_t i = 0; i < settings.size(); ++i) {
      const auto k = settings.key(i).as_string();
      if (!k)
        continue;
      const auto v = settings.value(i);
      std::string text;
      if (auto s = v.as_string())
        text = std::string(*s);
      else if (auto b = v.as_bool())
        text = *b ? "true" : "false";
      else if (auto n = v.as_int())
        text = fmt::format("{}", *n);
      else if (auto x = v.as_double())
        text = fmt::format("{}", *x);
      else
        continue; // nested dicts (roundup_power2_divisions) are not worth a property each
      t_.metadata.properties.emplace_back(fmt::format("allocator.{}", *k), std::move(text));
    }
  }

  const pickle_document& doc_;
  load_result& out_;
  trace& t_;
  std::int64_t origin_us_ = 0;
  std::int64_t last_time_ = 0;
  std::unordered_map<std::uint32_t, frame_id> frame_cache_;
  std::unordered_map<std::uint32_t, stack_id> stack_cache_;
  std::vector<frame_id> scratch_;
};

} // namespace

bool sniff_snapshot(std::span<const std::byte> head) noexcept {
  return head.size() >= 2 && head[0] == std::byte{0x80} && head[1] >= std::byte{2} &&
         head[1] <= std::byte{5};
}

load_result import_snapshot(std::string bytes, std::string_view source_name,
                            const load_options& options, const pickle_limits& limits) {
  const auto doc = pickle_document::parse(std::move(bytes), source_name, limits);
  load_result out;
  snapshot_builder(doc, out).build();
  if (options.finalize)
    out.trace.finalize();
  return out;
}

load_result import_snapshot_file(const std::filesystem::path& path, const load_options& options) {
  input_file in(path);
  return import_snapshot(in.read_all(), in.name(), options);
}

importer snapshot_importer() {
  return {"torch-snapshot", [](std::span<const std::byte> head) { return sniff_snapshot(head); },
          [](const std::filesystem::path& path, const load_options& options) {
            return import_snapshot_file(path, options);
          }};
}

} // namespace tdiag::trace
