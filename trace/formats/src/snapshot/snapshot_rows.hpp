// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the snapshot importer's entry_sink. Every device_traces entry the pickle machine
// meets becomes a memory_event row at once, staged in file order with its time still in
// microseconds (the importer places rows on lanes once the whole dict is read); tracebacks are
// interned as they come. Also the importer's refusal of a snapshot too large for the memory
// budget, extrapolated from the share of the file read.
#pragma once

#include <tensordiag/trace/events.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "import_budget.hpp"
#include "page_prefaulter.hpp"
#include "snapshot_fields.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {

// Staged rows carry two flags in memory_event's reserved byte until the importer places them.
constexpr std::uint8_t row_is_marker = 1; ///< unknown action: its detail's user_metadata names it
constexpr std::uint8_t row_has_no_time = 2;
/// Resident bytes one trace entry costs while it streams in: its row and its memo slot.
constexpr std::uint64_t bytes_per_entry = sizeof(memory_event) + sizeof(std::uint64_t);

class snapshot_rows final : public entry_sink, public snap_fields {
public:
  explicit snapshot_rows(trace& t) : t_(t) {}
  /// Reserves room for the rows `s` can hold (pages never written are never resident).
  void attach(const snap_stream& s);

  std::uint32_t entry(snap_value e, bool exclusive) override;
  [[nodiscard]] bool readable(snap_value e) override;
  bool flat_entry(std::span<const std::uint64_t> items, std::uint64_t offset,
                  std::uint32_t& row) override;
  [[nodiscard]] std::uint8_t key_slot(std::uint64_t key) override;
  bool slot_entry(const entry_slots& e, std::uint32_t& row) override;
  /// A frame interned: every 65,536 the pickle's footprint, the stacks and strings included, is
  /// held to the budget (one entry of 800k distinct frames interned them all at its end).
  void count_frame() {
    if ((++frames_interned_ & 0xffff) == 0) [[unlikely]]
      s_->check_footprint(s_->position(), 0);
  }
  [[nodiscard]] std::uint64_t held_bytes() const noexcept override {
    // (The rows are held to the budget as the events they extrapolate to: check_progress.)
    return t_.stacks.memory_bytes() + t_.strings.memory_bytes();
  }
  [[nodiscard]] frame_list stack_frames(std::uint32_t stack) const override {
    return t_.stacks.stack(stack);
  }
  std::optional<std::uint32_t> own_traceback(snap_value frames) override;

  /// A traceback list (innermost frame first) interned once: a shared list (the pickle memo)
  /// is cached on the list, one only an entry held is freed with it (`exclusive`).
  stack_id stack_of(snap_value frames, bool exclusive = false);

  /// The staged rows, in the order the entries were met (the last is in: the rows' pages are
  /// no longer made resident ahead).
  [[nodiscard]] std::vector<memory_event>& rows() noexcept {
    prefaulter_.stop();
    return rows_;
  }
  [[nodiscard]] std::size_t row_count() const noexcept { return rows_.size(); }
  /// The earliest time_us of any entry, or 0 without one.
  [[nodiscard]] std::int64_t origin_us() const noexcept {
    return origin_us_ == std::numeric_limits<std::int64_t>::max() ? 0 : origin_us_;
  }
  /// The rows staged so far, the share of the file read and the memory they hold.
  [[nodiscard]] import_progress progress() const noexcept;
  /// Throws the one line for a snapshot that does not fit (codes::snapshot_too_large).
  [[noreturn]] void too_large(bool from_bad_alloc) const;

private:
  // action_of() results past the memory_action values.
  static constexpr std::uint8_t action_unknown = 0xfc, action_absent = 0xfd, action_not_str = 0xfe,
                                action_uncached = 0xff;
  // An entry on its way to its row (the rest of it is written into the row directly).
  struct staged {
    std::int64_t time_us = 0;
    bool has_time = false;
    std::uint8_t action = action_absent;
    std::uint64_t action_value = 0; ///< the "action" value's handle
    std::uint64_t device_free = 0;
    string_id user_metadata = no_string;
  };
  // What one memoized string means to an entry, learnt once per string.
  struct box_facts {
    std::uint8_t field = 0;  ///< as a key: the entry_field it names
    std::uint8_t action = 0; ///< as an "action" value: what action_of() found
    string_id meta = 0;      ///< as a "user_metadata" value: its interned id
    string_id text = 0;      ///< as a frame's "name" or "filename": its interned id
  };

  bool read_fields(std::span<const std::uint64_t> items, snap_value dict, std::uint64_t offset,
                   bool exclusive, memory_event& m, staged& st);
  std::uint32_t finish(memory_event& m, const staged& st, snap_value dict);
  [[gnu::noinline]] std::uint32_t finish_detail(memory_event& m, const staged& st, snap_value dict);
  std::uint32_t detail_for(const memory_detail& d);
  struct frame_parts {
    std::uint64_t name, file, line;
  };
  bool plain_frame(std::span<const std::uint64_t> items, frame_parts& f);
  bool readable_frames(snap_value v);
  /// The next row, its pages made resident ahead and the budget checked every 64 Ki rows.
  memory_event& new_row() {
    if ((rows_.size() & 0xffff) == 0xffff) [[unlikely]]
      check_progress();
    if (rows_.size() == populated_) [[unlikely]]
      populate();
    return rows_.emplace_back();
  }
  void populate();
  void check_progress() const;
  box_facts& facts(std::uint64_t box) {
    const auto index = snap::payload_of(box);
    if (index >= facts_.size()) [[unlikely]]
      grow_facts(index);
    return facts_[index];
  }
  [[gnu::noinline]] void grow_facts(std::size_t index);
  [[gnu::noinline]] std::uint8_t learn_field(std::uint64_t key);
  std::uint8_t field_of(std::uint64_t key);
  std::uint8_t action_of(std::uint64_t value, snap_value entry);
  bool user_metadata(std::uint64_t value, snap_value entry, staged& st);
  frame_id frame_of(snap_value f, bool exclusive);
  bool inline_stack(memory_event& m);
  string_id frame_text(std::uint64_t value);
  [[nodiscard]] snap_stream& mutable_stream() const { return const_cast<snap_stream&>(*s_); }

  const snap_stream* s_ = nullptr;
  trace& t_;
  std::uint64_t frames_interned_ = 0; ///< see count_frame
  std::vector<memory_event> rows_;
  std::size_t populated_ = 0;  ///< rows_ slots whose pages are already resident
  page_prefaulter prefaulter_; ///< for a large file: rows_'s pages made resident ahead
  std::vector<box_facts> facts_;
  std::vector<std::uint32_t> meta_details_; ///< by string id: the detail of that metadata alone
  std::vector<frame_id> scratch_;
  /// inline_stack's name, filename and line handles of each new frame.
  std::vector<frame_parts> inline_parts_;
  std::int64_t origin_us_ = std::numeric_limits<std::int64_t>::max();
};

} // namespace tdiag::trace::detail
