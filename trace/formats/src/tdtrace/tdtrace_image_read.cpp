// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reopens a row image: the rows stay in the file, mapped read-only and private, and each store
// views them (event_store copies them on a first mutation). Nothing is trusted: one pass per
// store checks every id against the tables, every time against the importers' limits and the
// stored lane index against the rows, before any analysis sees them.
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/detail/record_ids.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/mman.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "guarded_map.hpp"
#include "tdtrace_bytes.hpp"
#include "tdtrace_format.hpp"
#include "tdtrace_image.hpp"

namespace tdiag::trace::detail {

row_directory decode_row_directory(std::span<const std::byte> body, bool newer_minor) {
  byte_reader in(body);
  row_directory directory;
  const std::size_t blocks = in.count();
  for (std::size_t i = 0; i < blocks; ++i) {
    row_block blk;
    blk.kind = in.u8();
    blk.record_size = static_cast<std::uint32_t>(in.varint());
    blk.layout = in.u64();
    blk.count = in.varint();
    blk.offset = in.varint();
    const std::size_t lanes = in.count();
    for (std::size_t l = 0; l <= lanes; ++l)
      blk.lane_offsets.push_back(static_cast<std::size_t>(in.varint()));
    for (std::size_t l = 0; l < lanes; ++l)
      blk.lane_max_duration.push_back(static_cast<std::int64_t>(in.varint()));
    directory.blocks.push_back(std::move(blk));
  }
  const std::size_t waits = in.count();
  for (std::size_t i = 0; i < waits; ++i) {
    sync_wait w;
    w.range_index = static_cast<std::uint32_t>(in.varint());
    w.record_correlation = static_cast<std::uint32_t>(in.varint());
    w.stream = static_cast<std::int64_t>(unzigzag(in.varint()));
    directory.sync_waits.push_back(w);
  }
  // Absent from minor 0 (collectives came with minor 1).
  const std::size_t collectives = in.done() ? 0 : in.count();
  for (std::size_t i = 0; i < collectives; ++i) {
    collective_info c;
    c.correlation = static_cast<std::uint32_t>(in.varint());
    c.group = static_cast<string_id>(in.varint());
    c.group_ranks = static_cast<string_id>(in.varint());
    c.collective = static_cast<string_id>(in.varint());
    c.group_size = static_cast<std::int64_t>(unzigzag(in.varint()));
    c.seq = static_cast<std::int64_t>(unzigzag(in.varint()));
    directory.collectives.push_back(c);
  }
  // Absent before minor 2.
  if (!in.done()) {
    const std::size_t sums = in.count(8);
    if (sums != directory.blocks.size())
      throw malformed(fmt::format("the row directory holds {} checksums for {} row blocks", sums,
                                  directory.blocks.size()));
    for (auto& blk : directory.blocks)
      blk.checksum = in.u64();
  }
  // Absent before minor 3. Six varints each.
  const std::size_t details = in.done() ? 0 : in.count(6, sizeof(memory_detail));
  for (std::size_t i = 0; i < details; ++i) {
    memory_detail d;
    d.pool = in.varint();
    d.device_free = in.varint();
    d.total_allocated = static_cast<std::int64_t>(unzigzag(in.varint()));
    d.total_reserved = static_cast<std::int64_t>(unzigzag(in.varint()));
    d.correlation = static_cast<std::uint32_t>(in.varint());
    d.user_metadata = static_cast<string_id>(in.varint());
    directory.memory_details.push_back(d);
  }
  if (!in.done() && !newer_minor)
    throw malformed("the row directory is longer than its entries");
  return directory;
}

namespace {

constexpr std::array<const char*, 9> kind_names = {
    "kernel", "copy", "API call", "range", "marker", "memory", "assertion", "flow", "counter"};

// A whole row area read into memory.
class file_copy {
public:
  file_copy(std::shared_ptr<std::uint64_t[]> buffer, std::size_t size)
      : buffer_(std::move(buffer)), size_(size) {}
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return {reinterpret_cast<const std::byte*>(buffer_.get()), size_};
  }

private:
  std::shared_ptr<std::uint64_t[]> buffer_;
  std::size_t size_;
};

std::shared_ptr<std::uint64_t[]> buffer_for(std::uint64_t size) {
  if (size > memory_budget())
    throw malformed(fmt::format("{} bytes of rows cannot be mapped and exceed the memory budget "
                                "({} bytes; TDIAG_MEMORY_LIMIT)",
                                size, memory_budget()));
  return std::shared_ptr<std::uint64_t[]>(new std::uint64_t[(size + 7) / 8]);
}

template <typename Record> bool times_in_limits(const Record& r) noexcept {
  auto ok = [](std::int64_t t) { return t >= -time_limit && t <= time_limit; };
  if constexpr (requires { r.end; })
    return ok(r.start) && ok(r.end) && r.end >= r.start;
  else
    return ok(r.time);
}

template <typename Record>
void adopt_block(event_store<Record>& store, const row_block& blk, const row_source& rows,
                 std::uint64_t rows_end, bool verify_checksums, const trace& tables) {
  const char* what = kind_names[blk.kind];
  if (blk.record_size != sizeof(Record) || blk.layout != row_layout<Record>())
    throw malformed(fmt::format("its {} rows have another record layout ({} bytes, layout "
                                "{:016x}; this build reads {} bytes, {:016x})",
                                what, blk.record_size, blk.layout, sizeof(Record),
                                row_layout<Record>()));
  if (blk.offset % row_alignment != 0 || blk.offset > rows_end ||
      blk.count > (rows_end - blk.offset) / sizeof(Record))
    throw malformed(fmt::format("its {} {} rows at offset {} run past the row area ({} bytes)",
                                blk.count, what, blk.offset, rows_end));
  const std::size_t lanes = tables.lanes.size();
  if (blk.lane_max_duration.size() != lanes)
    throw malformed(fmt::format("the lane index of its {} rows has {} lanes, its lane table {}",
                                what, blk.lane_max_duration.size(), lanes));
  const std::size_t strings = tables.strings.size();
  const std::size_t stacks = tables.stacks.stack_count();
  auto check = [&](const Record& r) {
    Record ids = r;
    bool ok = times_in_limits(r);
    if constexpr (requires { r.detail; })
      ok = ok && r.detail <= tables.memory_details.size();
    visit_ids(
        ids, [&](string_id& id) { ok = ok && id < strings; },
        [&](stack_id& id) { ok = ok && id < stacks; }, [&](lane_id& id) { ok = ok && id < lanes; });
    return ok;
  };
  row_bytes bytes = rows(blk.offset, blk.count * sizeof(Record));
  if (verify_checksums && blk.checksum) {
    row_checksum sum;
    sum.update(bytes.bytes);
    if (sum.digest() != *blk.checksum)
      throw checksum_mismatch(
          fmt::format("its {} rows do not match their checksum (the file is damaged)", what));
  }
  const std::span<const Record> records(reinterpret_cast<const Record*>(bytes.bytes.data()),
                                        static_cast<std::size_t>(blk.count));
  const bool adopted = store.adopt_finalized(records, std::move(bytes.keeper), blk.lane_offsets,
                                             blk.lane_max_duration, check);
  // Zeros where another process truncated the file mid-read: said as what happened.
  if (bytes.mapping != nullptr && bytes.mapping->changed())
    throw malformed("another process truncated it while its rows were read (it changed size)");
  if (!adopted)
    throw malformed(fmt::format("its {} rows do not match their lane index, name undefined "
                                "strings, stacks or lanes, or hold times beyond 2^60 ns or "
                                "ending before they start",
                                what));
}

// Memory rows of a row image before minor 3: events with their details (memory_record),
// checked as any block, then copied into the store as events and details.
void adopt_memory_records(event_store<memory_event>& store, const row_block& blk,
                          const row_source& rows, std::uint64_t rows_end, bool verify_checksums,
                          trace& into) {
  event_store<memory_record> records;
  adopt_block(records, blk, rows, rows_end, verify_checksums, into);
  if (records.size() > memory_budget() / sizeof(memory_event))
    throw malformed(fmt::format("its {} memory rows need {} bytes, over the memory budget ({} "
                                "bytes; TDIAG_MEMORY_LIMIT)",
                                records.size(), records.size() * sizeof(memory_event),
                                memory_budget()));
  auto events = std::make_shared<std::vector<memory_event>>();
  events->reserve(records.size());
  for (const auto& r : records.all())
    events->push_back(into.event_of(r));
  const std::span<const memory_event> view(*events);
  if (!store.adopt_finalized(view, events, blk.lane_offsets, blk.lane_max_duration,
                             [](const memory_event&) { return true; }))
    throw malformed("its memory rows do not match their lane index");
}

} // namespace

namespace {

// The whole file, copied, or null where it changed size (`why` says so).
std::shared_ptr<const file_copy> copy_file(int fd, std::uint64_t file_size, std::string& why) {
  auto buffer = buffer_for(file_size);
  auto* out = reinterpret_cast<std::byte*>(buffer.get());
  std::uint64_t done = 0;
  while (done < file_size) {
    const auto n = ::pread(fd, out + done, static_cast<std::size_t>(file_size - done),
                           static_cast<off_t>(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      why = fmt::format("its rows cannot be read: {}", std::strerror(errno));
      return nullptr;
    }
    if (n == 0) {
      why = fmt::format("it changed size while being read (now {} bytes, was {})", done, file_size);
      return nullptr;
    }
    done += static_cast<std::uint64_t>(n);
  }
  return std::make_shared<const file_copy>(std::move(buffer), static_cast<std::size_t>(file_size));
}

// Maps the whole file, or returns null where it cannot be mapped (`why` says why). The size is
// checked before and after the mapping exists, before a page is touched; a file truncated later
// reads as zeros from there (guarded_map), which the caller asks changed() about.
std::shared_ptr<const guarded_map> map_file(int fd, std::uint64_t file_size, std::string& why) {
  if (size_now(fd) != static_cast<std::int64_t>(file_size)) {
    why = "it changed size while being read";
    return nullptr;
  }
  auto map = guarded_map::map(fd, static_cast<std::size_t>(file_size), why);
  if (map)
    // The check pass reads every row anyway: one populate costs less than a fault per page.
    (void)::madvise(const_cast<std::byte*>(map->bytes().data()),
                    static_cast<std::size_t>(file_size), MADV_WILLNEED);
  return map;
}

} // namespace

row_source mapped_rows(const std::filesystem::path& path, std::uint64_t file_size) {
  // Our own descriptor, opened now (the input file may be closed before the rows are first
  // asked for): standard input's for "-", which a regular file redirected in can be.
  const int own = path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                              : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int open_error = own < 0 ? errno : 0;
  auto held = std::shared_ptr<int>(new int(own), [](int* p) {
    if (*p >= 0)
      ::close(*p);
    delete p;
  });
  // Read or mapped on first use: a chunked file never is.
  auto area = std::make_shared<row_bytes>();
  return [area, held, file_size, open_error](std::uint64_t offset,
                                             std::uint64_t size) -> row_bytes {
    if (!area->keeper) {
      std::string why;
      if (*held < 0)
        throw malformed(fmt::format("it cannot be opened again to read its rows: {}",
                                    std::strerror(open_error)));
      if (file_size < copied_rows_below) {
        if (auto copy = copy_file(*held, file_size, why))
          *area = {copy->bytes(), copy};
      } else if (auto map = map_file(*held, file_size, why)) {
        *area = {map->bytes(), map, map.get()};
      }
      if (!area->keeper)
        throw malformed(why);
    }
    return {area->bytes.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size)),
            area->keeper, area->mapping};
  };
}

row_source copied_rows(std::span<const std::byte> bytes) {
  // The input stays held while its rows are copied (a row image piped in): the budget covers
  // the input and every copy together, not each copy alone.
  auto copied = std::make_shared<std::uint64_t>(0);
  return [bytes, copied](std::uint64_t offset, std::uint64_t size) -> row_bytes {
    const auto held = bytes.size() + *copied;
    if (size > memory_budget() || held > memory_budget() - size)
      throw malformed(fmt::format("its rows need {} bytes of copies beside the {} bytes read, "
                                  "more than the memory budget ({} bytes; TDIAG_MEMORY_LIMIT)",
                                  *copied + size, bytes.size(), memory_budget()));
    *copied += size;
    auto buffer = buffer_for(size);
    auto* out = reinterpret_cast<std::byte*>(buffer.get());
    std::memcpy(out, bytes.data() + offset, static_cast<std::size_t>(size));
    return {{out, static_cast<std::size_t>(size)}, buffer};
  };
}

void adopt_row_image(std::span<const std::byte> body, const row_source& rows,
                     std::uint64_t rows_end, bool verify_checksums, trace& into, bool newer_minor) {
  row_directory directory = decode_row_directory(body, newer_minor);
  std::array<bool, kind_names.size()> seen{};
  try {
    for (const auto& d : directory.memory_details)
      if (d.user_metadata >= into.strings.size())
        throw malformed("a memory detail names a string the file does not hold");
    into.memory_details = std::move(directory.memory_details);
    for (const auto& blk : directory.blocks) {
      if (blk.kind >= kind_names.size())
        throw malformed(fmt::format("a row block of unknown kind {}", blk.kind));
      if (seen[blk.kind])
        throw malformed(fmt::format("two blocks of {} rows", kind_names[blk.kind]));
      seen[blk.kind] = true;
      std::size_t kind = 0;
      into.for_each_store([&](auto& store) {
        if (kind++ != blk.kind)
          return;
        if constexpr (std::is_same_v<std::decay_t<decltype(store)>, event_store<memory_event>>)
          if (blk.layout == row_layout<memory_record>() && blk.record_size == sizeof(memory_record))
            return adopt_memory_records(store, blk, rows, rows_end, verify_checksums, into);
        adopt_block(store, blk, rows, rows_end, verify_checksums, into);
      });
    }
    for (const auto& w : directory.sync_waits)
      if (w.range_index >= into.ranges.size())
        throw malformed("a sync wait names a range the file does not hold");
    for (collective_info c : directory.collectives)
      visit_ids(
          c,
          [&](string_id& id) {
            if (id >= into.strings.size())
              throw malformed("a collective names a string the file does not hold");
          },
          [](stack_id&) {}, [](lane_id&) {});
  } catch (...) {
    into.for_each_store([](auto& store) { store.clear(); });
    into.memory_details.clear();
    throw;
  }
  into.sync_waits = directory.sync_waits;
  into.collectives = directory.collectives;
}

} // namespace tdiag::trace::detail
