// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the streaming pickle machine behind the snapshot importer. It reads the pickle in
// chunks (never the whole file at once) and keeps values as 8-byte handles: small ints, None and
// bools inline; strings, wide ints and floats in a side table; containers in a table whose slots
// are recycled. Every dict appended to a list that has an "action" key (a device_traces entry)
// is handed to an entry_sink the moment it is appended, which writes it straight into columnar
// storage and returns a row; the dict (and a traceback list only it holds) is then freed and the
// memo points at the row. So a snapshot costs its rows plus a few bytes of memo per event,
// not an object tree. The same opcode subset, limits and refusals as pickle_reader.hpp.
#pragma once

#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/pickle_reader.hpp>
#include <tensordiag/trace/stack_table.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pickle_opcodes.hpp"
#include "read_ahead.hpp"
#include "snapshot_block_record.hpp"
#include "snapshot_handles.hpp"
#include "snapshot_memo.hpp"

namespace tdiag::trace::detail {

class snap_stream;

/// A value of a snap_stream, like pickle_value: cheap to copy, valid while the stream lives.
class snap_value {
public:
  snap_value() = default;
  snap_value(const snap_stream* s, std::uint64_t v, std::uint64_t where) noexcept
      : s_(s), v_(v), where_(where) {}
  [[nodiscard]] bool valid() const noexcept { return s_ != nullptr; }
  [[nodiscard]] pickle_kind kind() const noexcept;
  [[nodiscard]] std::uint64_t raw() const noexcept { return v_; }
  /// Byte offset of the opcode that made the value, or of the container holding it.
  [[nodiscard]] std::uint64_t offset() const noexcept;
  [[nodiscard]] bool is_none() const noexcept { return kind() == pickle_kind::none; }
  [[nodiscard]] bool is_dict() const noexcept { return kind() == pickle_kind::dict; }
  [[nodiscard]] bool is_sequence() const noexcept;
  [[nodiscard]] std::optional<bool> as_bool() const noexcept;
  [[nodiscard]] std::optional<std::int64_t> as_int() const noexcept;
  [[nodiscard]] std::optional<std::uint64_t> as_uint() const noexcept;
  [[nodiscard]] std::optional<double> as_double() const noexcept;
  [[nodiscard]] std::optional<std::string_view> as_string() const noexcept;
  /// The row a trace entry became (see entry_sink); nullopt for anything else.
  [[nodiscard]] std::optional<std::uint32_t> row() const noexcept;
  /// A list of nothing but rows `first`, `first` + 1, ... (one run, as a batch of entries
  /// leaves it), or an empty list.
  [[nodiscard]] bool rows_from(std::uint64_t first) const noexcept;
  /// A string's side-table index: equal for every use of one memoized string.
  [[nodiscard]] std::optional<std::uint32_t> string_key() const noexcept;
  [[nodiscard]] std::size_t size() const noexcept;
  [[nodiscard]] snap_value at(std::size_t i) const noexcept;
  [[nodiscard]] snap_value key(std::size_t i) const noexcept;
  [[nodiscard]] snap_value value(std::size_t i) const noexcept;
  [[nodiscard]] snap_value find(std::string_view name) const noexcept;

private:
  const snap_stream* s_ = nullptr;
  std::uint64_t v_ = 0;
  std::uint64_t where_ = 0;
};

/// A trace entry's values by the slot the sink gave each key (entry_sink::key_slot), read in
/// one go (snap_stream::scan_slots): what flat_entry gets, without the keys.
struct entry_slots {
  static constexpr std::size_t count = 16;
  static constexpr std::uint8_t ignored = 0xff; ///< a key whose value the sink skips
  std::array<std::uint64_t, count> values;
  std::uint32_t present = 0; ///< bit i: values[i] was given
  std::uint64_t memo = 0;    ///< the memo index the dict is put at
  [[nodiscard]] bool has(std::uint8_t slot) const noexcept { return ((present >> slot) & 1) != 0; }
};

/// Receives trace entries as the machine meets them.
class entry_sink {
public:
  virtual ~entry_sink() = default;
  /// Turns a complete entry dict into a row and returns its index. `exclusive`: nothing else
  /// refers to the dict, so what only it holds may be released (snap_stream::release).
  virtual std::uint32_t entry(snap_value dict, bool exclusive) = 0;
  /// Whether entry() reads `dict` without an error (a conservative check): it may then be read
  /// before a list takes it.
  [[nodiscard]] virtual bool readable(snap_value dict) = 0;
  /// The same for a flat entry read in one go (snap_stream::scan_flat_dict), for which the
  /// machine has made no dict: its keys and values alternating, at byte `offset`, held by
  /// nothing else yet. Returns false when a value needs the dict; the machine then makes it and
  /// calls entry() when it is appended.
  virtual bool flat_entry(std::span<const std::uint64_t> items, std::uint64_t offset,
                          std::uint32_t& row) = 0;
  /// The slot of entry_slots a key's value goes to (below entry_slots::count), or
  /// entry_slots::ignored; `key` is a str handle.
  [[nodiscard]] virtual std::uint8_t key_slot(std::uint64_t key) = 0;
  /// A flat entry read by slots (its keys met before): its row, as flat_entry would make it;
  /// false, having changed nothing, where flat_entry is needed.
  virtual bool slot_entry(const entry_slots& e, std::uint32_t& row) = 0;
  /// The frames of a stack the sink interned (innermost first).
  [[nodiscard]] virtual frame_list stack_frames(std::uint32_t stack) const = 0;
  /// About the bytes the stacks and strings the sink built hold: the pickle's footprint counts
  /// them (an entry of 800k distinct frames held 435 MB under a 200 MB budget without).
  [[nodiscard]] virtual std::uint64_t held_bytes() const noexcept = 0;
  /// A traceback list held by one dict only (a segment's or a block's "frames"), interned as
  /// the importer will read it, and the list freed (the memo left with the stack id); nullopt,
  /// having done nothing, where reading it might fail (the importer then reads the list and
  /// says why).
  virtual std::optional<std::uint32_t> own_traceback(snap_value frames) = 0;
};

class snap_stream {
public:
  /// Reads from a regular (or any) file in chunks, or from `bytes` when `file` is null.
  snap_stream(input_file* file, std::string_view bytes, std::string source,
              const pickle_limits& limits, entry_sink* sink);
  /// Runs the machine to STOP; throws tdiag::input_error as pickle_document::parse does.
  void run();
  /// Refuses reference cycles and containers nested deeper than limits.max_depth (for consumers
  /// that recurse; the snapshot importer walks a fixed shape and does not need it).
  void check_depth();
  [[nodiscard]] int protocol() const noexcept { return protocol_; }
  /// Values the machine created (memo fetches are free).
  [[nodiscard]] std::uint64_t value_count() const noexcept { return created_; }
  /// Throws the memory budget's one line (TDIAG-CORE-006) when what the stream holds (its input
  /// when in memory, strings, boxes, containers and their items, the memo) and `machine_bytes`
  /// exceed the budget: a pickle is refused by what it builds, not only by its size.
  void check_footprint(std::uint64_t offset, std::uint64_t machine_bytes) const;
  [[nodiscard]] snap_value root() const noexcept { return {this, root_, 0}; }
  [[nodiscard]] const std::string& source_name() const noexcept { return source_; }
  [[nodiscard]] std::uint64_t size() const noexcept { return total_; }
  /// Bytes consumed so far (for progress and extrapolating memory needs).
  [[nodiscard]] std::uint64_t position() const noexcept { return base_ + pos_; }

  /// A container's handles after its run of rows or blocks, if any (a dict's keys and values).
  [[nodiscard]] std::span<const std::uint64_t> items(snap_value v) const noexcept;
  /// The side-table entry of a boxed value (a str's bytes via box_text).
  [[nodiscard]] std::string_view box_text(std::uint64_t handle) const noexcept;
  /// The id a consumer cached on container `v` (a stack or frame id), if any.
  [[nodiscard]] std::optional<std::uint32_t> cached(snap_value v) const noexcept;
  /// Caches `id` on container `v`; with `exclusive` and a container held by one parent only,
  /// frees it instead, leaving `id` (tagged as a stack or frame) in the memo.
  void settle(snap_value v, std::uint32_t id, bool is_stack, bool exclusive);
  /// Held by at most one container (and no memo fetch): safe to free once its parent goes.
  [[nodiscard]] bool unshared(snap_value v) const noexcept;
  /// A stack / frame id left by settle() in place of a freed container.
  [[nodiscard]] std::optional<std::uint32_t> settled_stack(snap_value v) const noexcept;
  [[nodiscard]] std::optional<std::uint32_t> settled_frame(snap_value v) const noexcept;

  /// A frames list read in one go with its flat entry (scan_flat_dict): a list made by nothing
  /// else, memoized at the next index after the entry, of frames that are either flat dicts made
  /// in it (memoized at consecutive indices) or memo fetches of frames already interned (as
  /// torch writes them: one dict per distinct frame, shared by every traceback). The sink interns
  /// the new frames and the stack and leaves their ids here; the machine then memoizes those.
  struct inline_list {
    /// Elements of one list: pickle appends at most 1000 items at once.
    static constexpr std::size_t max_frames = 1000;
    bool present = false;
    std::uint64_t memo = 0;                          ///< the list's memo index
    std::size_t count = 0, fresh = 0, used = 0;      ///< elements; dicts made; items used
    std::array<std::uint64_t, max_frames> source;    ///< see element_is_fresh
    std::array<std::uint64_t, max_frames> dict_memo; ///< new dict j's memo index
    std::array<std::uint32_t, max_frames + 1> first; ///< dict j's items: [first[j], first[j + 1])
    std::array<std::uint64_t, 8 * max_frames> items; ///< the new dicts' keys and values
    std::array<std::uint32_t, max_frames> frame_ids; ///< new dict j's frame, set by the sink
    std::uint32_t stack = 0;                         ///< set by the sink
    /// Element k: make(t_inline, j) for new dict j, else the handle fetched from the memo (a
    /// t_frame, or a dict container with its frame id cached).
    [[nodiscard]] static bool element_is_fresh(std::uint64_t source) noexcept {
      return snap::tag_of(source) == snap::t_inline;
    }
  };
  /// The frames list of the flat entry being handed to entry_sink::flat_entry, if it has one
  /// (its "frames" value is then a t_inline handle).
  [[nodiscard]] inline_list* inline_frames() const noexcept { return inline_; }

  using block_record = detail::block_record;
  using block_store = detail::block_store;
  using block_layout = detail::block_layout;
  static constexpr std::uint8_t has_address = block_record::has_address,
                                has_requested = block_record::has_requested,
                                has_frames = block_record::has_frames,
                                promoted = block_record::promoted;
  /// The record of a t_block value; null for anything else (and for a promoted one).
  [[nodiscard]] const block_record* block_of(snap_value v) const noexcept;
  struct container;
  /// The container a promoted block record became; null for anything else.
  [[nodiscard]] const container* promoted_block(std::uint64_t v) const noexcept;
  [[nodiscard]] std::size_t block_count() const noexcept { return blocks_.size(); }
  /// Whether a block record was fetched from the memo (it may then be held twice).
  [[nodiscard]] bool block_fetched() const noexcept { return block_fetched_; }
  /// Record `index` will not be read again (see snapshot_import.cpp's read_segments for when
  /// that is known): its chunk is freed once every record in it is done.
  void block_done(std::size_t index) { blocks_.done(index); }

  struct box {
    std::uint64_t payload = 0; ///< int value, double bits, or arena offset
    std::uint64_t offset = 0;  ///< byte offset of the creating opcode
    std::uint32_t aux = 0;     ///< string / big-int length
    pickle_kind kind = pickle_kind::none;
    bool action = false; ///< the str "action" (see has_action)
    /// The str "frames" (frames_key), or "blocks" or "state" (owner_key): own_dict_traceback.
    std::uint8_t dict_key = 0;
  };
  static constexpr std::uint8_t frames_key = 1, owner_key = 2;
  struct container {
    std::vector<std::uint64_t> items; ///< after the run, if any
    std::uint64_t offset = 0;
    /// Items [0, run_count) are the handles run_first, run_first + 1, ... (rows or blocks).
    std::uint64_t run_first = 0;
    std::uint32_t run_count = 0;
    std::uint32_t memo = 0xffffffffu;
    std::uint32_t refs = 0;
    std::uint32_t cached = 0xffffffffu;
    pickle_kind kind = pickle_kind::none;
    bool converted = false; ///< cached is the row this entry dict became
    /// Counts `item` (a row or block handle) in the run where it is the next one of it, as the
    /// list's next item; false, having changed nothing, where it is not.
    bool extend_run(std::uint64_t item) noexcept {
      if (!items.empty() || run_count == snap::none32 ||
          (run_count != 0 && item != run_first + run_count))
        return false;
      if (run_count == 0)
        run_first = item;
      ++run_count;
      return true;
    }
  };

private:
  friend class snap_value;
  friend struct snap_machine;
  const std::uint8_t* data_ = nullptr; ///< the window [0, end_) at file offset base_
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t base_ = 0, total_ = 0;
  input_file* file_ = nullptr;
  std::vector<std::uint8_t> buffer_;
  std::unique_ptr<read_ahead> ahead_; ///< a large file: its next block read on another thread
  std::string source_;
  pickle_limits limits_;
  entry_sink* sink_ = nullptr; ///< null: no entry becomes a row (a plain pickle_document)
  int protocol_ = 0;
  std::uint64_t created_ = 0;
  std::string arena_; ///< string and big-int bytes
  std::vector<box> boxes_;
  std::vector<container> containers_;
  std::vector<std::uint32_t> free_;
  std::uint64_t live_items_ = 0;     ///< items added to containers not yet released (about)
  mutable std::uint64_t budget_ = 0; ///< memory_budget(), read at the first check
  snap_memo memo_;
  /// PUTs that named a slot already stored (see key_cache).
  std::uint64_t memo_overwrites_ = 0;
  std::uint64_t root_ = 0;
  inline_list* inline_ = nullptr;
  block_store blocks_;
  mutable bool block_fetched_ = false;
  std::vector<block_layout> layouts_;
  std::uint16_t last_layout_ = 0;
  std::array<std::pair<std::uint64_t, std::uint8_t>, 4> states_{}; ///< state str -> block_state
  std::vector<std::uint32_t> state_boxes_; ///< the state strs records name (block_record)
  void release(std::uint64_t index);
  /// A block dict's items (see block_record) as a t_block handle; 0 when they are not one.
  std::uint64_t compact_block(std::span<const std::uint64_t> items, std::uint64_t offset);
  /// A "frames" list that a dict going into a list holds alone: its stack id (t_stack) in its
  /// place, the list freed (entry_sink::own_traceback); `frames` is left as it was otherwise.
  void own_traceback(std::uint64_t& frames, std::uint64_t offset);
  /// own_traceback() for the "frames" value of a segment's or block's dict that nothing else
  /// holds, as a list takes it.
  void own_dict_traceback(std::vector<std::uint64_t>& items, std::uint64_t offset);
  int layout_of(std::span<const std::uint64_t> items);
  [[nodiscard]] std::uint64_t block_value(const block_record& b, std::size_t i) const noexcept;
  /// Throws the reader's one-line input_error at `offset` (opcode `op`).
  [[noreturn, gnu::cold]] void fail_at(std::uint64_t offset, std::uint8_t op, std::string_view code,
                                       std::string_view title, std::string message,
                                       std::string hint = {}) const;
  [[nodiscard]] bool has_action(std::span<const std::uint64_t> items) const noexcept;
  std::uint64_t refill(std::size_t n, std::size_t chunk);
  /// A flat dict's keys and values, alternating (at most 64 pairs: 1024 bytes of input), and
  /// where it goes in the memo.
  struct flat_items {
    std::array<std::uint64_t, 128> handles;
    std::size_t count = 0;
    std::size_t containers = 0; ///< values fetched that are containers
    bool action = false;        ///< a key is the str "action" (see has_action)
    std::uint64_t memo = 0;     ///< the memo index the dict is put at
    inline_list list;           ///< its frames list, when present
    [[nodiscard]] std::span<const std::uint64_t> span() const noexcept {
      return {handles.data(), count};
    }
  };
  /// Keys a flat dict fetched, as written (the fetch opcode and its index, up to 8 bytes) with
  /// what they fetched: the dicts of a file share a few keys, which are then matched by their
  /// bytes instead of looked up in the memo. Valid while no PUT has replaced a stored slot.
  struct key_cache {
    static constexpr std::size_t max_keys = 32;   ///< by position in the dict
    std::uint64_t overwrites = ~std::uint64_t{0}; ///< memo_overwrites_ when they were learnt
    std::size_t count = 0;
    std::array<std::uint64_t, max_keys> code{}, mask{}, handle{};
    std::array<std::uint8_t, max_keys> length{};
    std::array<bool, max_keys> action{};       ///< the key is the str action (see has_action)
    std::array<std::uint8_t, max_keys> slot{}; ///< entry_sink::key_slot's
  };
  bool fetch_key(key_cache& keys, const std::uint8_t*& p, std::size_t k, std::uint64_t& out,
                 bool& action) const;
  void check_keys(key_cache& keys) const;
  static bool known_key(const key_cache& keys, const std::uint8_t*& p, std::size_t k) noexcept;
  mutable key_cache entry_keys_; ///< the keys of entries and blocks
  mutable key_cache frame_keys_; ///< the keys of frames in an inline list
  const std::uint8_t* open_flat_dict(std::uint64_t& memo, const std::uint8_t*& stop) const;
  std::size_t scan_flat_dict(flat_items& items, std::uint64_t& ints) const;
  template <typename Value>
  std::size_t scan_known_keys(std::uint64_t& memo, std::size_t& count, Value&& value) const;
  std::size_t scan_slots(entry_slots& e, std::uint64_t& ints) const;
  std::size_t scan_block(block_items& b, std::uint64_t& ints) const;
  bool scan_inline_list(const std::uint8_t*& p, const std::uint8_t* stop, flat_items& items,
                        std::uint64_t& ints) const;
  [[nodiscard]] bool frame_ref(std::uint64_t v) const noexcept;
  bool fast_put(const std::uint8_t*& p, std::uint64_t next, std::uint64_t& index) const;
  bool skip_frames(const std::uint8_t*& p) const;
  bool fast_get(const std::uint8_t*& p, std::uint64_t& out) const;
  bool fast_value(const std::uint8_t*& p, std::uint64_t& out, std::uint64_t& ints) const;
};

// --- snap_value, inline: the importer calls these per field -------------------------------

using namespace snap; // NOLINT(google-build-using-namespace): private header, tags only

inline pickle_kind snap_value::kind() const noexcept {
  if (s_ == nullptr)
    return pickle_kind::none;
  switch (tag_of(v_)) {
  case t_false:
  case t_true:
    return pickle_kind::boolean;
  case t_int:
    return pickle_kind::integer;
  case t_box:
    return s_->boxes_[payload_of(v_)].kind;
  case t_container: {
    const auto& c = s_->containers_[payload_of(v_)];
    return c.converted ? pickle_kind::dict : c.kind;
  }
  case t_row:
  case t_frame:
  case t_block:
    return pickle_kind::dict;
  case t_stack:
  case t_empty:
    return pickle_kind::list;
  default:
    return pickle_kind::none;
  }
}
inline std::uint64_t snap_value::offset() const noexcept {
  if (s_ != nullptr && tag_of(v_) == t_box)
    return s_->boxes_[payload_of(v_)].offset;
  if (s_ != nullptr && tag_of(v_) == t_container)
    return s_->containers_[payload_of(v_)].offset;
  if (s_ != nullptr && tag_of(v_) == t_block)
    return s_->blocks_[payload_of(v_)].offset();
  return where_;
}
inline bool snap_value::is_sequence() const noexcept {
  const auto k = kind();
  return k == pickle_kind::list || k == pickle_kind::tuple || k == pickle_kind::set;
}
inline std::optional<bool> snap_value::as_bool() const noexcept {
  if (s_ == nullptr || (tag_of(v_) != t_true && tag_of(v_) != t_false))
    return std::nullopt;
  return tag_of(v_) == t_true;
}
inline std::optional<std::int64_t> snap_value::as_int() const noexcept {
  if (s_ == nullptr)
    return std::nullopt;
  if (tag_of(v_) == t_int)
    return inline_int(v_);
  if (tag_of(v_) == t_true || tag_of(v_) == t_false)
    return tag_of(v_) == t_true ? 1 : 0;
  if (tag_of(v_) == t_box && s_->boxes_[payload_of(v_)].kind == pickle_kind::integer)
    return static_cast<std::int64_t>(s_->boxes_[payload_of(v_)].payload);
  return std::nullopt;
}
inline std::optional<std::uint64_t> snap_value::as_uint() const noexcept {
  if (auto i = as_int())
    return *i < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(*i));
  if (kind() != pickle_kind::big_integer)
    return std::nullopt;
  const auto& b = s_->boxes_[payload_of(v_)];
  return wide_long_as_uint(reinterpret_cast<const std::uint8_t*>(s_->arena_.data()) + b.payload,
                           b.aux);
}
inline std::optional<double> snap_value::as_double() const noexcept {
  if (kind() == pickle_kind::floating)
    return std::bit_cast<double>(s_->boxes_[payload_of(v_)].payload);
  if (auto i = as_int())
    return static_cast<double>(*i);
  if (auto u = as_uint())
    return static_cast<double>(*u);
  return std::nullopt;
}
inline std::optional<std::string_view> snap_value::as_string() const noexcept {
  const auto k = kind();
  if (k != pickle_kind::string && k != pickle_kind::bytes)
    return std::nullopt;
  const auto& b = s_->boxes_[payload_of(v_)];
  return std::string_view(s_->arena_.data() + b.payload, b.aux);
}
inline std::optional<std::uint32_t> snap_value::row() const noexcept {
  if (s_ == nullptr)
    return std::nullopt;
  if (tag_of(v_) == t_row)
    return static_cast<std::uint32_t>(payload_of(v_));
  if (tag_of(v_) == t_container && s_->containers_[payload_of(v_)].converted)
    return s_->containers_[payload_of(v_)].cached;
  return std::nullopt;
}
inline bool snap_value::rows_from(std::uint64_t first) const noexcept {
  if (s_ == nullptr || tag_of(v_) != t_container)
    return false;
  const auto& c = s_->containers_[payload_of(v_)];
  return c.kind == pickle_kind::list && c.items.empty() &&
         (c.run_count == 0 || c.run_first == make(t_row, first));
}
inline std::optional<std::uint32_t> snap_value::string_key() const noexcept {
  if (kind() != pickle_kind::string)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v_));
}
inline std::size_t snap_value::size() const noexcept {
  if (s_ != nullptr && tag_of(v_) == t_block) {
    if (const auto* c = s_->promoted_block(v_))
      return c->items.size() / 2;
    return s_->layouts_[s_->blocks_[payload_of(v_)].layout()].count;
  }
  if (s_ == nullptr || tag_of(v_) != t_container)
    return 0;
  const auto& c = s_->containers_[payload_of(v_)];
  if (c.converted)
    return 0;
  const auto n = c.run_count + c.items.size();
  return c.kind == pickle_kind::dict ? n / 2 : n;
}
inline snap_value snap_value::at(std::size_t i) const noexcept {
  const auto& c = s_->containers_[payload_of(v_)];
  if (i < c.run_count)
    return {s_, c.run_first + i, c.offset};
  return {s_, c.items[i - c.run_count], c.offset};
}
inline snap_value snap_value::key(std::size_t i) const noexcept {
  if (tag_of(v_) == t_block) {
    if (const auto* c = s_->promoted_block(v_))
      return {s_, c->items[2 * i], c->offset};
    const auto& b = s_->blocks_[payload_of(v_)];
    return {s_, s_->layouts_[b.layout()].keys[i], b.offset()};
  }
  const auto& c = s_->containers_[payload_of(v_)];
  return {s_, c.items[2 * i], c.offset};
}
inline snap_value snap_value::value(std::size_t i) const noexcept {
  if (tag_of(v_) == t_block) {
    if (const auto* c = s_->promoted_block(v_))
      return {s_, c->items[2 * i + 1], c->offset};
    const auto& b = s_->blocks_[payload_of(v_)];
    return {s_, s_->block_value(b, i), b.offset()};
  }
  const auto& c = s_->containers_[payload_of(v_)];
  return {s_, c.items[2 * i + 1], c.offset};
}
inline snap_value snap_value::find(std::string_view name) const noexcept {
  if (kind() != pickle_kind::dict)
    return {};
  // Backwards: with a repeated key, Python keeps the last value.
  for (std::size_t i = size(); i > 0; --i)
    if (key(i - 1).as_string() == name)
      return value(i - 1);
  return {};
}

inline std::optional<std::uint32_t> snap_stream::cached(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_container)
    return std::nullopt;
  const auto& c = containers_[payload_of(v.raw())];
  if (c.converted || c.cached == none32)
    return std::nullopt;
  return c.cached;
}

inline std::optional<std::uint32_t> snap_stream::settled_stack(snap_value v) const noexcept {
  if (tag_of(v.raw()) == t_empty)
    return 0u; // no_stack: what an empty traceback interns to
  if (tag_of(v.raw()) != t_stack)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v.raw()));
}

inline std::optional<std::uint32_t> snap_stream::settled_frame(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_frame)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v.raw()));
}

inline const snap_stream::block_record* snap_stream::block_of(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_block)
    return nullptr;
  const auto& b = blocks_[payload_of(v.raw())];
  return b.layout() == promoted ? nullptr : &b;
}

inline const snap_stream::container* snap_stream::promoted_block(std::uint64_t v) const noexcept {
  if (tag_of(v) != t_block)
    return nullptr;
  const auto& b = blocks_[payload_of(v)];
  return b.layout() == promoted ? &containers_[b.address] : nullptr;
}

inline bool snap_stream::unshared(snap_value v) const noexcept {
  return tag_of(v.raw()) == t_container && containers_[payload_of(v.raw())].refs <= 1;
}

} // namespace tdiag::trace::detail
