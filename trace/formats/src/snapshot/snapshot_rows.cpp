// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "snapshot_rows.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace tdiag::trace::detail {
namespace {

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
  f_user_metadata,
  // Keys of a frame dict (inline_stack).
  f_name,
  f_filename,
  f_line
};

// The row member and key of each plain int field, in entry_field order from f_addr, and whether
// it is an address or a size (snap_fields::extent; a stream is any handle). device_free is
// staged (it goes to the row's detail).
struct int_field {
  std::uint64_t memory_event::*member;
  std::string_view key;
  bool extent;
};
constexpr std::array<int_field, 3> int_fields{{{&memory_event::address, "addr", true},
                                               {&memory_event::size, "size", true},
                                               {&memory_event::stream, "stream", false}}};

entry_field field_named(std::string_view k) noexcept {
  return k == "action"          ? f_action
         : k == "time_us"       ? f_time
         : k == "addr"          ? f_addr
         : k == "size"          ? f_size
         : k == "stream"        ? f_stream
         : k == "device_free"   ? f_device_free
         : k == "frames"        ? f_frames
         : k == "user_metadata" ? f_user_metadata
         : k == "name"          ? f_name
         : k == "filename"      ? f_filename
         : k == "line"          ? f_line
                                : f_other;
}

// A frame's line as stack_table keeps it: 0 for none, or one that does not fit.
std::uint32_t frame_line(std::int64_t line) noexcept {
  return line > 0 && line < std::numeric_limits<std::uint32_t>::max()
             ? static_cast<std::uint32_t>(line)
             : 0;
}

constexpr string_id meta_uncached = 0xffffffffu;
constexpr std::uint64_t absent = snap::make(snap::t_none, 1); ///< a key a frame dict lacks
} // namespace

std::uint32_t snapshot_rows::entry(snap_value e, bool exclusive) {
  auto& m = new_row();
  staged st;
  auto items = s_->items(e);
  // A dict kept as a block record (listed among the entries too): its items as it held them.
  std::array<std::uint64_t, 2 * snap_stream::block_layout::max_keys> block{};
  if (s_->block_of(e) != nullptr) {
    for (std::size_t i = 0; i < e.size(); ++i) {
      block[2 * i] = e.key(i).raw();
      block[2 * i + 1] = e.value(i).raw();
    }
    items = std::span(block.data(), 2 * e.size());
  }
  (void)read_fields(items, e, e.offset(), exclusive, m, st);
  return finish(m, st, e);
}

bool snapshot_rows::flat_entry(std::span<const std::uint64_t> items, std::uint64_t offset,
                               std::uint32_t& row) {
  auto& m = new_row();
  staged st;
  if (!read_fields(items, {}, offset, true, m, st)) {
    rows_.pop_back();
    return false;
  }
  row = finish(m, st, {});
  return true;
}

std::uint8_t snapshot_rows::key_slot(std::uint64_t key) {
  const auto field = field_of(key);
  static_assert(f_user_metadata < entry_slots::count);
  return field >= f_action && field <= f_user_metadata ? field : entry_slots::ignored;
}

// read_fields for an entry read by slots, for the values that need nothing but their handle
// (ints, the strs and stacks met before); false for any other, before anything is changed.
bool snapshot_rows::slot_entry(const entry_slots& e, std::uint32_t& row) {
  staged st;
  memory_event m;
  const auto action = e.values[f_action];
  if (!e.has(f_action) || snap::tag_of(action) != snap::t_box ||
      facts(action).action >= action_not_str)
    return false;
  st.action = facts(action).action;
  st.action_value = action;
  for (std::uint8_t f = f_time; f <= f_device_free; ++f)
    if (e.has(f) && snap::tag_of(e.values[f]) != snap::t_int)
      return false;
  if (e.has(f_frames)) {
    const auto frames = e.values[f_frames];
    if (snap::tag_of(frames) == snap::t_stack)
      m.stack = static_cast<stack_id>(snap::payload_of(frames));
    else if (snap::tag_of(frames) == snap::t_empty)
      m.stack = no_stack;
    else
      return false;
  }
  if (e.has(f_user_metadata)) {
    const auto meta = e.values[f_user_metadata];
    if (snap::tag_of(meta) == snap::t_box && facts(meta).meta != meta_uncached)
      st.user_metadata = facts(meta).meta;
    else if (snap::tag_of(meta) != snap::t_none)
      return false;
  }
  // Inline ints as u64: negative ones wrap, as u64() does.
  const auto u64_at = [&](std::uint8_t f) {
    return static_cast<std::uint64_t>(snap::inline_int(e.values[f]));
  };
  if (e.has(f_addr))
    m.address = u64_at(f_addr);
  if (e.has(f_size))
    m.size = u64_at(f_size);
  if (e.has(f_stream))
    m.stream = u64_at(f_stream);
  if (e.has(f_device_free))
    st.device_free = u64_at(f_device_free);
  if (e.has(f_time)) {
    st.has_time = true;
    st.time_us = snap::inline_int(e.values[f_time]);
  }
  auto& r = new_row();
  r = m;
  row = finish(r, st, {});
  return true;
}

// The fields of an entry into its row `m`, walking its items once (a repeated key: the last
// wins, as in Python). `dict` is the entry's dict, or invalid for a flat entry the machine made
// no dict for: then a value that needs the dict (to look a key up or to name it in an error)
// returns false, having changed nothing that the dict's own read would not change alike.
bool snapshot_rows::read_fields(std::span<const std::uint64_t> items, snap_value dict,
                                std::uint64_t offset, bool exclusive, memory_event& m, staged& st) {
  const bool flat = !dict.valid();
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const auto field = field_of(items[i]);
    if (field == f_other)
      continue;
    const auto raw = items[i + 1];
    const bool is_int = snap::tag_of(raw) == snap::t_int;
    // Inline ints as u64: negative ones wrap, as u64() does.
    const auto as_u64 = static_cast<std::uint64_t>(snap::inline_int(raw));
    if (flat && !is_int && field >= f_time && field <= f_device_free)
      return false;
    switch (field) {
    case f_action:
      // A str met before: what it was found to be (action_of learns it otherwise).
      st.action = snap::tag_of(raw) == snap::t_box && facts(raw).action < action_not_str
                      ? facts(raw).action
                      : action_of(raw, dict);
      if (st.action == action_not_str)
        return false; // flat: the dict names it in the error
      st.action_value = raw;
      break;
    case f_time:
      st.has_time = true;
      st.time_us = is_int ? snap::inline_int(raw) : time_us(dict);
      break;
    case f_addr:
    case f_size:
    case f_stream: {
      const auto& f = int_fields[field - f_addr];
      m.*f.member = is_int ? as_u64 : f.extent ? extent(dict, f.key) : u64(dict, f.key);
      break;
    }
    case f_device_free:
      st.device_free = is_int ? as_u64 : extent(dict, "device_free");
      break;
    case f_frames: {
      const snap_value v(s_, raw, offset);
      if (snap::tag_of(raw) == snap::t_stack) { // the common case first
        m.stack = static_cast<stack_id>(snap::payload_of(raw));
      } else if (snap::tag_of(raw) == snap::t_empty) {
        m.stack = no_stack;
      } else if (snap::tag_of(raw) == snap::t_inline) {
        if (!inline_stack(m))
          return false; // a frame needs its dict
      } else if (flat && !v.is_none() && !s_->cached(v)) {
        return false; // interning it would walk (and may free) the frames
      } else {
        m.stack = stack_of(v, exclusive);
      }
      break;
    }
    case f_user_metadata:
      if (snap::tag_of(raw) == snap::t_box && facts(raw).meta != meta_uncached)
        st.user_metadata = facts(raw).meta; // a str met before (user_metadata learns it)
      else if (!user_metadata(raw, dict, st))
        return false;
      break;
    default:
      break;
    }
  }
  return true;
}

// Completes the row `m` (`dict`, when there is one, names the entry in errors). Inlined in its
// three callers: the rest of the rows, which need a detail, go on in finish_detail.
[[gnu::always_inline]] inline std::uint32_t snapshot_rows::finish(memory_event& m, const staged& st,
                                                                  snap_value dict) {
  // The entry's time (a key given twice: the last), not one it replaced.
  if (st.has_time)
    origin_us_ = std::min(origin_us_, st.time_us);
  m.time = st.time_us;
  m.reserved0 = st.has_time ? 0 : row_has_no_time;
  const bool known = st.action < action_unknown;
  if (known)
    m.action = static_cast<memory_action>(st.action);
  // Most entries: a known action other than oom and no user metadata, so no detail.
  if (known && m.action != memory_action::oom && st.user_metadata == no_string) [[likely]] {
    m.detail = 0;
    return static_cast<std::uint32_t>(rows_.size() - 1);
  }
  return finish_detail(m, st, dict);
}

// finish() for a row with a detail: a marker (an unknown action), an oom, user metadata.
std::uint32_t snapshot_rows::finish_detail(memory_event& m, const staged& st, snap_value dict) {
  const bool known = st.action < action_unknown;
  memory_detail d;
  d.user_metadata = st.user_metadata;
  if (!known) {
    // Unknown (or no) action: a marker named after it.
    m.reserved0 |= row_is_marker;
    d.user_metadata = t_.strings.intern(st.action == action_absent ? std::string_view{}
                                        : dict.valid()             ? str(dict, "action")
                                                                   : s_->box_text(st.action_value));
  } else if (m.action == memory_action::oom) {
    m.address = 0;
    d.device_free = st.device_free;
  }
  m.detail = detail_for(d);
  return static_cast<std::uint32_t>(rows_.size() - 1);
}

// Entries that carry only user metadata share one detail per string; most carry none.
std::uint32_t snapshot_rows::detail_for(const memory_detail& d) {
  if (d.device_free == 0 && d.user_metadata == no_string)
    return 0;
  if (d.device_free != 0)
    return t_.add_memory_detail(d);
  if (d.user_metadata >= meta_details_.size())
    meta_details_.resize(std::size_t{d.user_metadata} + 1, 0);
  auto& slot = meta_details_[d.user_metadata];
  if (slot == 0) {
    t_.memory_details.push_back(d);
    slot = static_cast<std::uint32_t>(t_.memory_details.size());
  }
  return slot;
}

// What a string means to entries, learnt once per string (memoized keys and values are one
// string each).
void snapshot_rows::grow_facts(std::size_t index) {
  facts_.resize(std::max<std::size_t>(index + 1, facts_.size() * 2),
                {f_unknown, action_uncached, meta_uncached, meta_uncached});
}

inline std::uint8_t snapshot_rows::field_of(std::uint64_t key) {
  if (snap::tag_of(key) != snap::t_box)
    return f_other;
  const auto field = facts(key).field;
  return field != f_unknown ? field : learn_field(key);
}

std::uint8_t snapshot_rows::learn_field(std::uint64_t key) {
  return facts(key).field = field_named(s_->box_text(key));
}

// The memory_action an "action" value names; action_unknown for a str that names none,
// action_absent for None. Anything else throws naming what it is in `entry`, or, without one
// (a flat entry), is action_not_str.
std::uint8_t snapshot_rows::action_of(std::uint64_t value, snap_value entry) {
  if (snap::tag_of(value) == snap::t_none)
    return action_absent;
  if (snap::tag_of(value) == snap::t_box) {
    auto& a = facts(value).action;
    if (a == action_uncached) {
      const auto text = snap_value(s_, value, 0).as_string();
      const auto parsed = text ? parse_action(*text) : std::nullopt;
      a = !text ? action_not_str : parsed ? static_cast<std::uint8_t>(*parsed) : action_unknown;
    }
    if (a != action_not_str)
      return a;
  }
  if (!entry.valid())
    return action_not_str;
  (void)str(entry, "action"); // throws: not a str
  return action_unknown;
}

// A str "user_metadata" into the row (None or "": none). Anything else throws naming what it is
// in `entry`, or, without one (a flat entry), is false.
bool snapshot_rows::user_metadata(std::uint64_t value, snap_value entry, staged& st) {
  if (snap::tag_of(value) == snap::t_none)
    return true;
  if (snap::tag_of(value) == snap::t_box) {
    auto& id = facts(value).meta;
    if (id == meta_uncached) {
      const auto text = snap_value(s_, value, 0).as_string();
      if (!text) {
        if (!entry.valid())
          return false;
        // Not a str. A dict given the key twice reads as its last value, which str() checks
        // (it throws when that is not a str either) and whose own item sets the row.
        (void)str(entry, "user_metadata");
        return true;
      }
      id = text->empty() ? no_string : t_.strings.intern(*text);
    }
    st.user_metadata = id;
    return true;
  }
  if (!entry.valid())
    return false;
  (void)str(entry, "user_metadata"); // throws: not a str
  return true;
}

frame_id snapshot_rows::frame_of(snap_value f, bool exclusive) {
  if (auto id = s_->settled_frame(f))
    return *id;
  if (auto id = s_->cached(f))
    return *id;
  expect(f, f.is_dict(), "a frame (expected a dict)");
  frame fr;
  fr.function = t_.strings.intern(str(f, "name"));
  fr.file = t_.strings.intern(str(f, "filename"));
  fr.line = frame_line(i64(f, "line", 0));
  const auto id = t_.stacks.intern_frame(fr);
  count_frame();
  mutable_stream().settle(f, id, false, exclusive);
  return id;
}

// A frame's "name" or "filename" value (a str, bytes or None, checked by inline_stack) interned
// as frame_of interns it, once per memoized string.
string_id snapshot_rows::frame_text(std::uint64_t value) {
  if (snap::tag_of(value) != snap::t_box)
    return t_.strings.intern(std::string_view{});
  auto& id = facts(value).text;
  if (id == meta_uncached)
    id = t_.strings.intern(s_->box_text(value));
  return id;
}

// A frame dict's name, filename and line handles (`absent` for a key it lacks); false when
// frame_of could refuse one (a conservative check: a name or filename that is a str, bytes or
// None; a line that is an int).
bool snapshot_rows::plain_frame(std::span<const std::uint64_t> items, frame_parts& f) {
  f = {absent, absent, absent};
  // Forwards, the last of a repeated key wins (as find() has it).
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const auto field = field_of(items[i]);
    auto& slot = field == f_name ? f.name : field == f_filename ? f.file : f.line;
    if (field == f_name || field == f_filename || field == f_line)
      slot = items[i + 1];
  }
  const auto is_text = [this](std::uint64_t v) {
    if (snap::tag_of(v) == snap::t_none)
      return true; // None or absent: ""
    const auto k = snap_value(s_, v, 0).kind();
    return snap::tag_of(v) == snap::t_box && (k == pickle_kind::string || k == pickle_kind::bytes);
  };
  const bool int_line = f.line == absent || snap::tag_of(f.line) == snap::t_int ||
                        (snap::tag_of(f.line) == snap::t_box &&
                         snap_value(s_, f.line, 0).kind() == pickle_kind::integer);
  return is_text(f.name) && is_text(f.file) && int_line;
}

// Whether entry() reads the entry dict `e` without an error, before any list takes it (what
// read_fields would refuse or look up in the dict gives false). Interns nothing.
bool snapshot_rows::readable(snap_value e) {
  const auto items = s_->items(e);
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const auto field = field_of(items[i]);
    const auto raw = items[i + 1];
    const auto tag = snap::tag_of(raw);
    switch (field) {
    case f_other:
      break;
    case f_action:
      if (action_of(raw, {}) == action_not_str)
        return false;
      break;
    case f_user_metadata:
      if (tag != snap::t_none && (tag != snap::t_box || !s_->box_text(raw).data()))
        return false;
      break;
    case f_frames:
      if (tag == snap::t_none || tag == snap::t_stack || tag == snap::t_empty ||
          s_->cached(snap_value(s_, raw, 0)))
        break;
      if (!readable_frames(snap_value(s_, raw, 0)))
        return false;
      break;
    default: // the int fields
      if (tag != snap::t_int)
        return false;
      break;
    }
  }
  return true;
}

// A frames list stack_of walks without an error: a list or tuple, not yet interned, of frames
// interned before or plain frame dicts.
bool snapshot_rows::readable_frames(snap_value v) {
  if (snap::tag_of(v.raw()) != snap::t_container || !v.is_sequence() ||
      s_->items(v).size() != v.size())
    return false; // no run of rows in a frames list
  frame_parts parts{};
  for (const auto f : s_->items(v)) {
    const snap_value fv(s_, f, 0);
    if (snap::tag_of(f) == snap::t_frame || s_->cached(fv))
      continue;
    if (snap::tag_of(f) != snap::t_container || fv.kind() != pickle_kind::dict ||
        !plain_frame(s_->items(fv), parts))
      return false;
  }
  return true;
}

// The frames list the machine read inline with a flat entry (snap_stream::inline_frames): its
// new frames and its stack interned as frame_of and stack_of intern them (in list order), their
// ids left for the machine's memo; a fetched frame is already interned. False, having interned
// nothing, when a new frame holds a value of another kind (its dict then says what it is, or
// converts it).
bool snapshot_rows::inline_stack(memory_event& m) {
  auto* list = s_->inline_frames();
  if (list == nullptr)
    return false;
  auto& frames = inline_parts_;
  if (frames.size() < list->count)
    frames.resize(snap_stream::inline_list::max_frames);
  // The name, filename and line of each new frame, and of each fetched dict not yet a frame; a
  // value frame_of might refuse gives up before anything is interned.
  for (std::size_t k = 0; k < list->count; ++k) {
    const auto source = list->source[k];
    if (snap::tag_of(source) == snap::t_frame)
      continue; // interned before
    std::span<const std::uint64_t> items;
    if (snap_stream::inline_list::element_is_fresh(source)) {
      const auto j = snap::payload_of(source);
      items = std::span(list->items).subspan(list->first[j], list->first[j + 1] - list->first[j]);
    } else if (snap::tag_of(source) == snap::t_container &&
               !s_->cached(snap_value(s_, source, 0))) {
      items = s_->items(snap_value(s_, source, 0));
    } else {
      continue; // interned before
    }
    if (!plain_frame(items, frames[k]))
      return false;
  }
  scratch_.clear();
  for (std::size_t k = 0; k < list->count; ++k) {
    const auto source = list->source[k];
    if (snap::tag_of(source) == snap::t_frame) { // interned before: nearly every frame
      scratch_.push_back(static_cast<frame_id>(snap::payload_of(source)));
      continue;
    }
    if (!snap_stream::inline_list::element_is_fresh(source)) {
      // Fetched: interned before, or now as frame_of interns it (the dict stays, shared).
      scratch_.push_back(frame_of(snap_value(s_, source, 0), false));
      continue;
    }
    const auto j = snap::payload_of(source);
    const auto& f = frames[k];
    frame fr;
    fr.function = frame_text(f.name);
    fr.file = frame_text(f.file);
    fr.line = frame_line(f.line == absent ? 0 : *snap_value(s_, f.line, 0).as_int());
    list->frame_ids[j] = t_.stacks.intern_frame(fr);
    count_frame();
    scratch_.push_back(list->frame_ids[j]);
  }
  list->stack = m.stack = t_.stacks.intern_stack(scratch_);
  return true;
}

// Snapshots list frames innermost first, as stack_table does.
stack_id snapshot_rows::stack_of(snap_value frames, bool exclusive) {
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

// A segment's or block's traceback read as read_segments will read it (stack_of), only earlier:
// the list and the frame dicts only it holds are freed at once instead of waiting, each a
// container with its items, for the segments to be read after the whole pickle.
std::optional<std::uint32_t> snapshot_rows::own_traceback(snap_value frames) {
  if (!readable_frames(frames))
    return std::nullopt;
  return stack_of(frames, true);
}

} // namespace tdiag::trace::detail
