// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <vector>

#include "saturate.hpp"
#include "snapshot_fields.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace {
namespace {

using detail::parse_action;
using detail::parse_block_state;
using detail::snap_value;
namespace snap = detail::snap;

// Fields of a trace entry the importer reads; other keys are skipped.
enum entry_field : std::uint8_t {
  f_unknown,
  f_other,
  f_action,
  f_time,
  f_addr,
  f_size,
  f_stream,
  f_device_free,
  f_frames,
  f_user_metadata
};

entry_field field_named(std::string_view k) noexcept {
  return k == "action"          ? f_action
         : k == "time_us"       ? f_time
         : k == "addr"          ? f_addr
         : k == "size"          ? f_size
         : k == "stream"        ? f_stream
         : k == "device_free"   ? f_device_free
         : k == "frames"        ? f_frames
         : k == "user_metadata" ? f_user_metadata
                                : f_other;
}

// Staged rows carry two flags in memory_event's reserved bytes until read_traces() places them.
constexpr std::uint8_t row_is_marker = 1; ///< unknown action: user_metadata holds its name
constexpr std::uint16_t row_has_no_time = 1;
// action_of() results past the memory_action values.
constexpr std::uint8_t action_unknown = 0xfc, action_absent = 0xfd, action_not_str = 0xfe,
                       action_uncached = 0xff;
constexpr std::uint64_t no_inline = ~std::uint64_t{0};
/// Resident bytes one trace entry costs while it streams in: its row and its memo slot.
constexpr std::uint64_t bytes_per_entry = sizeof(memory_event) + sizeof(std::uint64_t);

std::string size_text(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  return b < double(std::uint64_t{1} << 30) ? fmt::format("{:.1f} MiB", b / double(1 << 20))
                                            : fmt::format("{:.1f} GiB", b / double(1 << 30));
}

class snapshot_builder final : public detail::entry_sink, detail::snap_fields {
public:
  explicit snapshot_builder(load_result& out) : out_(out), t_(out.trace) {}

  void attach(const detail::snap_stream& s) {
    s_ = &s;
    stream_ = &s;
    // Reserving what the file can hold keeps the rows from being copied as they grow; pages
    // never written are never resident. Every entry takes at least ~24 bytes of pickle.
    const std::uint64_t cap = std::min(s.size() / 24, memory_budget() / bytes_per_entry);
    rows_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(cap, std::uint64_t{1} << 32)));
  }

  std::uint32_t entry(snap_value e, bool exclusive) override {
    memory_event m;
    bool has_time = false;
    std::int64_t time_us = 0;
    std::uint8_t action = action_absent;
    const auto items = s_->items(e);
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
      const auto field = field_of(items[i]);
      if (field == f_other)
        continue;
      const auto raw = items[i + 1];
      const std::uint64_t inline_value =
          snap::tag_of(raw) == snap::t_int && snap::inline_int(raw) >= 0
              ? static_cast<std::uint64_t>(snap::inline_int(raw))
              : no_inline;
      const snap_value v(s_, raw, e.offset());
      switch (field) {
      case f_action:
        action = action_of(raw, e);
        break;
      case f_time:
        has_time = true;
        if (inline_value != no_inline) {
          time_us = static_cast<std::int64_t>(inline_value);
          origin_us_ = std::min(origin_us_, time_us);
        } else {
          time_us = i64(e, "time_us");
          if (v.as_int())
            origin_us_ = std::min(origin_us_, time_us);
        }
        break;
      case f_addr:
        m.address = inline_value != no_inline ? inline_value : u64(e, "addr");
        break;
      case f_size:
        m.size = inline_value != no_inline ? inline_value : u64(e, "size");
        break;
      case f_stream:
        m.stream = inline_value != no_inline ? inline_value : u64(e, "stream");
        break;
      case f_device_free:
        m.device_free = inline_value != no_inline ? inline_value : u64(e, "device_free");
        break;
      case f_frames:
        m.stack = stack_of(v, exclusive);
        break;
      case f_user_metadata:
        if (const auto meta = v.is_none() ? std::string_view{} : s_->box_text(raw); !meta.empty())
          m.user_metadata = t_.strings.intern(meta);
        else if (!v.is_none() && !v.as_string())
          (void)str(e, "user_metadata"); // throws: not a str
        break;
      default:
        break;
      }
    }
    m.time = time_us;
    m.reserved1 = has_time ? 0 : row_has_no_time;
    if (action >= action_unknown) {
      // Unknown (or no) action: a marker named after it.
      m.reserved0 = row_is_marker;
      m.user_metadata = t_.strings.intern(action == action_absent ? "" : str(e, "action"));
    } else {
      m.action = static_cast<memory_action>(action);
      if (m.action == memory_action::oom)
        m.address = 0;
      else
        m.device_free = 0;
    }
    if ((rows_.size() & 0xffff) == 0xffff)
      check_progress();
    rows_.push_back(m);
    return static_cast<std::uint32_t>(rows_.size() - 1);
  }

  void build() {
    const auto root = s_->root();
    if (!root.is_dict())
      fail(root, codes::not_a_snapshot,
           fmt::format("the pickle holds a {}, not a snapshot dict", to_string(root.kind())));
    const auto segments = root.find("segments");
    const auto traces = root.find("device_traces");
    if (!segments.valid() && !traces.valid())
      fail(root, codes::not_a_snapshot,
           "the dict has neither 'segments' nor 'device_traces': not a PyTorch memory snapshot");
    t_.metadata.format = "torch-snapshot";
    t_.metadata.source_path = s_->source_name();
    check_budget(traces, segments);
    if (origin_us_ == std::numeric_limits<std::int64_t>::max())
      origin_us_ = 0;
    t_.metadata.time_origin_ns =
        detail::clamp_i64(static_cast<detail::wide_int>(origin_us_) * 1000);
    if (traces.valid())
      read_traces(traces);
    read_segments(segments);
    read_annotations(root.find("external_annotations"));
    read_settings(root.find("allocator_settings"));
  }

  /// The plain line for a snapshot that does not fit: `counted` entries so far.
  [[noreturn]] void too_large(std::uint64_t estimate, bool from_bad_alloc) const {
    const std::uint64_t budget = memory_budget();
    const bool from_env = std::getenv("TDIAG_MEMORY_LIMIT") != nullptr;
    const double done = s_->size() == 0 ? 1.0 : double(s_->position()) / double(s_->size());
    diagnostic d;
    d.code = codes::snapshot_too_large;
    d.title = "memory snapshot needs more memory than is available";
    d.message = fmt::format(
        "{}: about {} events ({} counted in the first {:.0f}% of the file) need about {}; {} {} "
        "({}); convert it once where it fits (tdiag trace export FILE --tdtrace OUT.tdtrace) and "
        "open the .tdtrace, or raise TDIAG_MEMORY_LIMIT if that memory is free",
        s_->source_name(), estimate, rows_.size(), done * 100.0,
        size_text(estimate * bytes_per_entry),
        from_bad_alloc ? "the allocator refused more; the budget is" : "the memory budget is",
        size_text(budget), from_env ? "TDIAG_MEMORY_LIMIT" : "half the available memory");
    d.add_field("file", s_->source_name());
    d.add_field("events_counted", static_cast<std::int64_t>(rows_.size()));
    d.add_field("events_estimated", static_cast<std::int64_t>(estimate));
    d.add_field("bytes_needed", static_cast<std::int64_t>(estimate * bytes_per_entry));
    d.add_field("budget_bytes", static_cast<std::int64_t>(budget));
    d.hint = "raise TDIAG_MEMORY_LIMIT if that memory is really free, or convert the snapshot once "
             "where it fits (tdiag trace export FILE --tdtrace OUT.tdtrace): a .tdtrace file "
             "loads by time range and reopens without re-parsing";
    throw input_error(std::move(d));
  }
  [[nodiscard]] std::uint64_t estimate() const noexcept {
    const double done = s_->size() == 0 ? 1.0 : double(s_->position()) / double(s_->size());
    return done <= 0 ? rows_.size() : static_cast<std::uint64_t>(double(rows_.size()) / done);
  }

private:
  // Extrapolates the entries from the share of the file read: refuses before memory runs out.
  void check_progress() const {
    // What is still to come against the budget (half of what is available now, so the rows
    // already read are not counted twice).
    if ((estimate() - std::min<std::uint64_t>(estimate(), rows_.size())) * bytes_per_entry >
        memory_budget())
      too_large(estimate(), false);
  }

  // The field a dict key names, cached per string (memoized keys are one string each).
  entry_field field_of(std::uint64_t key) {
    if (snap::tag_of(key) != snap::t_box)
      return f_other;
    const auto index = snap::payload_of(key);
    if (index >= field_cache_.size())
      field_cache_.resize(std::max<std::size_t>(index + 1, field_cache_.size() * 2), f_unknown);
    auto& f = field_cache_[index];
    if (f == f_unknown)
      f = field_named(s_->box_text(key));
    return f;
  }
  // The memory_action an "action" value names (cached per string); action_unknown for a str
  // that names none, action_absent for None. Anything else throws naming what it is.
  std::uint8_t action_of(std::uint64_t value, snap_value entry) {
    if (snap::tag_of(value) == snap::t_none)
      return action_absent;
    if (snap::tag_of(value) == snap::t_box) {
      const auto index = snap::payload_of(value);
      if (index >= action_cache_.size())
        action_cache_.resize(std::max<std::size_t>(index + 1, action_cache_.size() * 2),
                             action_uncached);
      auto& a = action_cache_[index];
      if (a == action_uncached) {
        const auto text = snap_value(s_, value, 0).as_string();
        const auto parsed = text ? parse_action(*text) : std::nullopt;
        a = !text ? action_not_str : parsed ? static_cast<std::uint8_t>(*parsed) : action_unknown;
      }
      if (a != action_not_str)
        return a;
    }
    (void)str(entry, "action"); // throws: not a str
    return action_unknown;
  }

  // The memo lets a small file list one object a billion times: what the lists expand to is
  // counted (in time linear in the file) before anything walks or allocates it.
  void check_budget(snap_value traces, snap_value segments) const {
    std::uint64_t entries = 0, blocks = 0;
    for (std::size_t d = 0; traces.is_sequence() && d < traces.size(); ++d)
      if (const auto events = traces.at(d); events.is_sequence())
        entries += events.size();
    // Listing each staged row once, in order, needs no more memory (read_traces checks order).
    if (entries != rows_.size())
      check_entries(entries);
    for (std::size_t i = 0; segments.is_sequence() && i < segments.size(); ++i)
      if (const auto b = segments.at(i).find("blocks"); b.is_sequence())
        blocks += b.size();
    const std::uint64_t n = segments.is_sequence() ? segments.size() : 0;
    check_memory_budget(s_->source_name(), fmt::format("{} segments listing {} blocks", n, blocks),
                        n * sizeof(segment) + blocks * sizeof(block));
  }

  void check_entries(std::uint64_t entries) const {
    check_memory_budget(s_->source_name(), fmt::format("device_traces listing {} entries", entries),
                        entries * sizeof(memory_event));
  }

  std::int64_t to_ns(std::int64_t us) const {
    return detail::clamp_time((static_cast<detail::wide_int>(us) - origin_us_) * 1000);
  }

  frame_id frame_of(snap_value f, bool exclusive) {
    if (auto id = s_->settled_frame(f))
      return *id;
    if (auto id = s_->cached(f))
      return *id;
    expect(f, f.is_dict(), "a frame (expected a dict)");
    frame fr;
    fr.function = t_.strings.intern(str(f, "name"));
    fr.file = t_.strings.intern(str(f, "filename"));
    const auto line = i64(f, "line", 0);
    fr.line = line > 0 && line < std::numeric_limits<std::uint32_t>::max()
                  ? static_cast<std::uint32_t>(line)
                  : 0;
    const auto id = t_.stacks.intern_frame(fr);
    mutable_stream().settle(f, id, false, exclusive);
    return id;
  }

  // Snapshots list frames innermost first, as stack_table does. Shared traceback lists (the
  // pickle memo) are interned once; one only an entry held is freed with it.
  stack_id stack_of(snap_value frames, bool exclusive = false) {
    if (!frames.valid() || frames.is_none())
      return no_stack;
    if (auto id = s_->settled_stack(frames))
      return *id;
    if (auto id = s_->cached(frames))
      return *id;
    sequence(frames, "frames");
    const bool mine = exclusive && s_->unshared(frames);
    scratch_.clear();
    for (std::size_t i = 0; i < frames.size(); ++i)
      scratch_.push_back(frame_of(frames.at(i), mine));
    const auto id = t_.stacks.intern_stack(scratch_);
    mutable_stream().settle(frames, id, true, exclusive);
    return id;
  }
  detail::snap_stream& mutable_stream() const { return const_cast<detail::snap_stream&>(*s_); }

  // Places the staged rows on their devices' lanes: in place when device_traces lists every row
  // once, in order (what torch writes); gathered into a new vector otherwise.
  void read_traces(snap_value traces) {
    sequence(traces, "device_traces");
    std::uint64_t total = 0, expected = 0;
    bool in_place = true;
    // The rows in device_traces order, read once: staging an entry below may grow the stream's
    // storage, so the second pass must not read the entries again (the fuzzer found it reading
    // freed memory).
    std::vector<std::uint32_t> order;
    for (std::size_t d = 0; d < traces.size(); ++d) {
      const auto events = sequence(traces.at(d), "device_traces[i]");
      total += events.size();
      for (std::size_t i = 0; i < events.size(); ++i) {
        auto row = events.at(i).row();
        if (!row) {
          const auto e = events.at(i);
          expect(e, e.is_dict(), "a trace entry (expected a dict)");
          row = entry(e, false);
        }
        in_place = in_place && *row == expected++;
        order.push_back(*row);
      }
    }
    in_place = in_place && total == rows_.size();
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
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (!in_place) {
          memory_event m = rows_[order[k++]];
          if (place(m, device, lane, unknown))
            gathered.push_back(m);
          continue;
        }
        auto& m = rows_[r++];
        if (place(m, device, lane, unknown) && ++w != r)
          rows_[w - 1] = m;
      }
    }
    if (in_place) {
      rows_.resize(w);
      t_.memory.adopt(std::move(rows_));
    } else {
      t_.memory.adopt(std::move(gathered));
    }
    rows_ = {};
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

  // A staged row on its device's lane with its time on the trace axis; an unknown action
  // becomes a marker (false: not a memory event).
  bool place(memory_event& m, std::int32_t device, lane_id lane,
             std::map<std::string, std::size_t>& unknown) {
    m.time = to_ns(m.reserved1 == row_has_no_time ? origin_us_ : m.time);
    m.reserved1 = 0;
    m.lane = lane;
    m.device = device;
    if (m.reserved0 == row_is_marker) {
      // annotate, user_defined and future actions: keep them visible as markers.
      ++unknown[std::string(t_.strings.name(m.user_metadata))];
      marker_event mk;
      mk.time = m.time;
      mk.lane = lane;
      mk.name = m.user_metadata;
      mk.category = t_.strings.intern("snapshot-action");
      t_.markers.push_back(mk);
      return false;
    }
    last_time_ = std::max(last_time_, m.time);
    return true;
  }

  void read_segments(snap_value segments) {
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

  block read_block(snap_value b) {
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
  std::vector<memory_event> rows_;
  std::vector<entry_field> field_cache_;
  std::vector<std::uint8_t> action_cache_;
  std::int64_t origin_us_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_time_ = 0;
  std::vector<frame_id> scratch_;
};

// One streaming pass: the machine hands each trace entry to the builder as it is appended.
load_result run_import(input_file* file, std::string_view bytes, std::string_view source,
                       const load_options& options, const pickle_limits& limits) {
  load_result out;
  snapshot_builder builder(out);
  detail::snap_stream stream(file, bytes, std::string(source), limits, &builder);
  builder.attach(stream);
  try {
    stream.run();
  } catch (const std::bad_alloc&) {
    builder.too_large(builder.estimate(), true);
  }
  builder.build();
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
