// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The chunk payload codec: tables as length-prefixed lists, event stores column by column.
// Each column is one field of every record, varint-coded as a plain value, a delta from the
// previous record's value, or a difference from an earlier field of the same record (end -
// start). Sorted lanes make most deltas 0 or tiny, which zstd then squeezes to a few bits.
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/detail/record_ids.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>
#include <zlib.h>

#include "tdtrace_bytes.hpp"
#include "tdtrace_format.hpp"
#include "tdtrace_schema.hpp"

namespace tdiag::trace::detail {

static_assert(std::endian::native == std::endian::little,
              "the .tdtrace codec copies record fields as little-endian bytes");

std::uint32_t crc32_of(std::span<const std::byte> bytes) noexcept {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) { // zlib takes uInt lengths
    const auto n = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    crc = ::crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(crc);
}

std::string encode_file_header(std::uint16_t major, std::uint16_t minor, std::uint32_t flags,
                               std::uint32_t chunk_target) {
  std::string header(file_magic, sizeof file_magic);
  put_le(header, major);
  put_le(header, minor);
  put_le(header, static_cast<std::uint32_t>(file_header_size));
  put_le(header, flags);
  put_le(header, chunk_target);
  put_le<std::uint32_t>(header, 0); // reserved
  put_le(header, crc32_of(std::as_bytes(std::span(header))));
  return header;
}

std::string encode_footer(const std::vector<footer_entry>& index, std::uint64_t footer_offset) {
  std::string footer;
  put_le(footer, footer_magic);
  put_le(footer, static_cast<std::uint32_t>(index.size()));
  for (const auto& e : index) {
    put_le(footer, e.offset);
    put_le(footer, e.compressed_size);
    put_le(footer, e.event_count);
    put_le(footer, e.t_min);
    put_le(footer, e.t_max);
  }
  std::string trailer;
  put_le(trailer, footer_offset);
  put_le(trailer, static_cast<std::uint32_t>(index.size()));
  put_le(trailer, crc32_of(std::as_bytes(std::span(footer))));
  trailer.append(trailer_magic, sizeof trailer_magic);
  return footer + trailer;
}

std::string encode_chunk_header(const chunk_header& h) {
  std::string out;
  put_le<std::uint32_t>(out, chunk_magic);
  put_le(out, h.sequence);
  put_le(out, h.compressed_size);
  put_le(out, h.uncompressed_size);
  put_le(out, h.event_count);
  put_le(out, h.payload_crc);
  put_le(out, h.t_min);
  put_le(out, h.t_max);
  put_le(out, crc32_of(std::as_bytes(std::span(out))));
  put_le<std::uint32_t>(out, 0);
  return out;
}

bool decode_chunk_header(std::span<const std::byte> b, chunk_header& h, bool verify_crc) noexcept {
  if (b.size() < chunk_header_size || get_le<std::uint32_t>(b.data()) != chunk_magic)
    return false;
  if (verify_crc && get_le<std::uint32_t>(b.data() + 40) != crc32_of(b.first(40)))
    return false;
  h.sequence = get_le<std::uint32_t>(b.data() + 4);
  h.compressed_size = get_le<std::uint32_t>(b.data() + 8);
  h.uncompressed_size = get_le<std::uint32_t>(b.data() + 12);
  h.event_count = get_le<std::uint32_t>(b.data() + 16);
  h.payload_crc = get_le<std::uint32_t>(b.data() + 20);
  h.t_min = get_le<std::int64_t>(b.data() + 24);
  h.t_max = get_le<std::int64_t>(b.data() + 32);
  return true;
}

namespace {

template <typename Record>
void encode_store(std::string& out, std::uint8_t kind, std::span<const Record> records) {
  if (records.empty())
    return;
  constexpr auto fields = schema<Record>();
  std::string body;
  put_varint(body, records.size());
  put_varint(body, fields.size());
  std::string column;
  for (const auto& f : fields) {
    column.clear();
    std::uint64_t prev = 0;
    for (const Record& r : records) {
      const auto* bytes = reinterpret_cast<const std::byte*>(&r);
      const std::uint64_t v = load_field(bytes, f);
      switch (f.how) {
      case mode::plain:
        put_varint(column, f.is_signed ? zigzag(v) : v);
        break;
      case mode::delta:
        put_varint(column, zigzag(v - prev)), prev = v;
        break;
      case mode::relative:
        put_varint(column, zigzag(v - load_field(bytes, fields[f.ref])));
        break;
      case mode::raw8:
        put_le<std::uint64_t>(column, v);
        break;
      }
    }
    put_varint(body, column.size());
    body += column;
  }
  out.push_back(static_cast<char>(section_events + kind));
  put_varint(out, body.size());
  out += body;
}

// Times from a file obey the importers' invariant (within +-2^60 ns, saturate.hpp), so the
// analyses' differences and spans of them never overflow, whatever a chunk holds.
template <typename Record> void clamp_times(Record& r) noexcept {
  if constexpr (requires { r.start; })
    r.start = clamp_time(wide_int{r.start});
  if constexpr (requires { r.end; })
    r.end = clamp_time(wide_int{r.end});
  if constexpr (requires { r.time; })
    r.time = clamp_time(wide_int{r.time});
}

template <typename Record> std::vector<Record> decode_store(byte_reader& in) {
  constexpr auto fields = schema<Record>();
  const std::size_t count = in.count();
  const std::size_t field_count = in.count();
  if (count > 0 && field_count == 0)
    throw malformed("event section without columns");
  // Every known column holds at least one byte per record, and the records must fit the memory
  // budget: a chunk declaring 260M records in a few compressed bytes is skipped, not allocated.
  const std::size_t columns = std::min(field_count, fields.size());
  if (columns > 0 && count > in.left() / columns)
    throw malformed(fmt::format("{} records declared in {} bytes of columns", count, in.left()));
  if (count > memory_budget() / sizeof(Record))
    throw malformed(fmt::format("{} records declared: {} bytes, over the memory budget ({} bytes; "
                                "TDIAG_MEMORY_LIMIT)",
                                count, count * sizeof(Record), memory_budget()));
  std::vector<Record> records(count);
  for (std::size_t i = 0; i < field_count; ++i) {
    byte_reader column(in.bytes(in.varint()));
    if (i >= fields.size())
      continue; // a column added by a newer writer: skipped
    const auto& f = fields[i];
    std::uint64_t prev = 0;
    for (Record& r : records) {
      auto* bytes = reinterpret_cast<std::byte*>(&r);
      std::uint64_t v = 0;
      switch (f.how) {
      case mode::plain:
        v = f.is_signed ? unzigzag(column.varint()) : column.varint();
        break;
      case mode::delta:
        v = prev + unzigzag(column.varint()), prev = v;
        break;
      case mode::relative:
        v = load_field(bytes, fields[f.ref]) + unzigzag(column.varint());
        break;
      case mode::raw8:
        v = column.u64();
        break;
      }
      store_field(bytes, f, v);
    }
    if (!column.done())
      throw malformed("column longer than its records");
  }
  for (Record& r : records) {
    clamp_times(r);
    // The importers never make one (a negative duration is skipped and counted): a row that
    // ends before it starts is damage, and would give the analyses negative busy time.
    if constexpr (requires { r.end; })
      if (r.end < r.start)
        throw malformed(fmt::format("a record ends {} ns before it starts", r.start - r.end));
  }
  return records;
}

// --- tables, metadata ------------------------------------------------------
void begin_section(std::string& out, std::uint8_t type, const std::string& body) {
  out.push_back(static_cast<char>(type));
  put_varint(out, body.size());
  out += body;
}

std::string encode_metadata(const trace_metadata& m) {
  std::string b;
  put_string(b, m.format);
  put_string(b, m.source_path);
  put_varint(b, zigzag(static_cast<std::uint64_t>(m.time_origin_ns)));
  put_varint(b, m.dropped_records);
  put_varint(b, m.properties.size());
  for (const auto& [k, v] : m.properties) {
    put_string(b, k);
    put_string(b, v);
  }
  return b;
}

trace_metadata decode_metadata(byte_reader& in) {
  trace_metadata m;
  m.format = in.text();
  m.source_path = in.text();
  m.time_origin_ns = static_cast<std::int64_t>(unzigzag(in.varint()));
  m.dropped_records = in.varint();
  // Two strings of at least their length byte each; two std::string once decoded.
  const std::size_t n = in.count(2, 2 * sizeof(std::string));
  for (std::size_t i = 0; i < n; ++i) {
    std::string k(in.text());
    m.properties.emplace_back(std::move(k), std::string(in.text()));
  }
  return m;
}

using all_stores =
    std::tuple<std::vector<kernel_event>, std::vector<copy_event>, std::vector<api_event>,
               std::vector<range_event>, std::vector<marker_event>, std::vector<memory_record>,
               std::vector<assertion_event>, std::vector<flow_event>, std::vector<counter_event>,
               std::vector<sync_wait>, std::vector<collective_info>>;

template <std::size_t I = 0>
void decode_events(std::uint8_t kind, byte_reader& in, all_stores& stores, const id_maps& ids) {
  if constexpr (I < std::tuple_size_v<all_stores>) {
    if (kind != I)
      return decode_events<I + 1>(kind, in, stores, ids);
    using record = typename std::tuple_element_t<I, all_stores>::value_type;
    auto records = decode_store<record>(in);
    for (auto& r : records)
      visit_ids(
          r, [&](string_id& id) { id = id_maps::map(ids.strings, id, "string"); },
          [&](stack_id& id) { id = id_maps::map(ids.stacks, id, "stack"); },
          [&](lane_id& id) { id = id_maps::map(ids.lanes, id, "lane"); });
    auto& store = std::get<I>(stores);
    store.insert(store.end(), records.begin(), records.end());
  }
}

} // namespace

std::string encode_chunk_tables(const trace& chunk) {
  std::string out;
  std::string b;
  put_varint(b, chunk.strings.size() - 1);
  for (string_id i = 1; i < chunk.strings.size(); ++i)
    put_string(b, chunk.strings.name(i));
  begin_section(out, section_strings, b);

  b.clear();
  put_varint(b, chunk.stacks.frame_count() - 1);
  for (frame_id i = 1; i < chunk.stacks.frame_count(); ++i) {
    const auto& f = chunk.stacks.frame_at(i);
    put_varint(b, f.function);
    put_varint(b, f.file);
    put_varint(b, f.line);
  }
  begin_section(out, section_frames, b);

  b.clear();
  put_varint(b, chunk.stacks.stack_count() - 1);
  for (stack_id i = 1; i < chunk.stacks.stack_count(); ++i) {
    auto frames = chunk.stacks.stack(i);
    put_varint(b, frames.size());
    for (frame_id f : frames)
      put_varint(b, f);
  }
  begin_section(out, section_stacks, b);

  b.clear();
  put_varint(b, chunk.lanes.size());
  for (const auto& l : chunk.lanes.lanes()) {
    b.push_back(static_cast<char>(l.kind));
    put_varint(b, zigzag(static_cast<std::uint64_t>(l.group)));
    put_varint(b, l.id);
    put_varint(b, l.name);
  }
  begin_section(out, section_lanes, b);

  begin_section(out, section_metadata, encode_metadata(chunk.metadata));
  if (chunk.final_allocator_state)
    begin_section(out, section_allocator_state,
                  encode_allocator_state(*chunk.final_allocator_state));
  return out;
}

std::string encode_chunk(const trace& chunk) {
  std::string out = encode_chunk_tables(chunk);
  encode_store(out, 0, chunk.kernels.all());
  encode_store(out, 1, chunk.copies.all());
  encode_store(out, 2, chunk.api_calls.all());
  encode_store(out, 3, chunk.ranges.all());
  encode_store(out, 4, chunk.markers.all());
  // A memory event's columns hold its detail too (memory_record: the layout chunks keep).
  std::vector<memory_record> memory;
  memory.reserve(chunk.memory.size());
  for (const auto& e : chunk.memory.all())
    memory.push_back(chunk.record_of(e));
  encode_store(out, 5, std::span<const memory_record>(memory));
  encode_store(out, 6, chunk.assertions.all());
  encode_store(out, 7, chunk.flows.all());
  encode_store(out, 8, chunk.counters.all());
  encode_store(out, 9, std::span<const sync_wait>(chunk.sync_waits));
  encode_store(out, 10, std::span<const collective_info>(chunk.collectives));
  return out;
}

namespace {

// The chunk's lane table, kept chunk-local until the whole chunk has decoded.
void decode_lanes(byte_reader& body, id_maps& ids, std::vector<lane>& lanes) {
  const std::size_t n = body.count(4, sizeof(lane) + sizeof(lane_id)); // a byte, 3 varints
  for (std::size_t i = 0; i < n; ++i) {
    lane l;
    const std::uint8_t kind = body.u8();
    if (kind > static_cast<std::uint8_t>(lane_kind::device_memory))
      throw malformed("unknown lane kind");
    l.kind = static_cast<lane_kind>(kind);
    l.group = static_cast<std::int64_t>(unzigzag(body.varint()));
    l.id = body.varint();
    l.name = id_maps::map(ids.strings, body.varint(), "string");
    lanes.push_back(l);
    ids.lanes.push_back(static_cast<lane_id>(i));
  }
}

} // namespace

void decode_chunk(std::span<const std::byte> payload, trace& into,
                  std::span<const std::byte>* row_image) {
  byte_reader in(payload);
  id_maps ids;
  all_stores stores;
  std::optional<trace_metadata> metadata;
  std::optional<allocator_state> state;
  // Lanes are interned in `into` only once the chunk decodes completely.
  std::vector<lane> lanes;
  bool lanes_seen = false;

  while (!in.done()) {
    const std::uint8_t type = in.u8();
    byte_reader body(in.bytes(in.varint()));
    switch (type) {
    case section_strings: {
      const std::size_t n = body.count(1, sizeof(string_id));
      for (std::size_t i = 0; i < n; ++i)
        ids.strings.push_back(into.strings.intern(body.text()));
      break;
    }
    case section_frames: {
      const std::size_t n = body.count(3, sizeof(frame)); // three varints
      for (std::size_t i = 0; i < n; ++i) {
        frame f;
        f.function = id_maps::map(ids.strings, body.varint(), "string");
        f.file = id_maps::map(ids.strings, body.varint(), "string");
        f.line = static_cast<std::uint32_t>(body.varint());
        ids.frames.push_back(into.stacks.intern_frame(f));
      }
      break;
    }
    case section_stacks: {
      const std::size_t n = body.count(2, sizeof(stack_id)); // a length and a frame
      std::vector<frame_id> frames;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t len = body.count();
        if (len == 0)
          throw malformed("empty stack in the stack table");
        frames.clear();
        for (std::size_t k = 0; k < len; ++k)
          frames.push_back(id_maps::map(ids.frames, body.varint(), "frame"));
        ids.stacks.push_back(into.stacks.intern_stack(frames));
      }
      break;
    }
    case section_lanes: {
      if (lanes_seen)
        throw malformed("two lane tables in one chunk");
      lanes_seen = true;
      decode_lanes(body, ids, lanes);
      break;
    }
    case section_metadata:
      metadata = decode_metadata(body);
      break;
    case section_allocator_state:
      state = decode_allocator_state(body, ids);
      break;
    case section_row_image:
      if (row_image)
        *row_image = body.bytes(body.left());
      break;
    default:
      if (type >= section_events && type < section_events + std::tuple_size_v<all_stores>)
        decode_events(static_cast<std::uint8_t>(type - section_events), body, stores, ids);
      // Other types are sections of a newer minor version: skipped.
      break;
    }
  }

  for (auto& w : std::get<9>(stores)) { // chunk-local range indexes, to `into`'s
    if (w.range_index >= std::get<3>(stores).size())
      throw malformed("a sync wait names a range the chunk does not hold");
    w.range_index += static_cast<std::uint32_t>(into.ranges.size());
  }
  // Commit: lanes first, then events with chunk-local lanes mapped to `into`'s.
  std::vector<lane_id> lane_map(lanes.size());
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    lane_map[i] = into.lanes.intern(lanes[i].kind, lanes[i].group, lanes[i].id);
    if (lanes[i].name != no_string && into.lanes.at(lane_map[i]).name == no_string)
      into.lanes.set_name(lane_map[i], lanes[i].name);
  }
  // No reserve(): an exact reserve per chunk would reallocate the store every chunk.
  auto commit = [&](auto& store, auto& records) {
    for (auto& r : records) {
      visit_ids(
          r, [](string_id&) {}, [](stack_id&) {}, [&](lane_id& id) { id = lane_map[id]; });
      store.push_back(r);
    }
  };
  commit(into.kernels, std::get<0>(stores));
  commit(into.copies, std::get<1>(stores));
  commit(into.api_calls, std::get<2>(stores));
  commit(into.ranges, std::get<3>(stores));
  commit(into.markers, std::get<4>(stores));
  for (auto& r : std::get<5>(stores)) {
    r.lane = lane_map[r.lane];
    into.memory.push_back(into.event_of(r));
  }
  commit(into.assertions, std::get<6>(stores));
  commit(into.flows, std::get<7>(stores));
  commit(into.counters, std::get<8>(stores));
  auto& waits = std::get<9>(stores);
  into.sync_waits.insert(into.sync_waits.end(), waits.begin(), waits.end());
  auto& collectives = std::get<10>(stores);
  into.collectives.insert(into.collectives.end(), collectives.begin(), collectives.end());
  if (state)
    into.final_allocator_state = std::move(state);
  if (metadata)
    into.metadata = std::move(*metadata);
}

} // namespace tdiag::trace::detail
