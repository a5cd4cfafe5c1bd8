// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <new>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "snapshot_fields.hpp"
#include "snapshot_rows.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace {
namespace {

using detail::for_neighbours;
using detail::max_snapshot_device;
using detail::max_snapshot_end;
using detail::max_snapshot_size;
using detail::parse_block_state;
using detail::snap_value;

class snapshot_builder final : detail::snap_fields {
public:
  explicit snapshot_builder(load_result& out) : out_(out), t_(out.trace), entries_(out.trace) {}

  void attach(const detail::snap_stream& s) {
    s_ = &s;
    stream_ = &s;
    entries_.attach(s);
  }
  /// The sink that turns entries into rows while the pickle streams in.
  detail::snapshot_rows& entries() noexcept { return entries_; }

  /// `sort_state`: sorts the final allocator state (trace::finalize sorts it otherwise).
  void build(bool sort_state) {
    const auto root = s_->root();
    // torch.cuda.memory_snapshot() returns the segments alone, a list (what
    // torch.cuda.memory._snapshot() holds under 'segments'): a dump without a history.
    const bool segment_list =
        root.kind() == pickle_kind::list &&
        (root.size() == 0 || (root.at(0).is_dict() && root.at(0).find("total_size").valid()));
    if (!root.is_dict() && !segment_list)
      fail(root, codes::not_a_snapshot,
           fmt::format("the pickle holds {}, not a snapshot dict or a list of segments",
                       found_text(root).substr(3)));
    const auto segments = segment_list ? root : root.find("segments");
    const auto traces = segment_list ? snap_value{} : root.find("device_traces");
    if (!segments.valid() && !traces.valid())
      fail(root, codes::not_a_snapshot,
           "the dict has neither 'segments' nor 'device_traces': not a PyTorch memory snapshot");
    t_.metadata.format = "torch-snapshot";
    t_.metadata.source_path = s_->source_name();
    check_budget(traces, segments);
    origin_us_ = entries_.origin_us();
    t_.metadata.time_origin_ns =
        detail::clamp_i64(static_cast<detail::wide_int>(origin_us_) * 1000);
    if (traces.valid())
      read_traces(traces);
    read_segments(segments, sort_state);
    read_annotations(root.find("external_annotations"));
    read_settings(root.find("allocator_settings"));
    note_trailing_data();
  }

private:
  // The memo lets a small file list one object a billion times: what the lists expand to is
  // counted (in time linear in the file) before anything walks or allocates it.
  void check_budget(snap_value traces, snap_value segments) const {
    std::uint64_t entries = 0, blocks = 0;
    for (std::size_t d = 0; traces.is_sequence() && d < traces.size(); ++d)
      if (const auto events = traces.at(d); events.is_sequence())
        entries += events.size();
    // Listing each staged row once, in order, needs no more memory (read_traces checks order).
    if (entries != entries_.row_count())
      check_entries(entries);
    for (std::size_t i = 0; segments.is_sequence() && i < segments.size(); ++i)
      if (const auto b = segments.at(i).find("blocks"); b.is_sequence())
        blocks += b.size();
    const std::uint64_t n = segments.is_sequence() ? segments.size() : 0;
    check_memory_budget(s_->source_name(), fmt::format("{} segments listing {} blocks", n, blocks),
                        n * sizeof(segment) + blocks * sizeof(block), over_budget_advice);
  }

  void check_entries(std::uint64_t entries) const {
    check_memory_budget(s_->source_name(), fmt::format("device_traces listing {} entries", entries),
                        entries * sizeof(memory_event), over_budget_advice);
  }

  std::int64_t to_ns(std::int64_t us) const {
    return detail::clamp_time((static_cast<detail::wide_int>(us) - origin_us_) * 1000);
  }

  // Places the staged rows on their devices' lanes: in place when device_traces lists every row
  // once, in order (what torch writes); gathered into a new vector otherwise.
  void read_traces(snap_value traces) {
    sequence(traces, "device_traces");
    auto& rows = entries_.rows();
    std::uint64_t total = 0, expected = 0;
    bool in_place = true;
    // The rows in device_traces order, read once (staging an entry below may grow the stream's
    // storage, so the second pass must not read the entries again: the fuzzer found it reading
    // freed memory); listed only once they are out of order.
    std::vector<std::uint32_t> order;
    for (std::size_t d = 0; d < traces.size(); ++d) {
      const auto events = sequence(traces.at(d), "device_traces[i]");
      total += events.size();
      const bool run = in_place && events.rows_from(expected); // the next rows: taken whole
      for (std::size_t i = 0; !run && i < events.size(); ++i) {
        auto row = events.at(i).row();
        if (!row) {
          const auto e = events.at(i);
          expect(e, e.is_dict(), "a trace entry (expected a dict)");
          row = entries_.entry(e, false);
        }
        if (in_place && *row != expected) {
          // Out of order: from here on each row is listed (those before were 0, 1, ...).
          in_place = false;
          order.resize(expected);
          std::iota(order.begin(), order.end(), 0u);
        }
        ++expected;
        if (!in_place)
          order.push_back(*row);
      }
      expected += run ? events.size() : 0;
    }
    if (in_place && total != rows.size()) {
      in_place = false; // rows listed nowhere (or twice): gather those listed
      order.resize(total);
      std::iota(order.begin(), order.end(), 0u);
    }
    std::vector<memory_event> gathered;
    if (!in_place) {
      check_entries(total);
      gathered.reserve(static_cast<std::size_t>(total));
    }
    std::map<std::string, std::size_t> unknown;
    std::size_t r = 0, w = 0; // in place: read at r, kept rows move down to w <= r
    std::size_t k = 0;        // gathered: the next of `order`
    for (std::size_t d = 0; d < traces.size(); ++d) {
      const auto events = traces.at(d);
      const auto device = static_cast<std::int32_t>(d);
      const auto lane = t_.lanes.memory(device);
      std::int64_t last = std::numeric_limits<std::int64_t>::min(); // the device's latest time
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (!in_place) {
          memory_event m = rows[order[k++]];
          if (place(m, device, lane, last, unknown)) {
            check_event(m, events, d, i);
            gathered.push_back(m);
          }
          continue;
        }
        auto& m = rows[r++];
        if (place(m, device, lane, last, unknown)) {
          check_event(m, events, d, i);
          if (++w != r)
            rows[w - 1] = m;
        }
      }
    }
    if (in_place) {
      rows.resize(w);
      t_.memory.adopt(std::move(rows));
    } else {
      t_.memory.adopt(std::move(gathered));
    }
    rows = {};
    note_times();
    for (const auto& [name, count] : unknown) {
      diagnostic note;
      note.level = severity::note;
      note.code = codes::snapshot_marker;
      note.title = "snapshot action kept as a marker";
      note.message = fmt::format("{}: {} '{}' trace entr{} kept as markers (no allocator effect)",
                                 s_->source_name(), count, name, count == 1 ? "y" : "ies");
      out_.warnings.push_back(std::move(note));
    }
  }

  // Bytes after the pickle's STOP (a second pickle appended, say) are not read, as pickle.load
  // does not read them: said, never dropped silently.
  void note_trailing_data() {
    const auto after = s_->size() - std::min(s_->size(), s_->position());
    if (after == 0)
      return;
    diagnostic note;
    note.level = severity::warning;
    note.code = codes::snapshot_trailing_data;
    note.title = "data after the memory snapshot's pickle";
    note.message = fmt::format("{}: {} byte{} after the pickle's end (byte offset {}) are not read",
                               s_->source_name(), after, after == 1 ? "" : "s", s_->position());
    out_.warnings.push_back(std::move(note));
  }

  // One note for the times place() moved: what a user reads in the timeline is not the file's.
  void note_times() {
    if (time_backwards_ == 0 && time_clamped_ == 0)
      return;
    diagnostic note;
    note.level = severity::warning;
    note.code = codes::snapshot_time_order;
    note.title = "snapshot times out of order or out of range";
    std::vector<std::string> parts;
    if (time_backwards_ > 0)
      parts.push_back(fmt::format("{} trace entr{} with a 'time_us' before the entry listed ahead "
                                  "(kept in the file's order, at that entry's time)",
                                  time_backwards_, time_backwards_ == 1 ? "y" : "ies"));
    if (time_clamped_ > 0)
      parts.push_back(fmt::format("{} trace entr{} with a 'time_us' more than 2^60 ns from the "
                                  "earliest (placed at that distance)",
                                  time_clamped_, time_clamped_ == 1 ? "y" : "ies"));
    note.message = fmt::format("{}: {}", s_->source_name(), fmt::join(parts, "; "));
    out_.warnings.push_back(std::move(note));
  }

  // A staged row on its device's lane with its time on the trace axis; an unknown action
  // becomes a marker (false: not a memory event). A device's entries keep the order torch
  // listed them in, which is the allocator's: an entry whose time runs back before the one
  // listed ahead of it (`last`) takes that time, never a place before it (sorting by time
  // put an allocation before its segment's creation and lost the segment).
  bool place(memory_event& m, std::int32_t device, lane_id lane, std::int64_t& last,
             std::map<std::string, std::size_t>& unknown) {
    const bool timed = (m.reserved0 & detail::row_has_no_time) == 0;
    const auto ns =
        (static_cast<detail::wide_int>(timed ? m.time : origin_us_) - origin_us_) * 1000;
    m.time = detail::clamp_time(ns); // to_ns(), with the unclamped value kept to count a clamp
    if (m.time != ns)
      ++time_clamped_;
    if (m.time < last) {
      time_backwards_ += timed ? 1 : 0;
      m.time = last;
    }
    last = m.time;
    const bool marker = (m.reserved0 & detail::row_is_marker) != 0;
    m.reserved0 = 0;
    m.lane = lane;
    m.device = device;
    if (marker) [[unlikely]] {
      add_marker(m, unknown);
      return false;
    }
    last_time_ = std::max(last_time_, m.time);
    return true;
  }

  // annotate, user_defined and future actions: kept visible as markers.
  [[gnu::cold, gnu::noinline]] void add_marker(const memory_event& m,
                                               std::map<std::string, std::size_t>& unknown) {
    const auto name = t_.detail_of(m).user_metadata;
    ++unknown[std::string(t_.strings.name(name))];
    marker_event mk;
    mk.time = m.time;
    mk.lane = m.lane;
    mk.name = name;
    mk.category = t_.strings.intern("snapshot-action");
    t_.markers.push_back(mk);
  }

  // A memory event's sizes and address, device_traces[d][i] refused with one line when one is
  // out of range. An oom's request may be any size a program can ask for.
  void check_event(const memory_event& m, snap_value events, std::size_t d, std::size_t i) const {
    const auto max_size = m.action == memory_action::oom ? max_snapshot_end : max_snapshot_size;
    const auto device_free = m.detail == 0 ? 0 : t_.detail_of(m).device_free;
    if (in_range(m.address, m.size, max_size) && device_free < max_snapshot_end) [[likely]]
      return;
    refuse_event(m, events, d, i, max_size, device_free);
  }

  [[gnu::cold, gnu::noinline]] void refuse_event(const memory_event& m, snap_value events,
                                                 std::size_t d, std::size_t i,
                                                 std::uint64_t max_size,
                                                 std::uint64_t device_free) const {
    const auto entry = fmt::format("device_traces[{}][{}]", d, i);
    if (device_free >= max_snapshot_end)
      fail(events.at(i), codes::snapshot_out_of_range,
           fmt::format("{}: 'device_free' {} is out of range (expected 0 to 2^63 bytes)", entry,
                       int_text(device_free)));
    check_range(events.at(i), entry, "addr", m.address, "size", m.size, max_size);
  }

  void read_segments(snap_value segments, bool sort_state) {
    if (!segments.valid())
      return;
    sequence(segments, "segments");
    allocator_state state;
    state.time = last_time_;
    state.segments.reserve(segments.size());
    release_blocks_ = blocks_held_once(segments);
    for (std::size_t i = 0; i < segments.size(); ++i) {
      const auto s = segments.at(i);
      expect(s, s.is_dict(), "a segment (expected a dict)");
      segment seg;
      const auto device = i64(s, "device", 0);
      // A device index as torch numbers them (device_traces has one list per device): one
      // beyond int32 was cut to another device's number.
      if (device < 0 || device > max_snapshot_device) [[unlikely]] {
        // As written: an int from 2^63 on was clamped by the read.
        const auto written = s.find("device").as_uint();
        fail(s.find("device"), codes::snapshot_out_of_range,
             fmt::format("segments[{}]: 'device' {} is out of range (expected 0 to {})", i,
                         written ? fmt::format("{}", *written) : fmt::format("{}", device),
                         max_snapshot_device));
      }
      seg.device = static_cast<std::int32_t>(device);
      seg.address = extent(s, "address");
      seg.total_size = extent(s, "total_size");
      if (!in_range(seg.address, seg.total_size)) [[unlikely]]
        check_range(s, fmt::format("segments[{}]", i), "address", seg.address, "total_size",
                    seg.total_size);
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
      seg.stack = entries_.stack_of(s.find("frames"));
      const auto blocks = s.find("blocks");
      if (blocks.valid()) {
        sequence(blocks, "blocks");
        seg.blocks.reserve(blocks.size());
        // PyTorch 2.0 and 2.1 write no block address: the blocks tile their segment in order.
        std::uint64_t next = seg.address;
        for (std::size_t j = 0; j < blocks.size(); ++j) {
          seg.blocks.push_back(read_block(blocks.at(j), next));
          const auto& last = seg.blocks.back();
          if (!in_range(last.address, last.size) || last.requested_size >= max_snapshot_size)
              [[unlikely]]
            check_block(blocks, i, j, last);
          next = last.address + last.size;
        }
        check_layout(blocks, i, seg);
      }
      // Every device the dump holds memory of has its memory lane (a dump without
      // device_traces is still a device's memory).
      (void)t_.lanes.memory(seg.device);
      state.segments.push_back(std::move(seg));
    }
    check_apart(segments, state.segments);
    if (sort_state)
      state.sort();
    t_.final_allocator_state = std::move(state);
  }

  // (`where`, the blocks list: a block's record may be freed once read.)
  void check_block(snap_value where, std::size_t i, std::size_t j, const block& b) const {
    const auto entry = fmt::format("segments[{}].blocks[{}]", i, j);
    check_range(where, entry, "address", b.address, "size", b.size);
    if (b.requested_size >= max_snapshot_size)
      fail(where, codes::snapshot_out_of_range,
           fmt::format("{}: 'requested_size' {} is out of range (expected 0 to 2^56 bytes)", entry,
                       int_text(b.requested_size)));
  }

  // The blocks of segments[i] lie inside it and do not overlap (sizes and addresses are in
  // range): else every analysis would count memory twice or outside its segment. Errors point
  // at the blocks list (a block's record may be freed once read).
  void check_layout(snap_value blocks, std::size_t i, const segment& seg) const {
    const auto end = seg.address + seg.total_size;
    for (std::size_t j = 0; j < seg.blocks.size(); ++j) {
      const auto& b = seg.blocks[j];
      if (b.address < seg.address || b.address + b.size > end) [[unlikely]]
        fail(blocks, codes::snapshot_bad_layout,
             fmt::format("segments[{}].blocks[{}]: the block [0x{:x}, +{}) lies outside its "
                         "segment [0x{:x}, +{})",
                         i, j, b.address, b.size, seg.address, seg.total_size));
    }
    const auto& bs = seg.blocks;
    for_neighbours(
        bs.size(), [&](std::size_t a, std::size_t b) { return bs[a].address < bs[b].address; },
        [&](std::size_t ja, std::size_t jb) {
          const auto &a = bs[ja], &b = bs[jb];
          if (b.address < a.address + a.size) [[unlikely]]
            fail(blocks, codes::snapshot_bad_layout,
                 fmt::format("segments[{}].blocks[{}]: the block [0x{:x}, +{}) overlaps "
                             "segments[{}].blocks[{}] [0x{:x}, +{})",
                             i, jb, b.address, b.size, i, ja, a.address, a.size));
        });
  }

  // The segments of one device do not overlap (one allocation each; an expandable segment's
  // mapped runs are segments of their own): else every analysis would count their memory twice
  // (three copies of one segment made its reserved bytes three times). Errors point at the
  // segments list.
  void check_apart(snap_value list, const std::vector<segment>& segments) const {
    const auto before = [&](std::size_t a, std::size_t b) {
      const auto &x = segments[a], &y = segments[b];
      return x.device != y.device ? x.device < y.device : x.address < y.address;
    };
    for_neighbours(segments.size(), before, [&](std::size_t ia, std::size_t ib) {
      const auto &a = segments[ia], &b = segments[ib];
      if (a.device == b.device && b.address - a.address < a.total_size) [[unlikely]]
        fail(list, codes::snapshot_bad_layout,
             fmt::format("segments[{}]: the segment [0x{:x}, +{}) overlaps segments[{}] "
                         "[0x{:x}, +{}) on device {}",
                         ib, b.address, b.total_size, ia, a.address, a.total_size, a.device));
    });
  }

  // Whether read_segments meets every block record exactly once and nothing else can reach one
  // (none was fetched from the memo; each blocks list holding one is held by its segment only,
  // and such a list's records are read only through the "blocks" key): each record can then be
  // freed once read. Walks what read_segments walks.
  bool blocks_held_once(snap_value segments) const {
    if (s_->block_fetched() || !segments.is_sequence() || s_->block_count() == 0)
      return false;
    std::vector<bool> met(s_->block_count());
    std::size_t count = 0;
    for (std::size_t i = 0; i < segments.size(); ++i) {
      const auto blocks = segments.at(i).find("blocks");
      if (!blocks.is_sequence())
        continue;
      for (std::size_t j = 0; j < blocks.size(); ++j) {
        const auto b = blocks.at(j);
        if (s_->block_of(b) == nullptr)
          continue;
        const auto index = detail::snap::payload_of(b.raw());
        if (met[index] || !s_->unshared(blocks))
          return false;
        met[index] = true;
        ++count;
      }
    }
    return count == s_->block_count();
  }

  // `placed`: where the block starts when it gives no address (just past the one before).
  block read_block(snap_value b, std::uint64_t placed) {
    block blk;
    if (const auto* r = s_->block_of(b)) {
      // Kept as its record while parsing: every field read and checked then.
      using rec = detail::snap_stream;
      blk.address = (r->present() & rec::has_address) != 0 ? r->address : placed;
      blk.size = r->size;
      blk.state = static_cast<block_state>(r->state());
      blk.requested_size = r->requested_size(); // the size where the dict had none
      if ((r->present() & rec::has_frames) != 0)
        blk.stack = entries_.stack_of(snap_value(s_, r->frames(), r->offset()));
      if (release_blocks_)
        const_cast<detail::snap_stream*>(s_)->block_done(detail::snap::payload_of(b.raw()));
      return blk;
    }
    expect(b, b.is_dict(), "a block (expected a dict)");
    blk.address = extent(b, "address", placed);
    blk.size = extent(b, "size");
    const auto state_text = str(b, "state");
    const auto state = parse_block_state(state_text);
    if (!state)
      fail(b.find("state"), codes::unknown_block_state,
           fmt::format("unknown block state '{}'", state_text));
    blk.state = *state;
    if (const auto frames = b.find("frames"); frames.valid()) {
      blk.stack = entries_.stack_of(frames);
      blk.requested_size = extent(b, "requested_size", blk.size);
    } else if (const auto history = b.find("history");
               history.is_sequence() && history.size() > 0) {
      // Legacy layout: [{addr, real_size, frames}], the last entry is the live allocation.
      const auto last = history.at(history.size() - 1);
      blk.stack = entries_.stack_of(last.find("frames"));
      blk.requested_size = extent(last, "real_size", blk.size);
    } else {
      blk.requested_size = extent(b, "requested_size", blk.size);
    }
    return blk;
  }

  void read_annotations(snap_value annotations) {
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
      const auto time = to_ns(time_us(a, origin_us_));
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

  void read_settings(snap_value settings) {
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

  const detail::snap_stream* s_ = nullptr;
  load_result& out_;
  trace& t_;
  detail::snapshot_rows entries_;
  std::int64_t origin_us_ = 0;
  std::int64_t last_time_ = 0;
  std::size_t time_backwards_ = 0, time_clamped_ = 0; // see place()
  bool release_blocks_ = false;                       ///< see blocks_held_once
};

// One streaming pass: the machine hands each trace entry to the rows as it is appended.
load_result run_import(input_file* file, std::string_view bytes, std::string_view source,
                       const load_options& options, const pickle_limits& limits) {
  load_result out;
  snapshot_builder builder(out);
  detail::snap_stream stream(file, bytes, std::string(source), limits, &builder.entries());
  builder.attach(stream);
  try {
    stream.run();
  } catch (const std::bad_alloc&) {
    builder.entries().too_large(true);
  }
  builder.build(!options.finalize);
  if (options.finalize)
    out.trace.finalize();
  return out;
}

} // namespace

bool sniff_snapshot(std::span<const std::byte> head) noexcept {
  return head.size() >= 2 && head[0] == std::byte{0x80} && head[1] >= std::byte{2} &&
         head[1] <= std::byte{5};
}

load_result import_snapshot(std::string_view bytes, std::string_view source_name,
                            const load_options& options, const pickle_limits& limits) {
  return run_import(nullptr, bytes, source_name, options, limits);
}

load_result import_snapshot_file(const std::filesystem::path& path, const load_options& options) {
  input_file in(path);
  if (!in.seekable())
    return import_snapshot(in.read_all(), in.name(), options);
  return run_import(&in, {}, in.name(), options, {});
}

importer snapshot_importer() {
  return {
      "torch-snapshot", [](std::span<const std::byte> head) { return sniff_snapshot(head); },
      [](const std::filesystem::path& path, const load_options& options) {
        return import_snapshot_file(path, options);
      },
      [](std::span<const std::byte> bytes, std::string_view source, const load_options& options) {
        return run_import(
            nullptr, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            source, options, {});
      }};
}

} // namespace tdiag::trace
