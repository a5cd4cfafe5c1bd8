// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Where snapshot_rows keeps its rows: reserved for what the file can hold, their pages made
// resident ahead of the writer, the whole held to the memory budget as they come.
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>

#include <algorithm>

#include "snapshot_rows.hpp"

namespace tdiag::trace::detail {

void snapshot_rows::attach(const snap_stream& s) {
  s_ = &s;
  stream_ = &s;
  // Reserving what the file can hold keeps the rows from being copied as they grow; pages
  // never written are never resident. Every entry takes at least ~24 bytes of pickle.
  const std::uint64_t cap = std::min(s.size() / 24, memory_budget() / bytes_per_entry);
  rows_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(cap, std::uint64_t{1} << 32)));
  // A file of more than a few MiB of rows: their pages are made resident on another thread.
  const auto row_bytes = rows_.capacity() * sizeof(memory_event);
  if (row_bytes >= 4 * page_prefaulter::step)
    (void)prefaulter_.start(rows_.data(), row_bytes);
}

// Makes the next rows' pages resident in one call: one page fault per 4 KiB of rows cost more
// than the rows' own writing. The rows no longer ask for huge pages: on a virtual machine whose
// memory another process had just left fragmented (the benchmark's pickle.load peer), making
// them resident stalled on compaction (a 1M-event load's median 0.290 s, 0.250 s without).
void snapshot_rows::populate() {
  // Up to a 2 MiB boundary past the next row, as page_prefaulter steps.
  constexpr std::uintptr_t step = page_prefaulter::step;
  const auto data = reinterpret_cast<std::uintptr_t>(rows_.data());
  const auto at = data + rows_.size() * sizeof(memory_event);
  const auto cap = data + rows_.capacity() * sizeof(memory_event);
  const auto e = std::min(cap, ((at + sizeof(memory_event)) & -step) + step);
  const auto full = (e - data) / sizeof(memory_event); // rows wholly before e
  populated_ = full <= rows_.size() ? ~std::size_t{0} : full;
  if (populated_ == ~std::size_t{0}) {
    prefaulter_.stop(); // the rows are full: the next one moves them off the thread's range
    return;
  }
  if (prefaulter_.running()) {
    prefaulter_.writer_at(at - data);
    if (prefaulter_.done() >= e - data)
      return;
  }
  // Only a hint: a kernel without it faults the pages in as they are written.
  (void)populate_pages(at, e - at);
}

// Extrapolates the entries from the share of the file read: refuses before memory runs out.
void snapshot_rows::check_progress() const {
  check_import_budget(progress());
}

void snapshot_rows::too_large(bool from_bad_alloc) const {
  refuse_import(progress(), from_bad_alloc);
}

import_progress snapshot_rows::progress() const noexcept {
  import_progress p;
  p.code = codes::snapshot_too_large;
  p.title = "memory snapshot needs more memory than is available";
  p.file = s_->source_name();
  p.events_counted = rows_.size();
  p.share_read = s_->size() == 0 ? 1.0 : double(s_->position()) / double(s_->size());
  p.bytes_so_far = rows_.size() * bytes_per_entry;
  return p;
}

} // namespace tdiag::trace::detail
