// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/src/tdtrace/guarded_map.hpp"
#include "formats/src/tdtrace/tdtrace_format.hpp"
#include "formats/src/tdtrace/tdtrace_image.hpp"
#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

trace sample_trace() {
  trace t = make_synthetic_trace({.kernels = 3000});
  t.finalize();
  return t;
}

std::filesystem::path write_image(const trace& t, const std::string& name) {
  auto path = test::temp_path(name);
  tdtrace_writer_options o;
  o.layout = tdtrace_layout::row_image;
  write_tdtrace(path, t, o);
  return path;
}

void expect_same_content(const trace& a, const trace& b) {
  EXPECT_EQ(a.strings, b.strings);
  EXPECT_EQ(a.stacks, b.stacks);
  EXPECT_EQ(a.lanes, b.lanes);
  EXPECT_EQ(a.kernels, b.kernels);
  EXPECT_EQ(a.copies, b.copies);
  EXPECT_EQ(a.api_calls, b.api_calls);
  EXPECT_EQ(test::memory_records(a), test::memory_records(b));
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.sync_waits, b.sync_waits);
  EXPECT_EQ(a.final_allocator_state, b.final_allocator_state);
  EXPECT_EQ(a.metadata.time_origin_ns, b.metadata.time_origin_ns);
}

TEST(TdtraceImageRead, ReopenViewsTheRowsFinalizedAndEqual) {
  const trace t = sample_trace();
  const auto loaded = read_tdtrace(write_image(t, "image_roundtrip.tdtrace"));
  EXPECT_TRUE(loaded.info.row_image);
  EXPECT_EQ(loaded.info.version_major, 2);
  EXPECT_TRUE(loaded.loaded.warnings.empty());
  const trace& r = loaded.loaded.trace;
  EXPECT_TRUE(r.finalized());
  EXPECT_TRUE(r.kernels.viewing());
  EXPECT_TRUE(r.memory.viewing());
  expect_same_content(r, t);
  ASSERT_GT(t.lanes.size(), 1u);
  for (lane_id l = 0; l < t.lanes.size(); ++l) {
    EXPECT_EQ(r.kernels.lane(l).size(), t.kernels.lane(l).size());
    EXPECT_EQ(r.kernels.max_duration(l), t.kernels.max_duration(l));
  }
}

// Row images before minor 3 keep each memory event with its detail in one 88-byte row
// (memory_record): they still read, as the chunked file of the same trace does. Both files were
// written by the build of f6c8205 (tests/data/trace/memory_minor2.cpp).
TEST(TdtraceImageRead, RowImagesBeforeMemoryDetailsStillRead) {
  const auto data = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/trace";
  const auto rows = read_tdtrace(data / "memory_minor2.rows.tdtrace");
  EXPECT_TRUE(rows.info.row_image);
  EXPECT_EQ(rows.info.version_minor, 2);
  const auto chunks = load_trace(data / "memory_minor2.chunks.tdtrace");
  const trace& t = rows.loaded.trace;
  ASSERT_EQ(t.memory.size(), 40u);
  EXPECT_EQ(test::memory_records(t), test::memory_records(chunks.trace));
  EXPECT_EQ(test::canonical_events(t), test::canonical_events(chunks.trace));
  const auto& oom = t.memory.lane(t.lanes.find_memory(-1)).back();
  EXPECT_EQ(oom.action, memory_action::oom);
  EXPECT_EQ(t.detail_of(oom).device_free, 123456789u);
  std::size_t pooled = 0, tagged = 0;
  for (const auto& m : t.memory.all()) {
    pooled += t.detail_of(m).pool != 0;
    tagged += t.name(t.detail_of(m).user_metadata) == "tracing_pool";
  }
  EXPECT_EQ(pooled, 6u);
  EXPECT_EQ(tagged, 5u);
}

TEST(TdtraceImageRead, FirstMutationCopiesTheRows) {
  const trace t = sample_trace();
  auto loaded = read_tdtrace(write_image(t, "image_mutation.tdtrace")).loaded;
  trace& r = loaded.trace;
  const trace copy = r; // shares the mapping
  r.kernels.push_back(t.kernels[0]);
  EXPECT_FALSE(r.kernels.viewing());
  EXPECT_FALSE(r.kernels.finalized());
  EXPECT_EQ(r.kernels.size(), t.kernels.size() + 1);
  EXPECT_TRUE(copy.kernels.viewing());
  EXPECT_EQ(copy.kernels, t.kernels);
  r.finalize();
  EXPECT_EQ(r.kernels.size(), t.kernels.size() + 1);
}

TEST(TdtraceImageRead, BytesInMemoryReadLikeTheFile) {
  const trace t = sample_trace();
  const auto bytes = test::read_file(write_image(t, "image_bytes.tdtrace"));
  const auto loaded = read_tdtrace(std::as_bytes(std::span(bytes)), "mem.tdtrace");
  EXPECT_TRUE(loaded.info.row_image);
  expect_same_content(loaded.loaded.trace, t);
  // The importer path (load_trace) gives the same trace.
  const auto via_load = load_trace(write_image(t, "image_load.tdtrace"));
  expect_same_content(via_load.trace, t);
}

std::string refusal(const std::vector<char>& bytes, bool verify_checksums = true) {
  try {
    tdtrace_read_options o;
    o.verify_checksums = verify_checksums;
    (void)read_tdtrace(std::as_bytes(std::span(bytes)), "bad.tdtrace", o);
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tdtrace"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.report().diagnostics.at(0).code;
  }
  return "loaded";
}

TEST(TdtraceImageRead, TruncatedImagesAreRefusedWithOneLine) {
  const auto bytes = test::read_file(write_image(sample_trace(), "image_trunc.tdtrace"));
  for (std::size_t n : {bytes.size() - 1, bytes.size() - 24, bytes.size() / 2, std::size_t{5000}}) {
    const std::vector<char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(refusal(cut), std::string(codes::truncated_chunk)) << n;
  }
}

TEST(TdtraceImageRead, DamagedRowsAreRefused) {
  const trace t = sample_trace();
  auto bytes = test::read_file(write_image(t, "image_damage.tdtrace"));
  // The kernel rows come first, at 4096: name the first row's lane out of range. The checksum
  // finds it; without the checksum (a salvage read) the check pass still does.
  const lane_id bad = 0xFFFFFF;
  std::memcpy(bytes.data() + 4096 + offsetof(kernel_event, lane), &bad, sizeof bad);
  EXPECT_EQ(refusal(bytes), std::string(codes::chunk_checksum));
  EXPECT_EQ(refusal(bytes, false), std::string(codes::undecodable_chunk));
  // A start time out of order within its lane.
  bytes = test::read_file(write_image(t, "image_damage.tdtrace"));
  const std::int64_t late = t.kernels.lane(t.kernels[0].lane).back().start + 1;
  std::memcpy(bytes.data() + 4096 + offsetof(kernel_event, start), &late, sizeof late);
  EXPECT_EQ(refusal(bytes, false), std::string(codes::undecodable_chunk));
  // A kernel that ends before it starts (no importer makes one).
  bytes = test::read_file(write_image(t, "image_damage.tdtrace"));
  const std::int64_t early = t.kernels[0].start - 1;
  std::memcpy(bytes.data() + 4096 + offsetof(kernel_event, end), &early, sizeof early);
  EXPECT_EQ(refusal(bytes, false), std::string(codes::undecodable_chunk));
  // Any flipped bit, even in a field no check can judge (a kernel's correlation id, a grid
  // size, padding): every row of every kind is under the checksum.
  const auto clean = test::read_file(write_image(t, "image_damage.tdtrace"));
  std::size_t block = 4096, flipped = 0; // each kind's rows from a page boundary, in kind order
  t.for_each_store([&](const auto& store) {
    const std::size_t size = store.size() * sizeof(*store.all().data());
    for (std::size_t at = block; at < block + size; at += 997, ++flipped) {
      bytes = clean;
      bytes[at] ^= 0x10;
      EXPECT_EQ(refusal(bytes), std::string(codes::chunk_checksum)) << at;
    }
    block = (block + size + 4095) / 4096 * 4096;
  });
  EXPECT_GT(flipped, 100u);
  // The table chunk's payload.
  bytes = test::read_file(write_image(t, "image_damage.tdtrace"));
  std::uint64_t footer = 0, chunk = 0;
  std::memcpy(&footer, bytes.data() + bytes.size() - 24, 8);
  std::memcpy(&chunk, bytes.data() + footer + 8, 8);
  bytes[chunk + 60] ^= 0x5A;
  EXPECT_EQ(refusal(bytes), std::string(codes::chunk_checksum));
}

// Row checksums came with minor 2: a directory written before them (no checksum section) still
// decodes, its blocks unchecked by sum; one with a checksum count that is not the block count is
// damage.
// A memory row naming a detail past the file's table is refused, with the checksum or without.
TEST(TdtraceImageRead, MemoryRowsNamingNoDetailAreRefused) {
  const trace t = sample_trace();
  ASSERT_FALSE(t.memory_details.empty());
  auto bytes = test::read_file(write_image(t, "image_detail.tdtrace"));
  std::size_t block = 4096, kind = 0; // each kind's rows from a page boundary, in kind order
  t.for_each_store([&](const auto& store) {
    if (kind++ < 5)
      block = (block + store.size() * sizeof(*store.all().data()) + 4095) / 4096 * 4096;
  });
  const std::uint32_t past = static_cast<std::uint32_t>(t.memory_details.size()) + 1;
  std::memcpy(bytes.data() + block + offsetof(memory_event, detail), &past, sizeof past);
  EXPECT_EQ(refusal(bytes), std::string(codes::chunk_checksum));
  EXPECT_EQ(refusal(bytes, false), std::string(codes::undecodable_chunk));
}

TEST(TdtraceImageRead, DirectoriesBeforeRowChecksumsStillDecode) {
  detail::row_directory d;
  for (std::uint8_t kind : {0, 5}) {
    detail::row_block blk;
    blk.kind = kind;
    blk.lane_offsets = {0};
    detail::row_checksum sum;
    const std::string rows(1000 + kind, static_cast<char>(kind));
    sum.update(std::as_bytes(std::span(rows)));
    blk.checksum = sum.digest();
    d.blocks.push_back(blk);
  }
  EXPECT_NE(d.blocks[0].checksum, d.blocks[1].checksum);
  const std::string body = detail::encode_row_directory(d);
  auto decode = [](std::string_view b) {
    return detail::decode_row_directory(std::as_bytes(std::span(b.data(), b.size())));
  };
  const auto now = decode(body);
  ASSERT_EQ(now.blocks.size(), 2u);
  EXPECT_EQ(now.blocks[1].checksum, d.blocks[1].checksum);
  // Minor 3 ends with the memory details (none here: a count of one byte), minor 2 with the
  // checksums.
  const std::string_view minor2 = std::string_view(body).substr(0, body.size() - 1);
  EXPECT_EQ(decode(minor2).blocks.at(1).checksum, d.blocks[1].checksum);
  const std::string_view before = minor2.substr(0, minor2.size() - 1 - 2 * 8);
  const auto old = decode(before);
  ASSERT_EQ(old.blocks.size(), 2u);
  EXPECT_FALSE(old.blocks[0].checksum.has_value());
  std::string short_count(before);
  short_count += '\x01';
  short_count.append(8, '\0');
  EXPECT_THROW((void)decode(short_count), detail::malformed);
  // What a newer minor adds after the parts this build knows is skipped; from this minor or an
  // older one, it is damage.
  const std::string newer = body + std::string("\x05more", 5);
  EXPECT_THROW((void)decode(newer), detail::malformed);
  const auto skipped =
      detail::decode_row_directory(std::as_bytes(std::span(newer.data(), newer.size())), true);
  EXPECT_EQ(skipped.blocks.at(1).checksum, d.blocks[1].checksum);
  // The details (minor 3) come back as written, negative totals included.
  d.memory_details = {{.pool = 7, .device_free = 1u << 31, .total_allocated = -1},
                      {.total_reserved = 4096, .correlation = 9, .user_metadata = 3}};
  const std::string with_details = detail::encode_row_directory(d);
  EXPECT_EQ(decode(with_details).memory_details, d.memory_details);
}

// The checksum is the same however the bytes are fed (the writer feeds batches of rows).
TEST(TdtraceImageRead, RowChecksumIgnoresHowBytesAreSplit) {
  std::vector<std::byte> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(i * 7 + 3);
  detail::row_checksum whole;
  whole.update(bytes);
  for (std::size_t cut : {1u, 31u, 32u, 33u, 500u, 999u}) {
    detail::row_checksum split;
    split.update(std::span(bytes).first(cut));
    split.update(std::span(bytes).subspan(cut));
    EXPECT_EQ(split.digest(), whole.digest()) << cut;
  }
  bytes[999] ^= std::byte{1};
  detail::row_checksum changed;
  changed.update(bytes);
  EXPECT_NE(changed.digest(), whole.digest());
}

// Another process truncates the file after the load: a small image's rows were copied, so the
// trace stays whole (a mapping would end the process with SIGBUS at the first row touched).
TEST(TdtraceImageRead, TruncatedAfterLoadingCostsNothing) {
  const trace t = sample_trace();
  const auto path = write_image(t, "image_truncated_later.tdtrace");
  ASSERT_LT(std::filesystem::file_size(path), detail::copied_rows_below);
  const auto loaded = read_tdtrace(path);
  std::filesystem::resize_file(path, 64);
  expect_same_content(loaded.loaded.trace, t);
}

// A large image's rows are mapped; another process truncating the file under the mapping, after
// every size check, makes the pages past its new end read as zeros and the mapping say so (the
// reader's refusal), never SIGBUS.
TEST(TdtraceImageRead, FileTruncatedUnderItsMappingReadsZerosNotSigbus) {
  const auto path = test::temp_path("image_truncated_mapped.bin");
  const std::uint64_t size = detail::copied_rows_below + (std::uint64_t{1} << 20);
  { std::ofstream f(path, std::ios::binary); }
  std::filesystem::resize_file(path, size); // sparse: no 65 MiB written
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const char mark = 'x';
  ASSERT_EQ(::pwrite(fd, &mark, 1, 0), 1);
  ASSERT_EQ(::pwrite(fd, &mark, 1, static_cast<off_t>(size - 1)), 1);
  const auto rows = detail::mapped_rows(path, size);
  const auto bytes = rows(0, size);
  ASSERT_NE(bytes.mapping, nullptr);
  EXPECT_EQ(static_cast<char>(bytes.bytes[size - 1]), 'x');
  EXPECT_FALSE(bytes.mapping->changed());
  ASSERT_EQ(::ftruncate(fd, 4096), 0);
  ::close(fd);
  EXPECT_EQ(static_cast<char>(bytes.bytes[0]), 'x'); // before the new end: the file's
  EXPECT_EQ(static_cast<int>(bytes.bytes[size - 1]), 0);
  EXPECT_EQ(static_cast<int>(bytes.bytes[size / 2]), 0);
  EXPECT_TRUE(bytes.mapping->changed());
  std::filesystem::remove(path);
}

// The handler is ours for our mappings only: SIGBUS anywhere else still ends the process.
TEST(TdtraceImageReadDeathTest, SigbusOutsideOurMappingsStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto path = test::temp_path("image_sigbus_elsewhere.bin");
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string(8192, 'y');
  }
  {
    std::string why;
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_NE(detail::guarded_map::map(fd, 8192, why), nullptr) << why; // installs the handler
    ::close(fd);
  }
  EXPECT_DEATH(
      {
        const int fd = ::open(path.c_str(), O_RDWR);
        auto* p =
            static_cast<volatile const char*>(::mmap(nullptr, 8192, PROT_READ, MAP_PRIVATE, fd, 0));
        (void)::ftruncate(fd, 0);
        std::fprintf(stderr, "read %d\n", p[4096]);
      },
      "");
  std::filesystem::remove(path);
}

// "-" is standard input, even where the working folder holds a file named "-" of the same size
// (the rows were looked up by that name: another file's rows under stdin's tables).
TEST(TdtraceImageRead, StandardInputIsNeverLookedUpByName) {
  const trace t = sample_trace();
  const auto path = write_image(t, "image_stdin.tdtrace");
  const auto dir = test::temp_path("image_stdin_cwd");
  std::filesystem::create_directories(dir);
  {
    std::ofstream decoy(dir / "-", std::ios::binary);
    decoy << std::string(std::filesystem::file_size(path), '\x5a');
  }
  const auto cwd = std::filesystem::current_path();
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, STDIN_FILENO), STDIN_FILENO);
  ::close(fd);
  std::filesystem::current_path(dir);
  load_result r;
  std::string error;
  try {
    r = load_trace("-");
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::filesystem::current_path(cwd);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(error.empty()) << error;
  expect_same_content(r.trace, t);
}

TEST(TdtraceImageRead, ChunkedFilesStillReadAsBefore) {
  const trace t = sample_trace();
  const auto path = test::temp_path("image_chunked.tdtrace");
  tdtrace_writer_options o;
  o.layout = tdtrace_layout::chunks;
  write_tdtrace(path, t, o);
  const auto loaded = read_tdtrace(path);
  EXPECT_FALSE(loaded.info.row_image);
  EXPECT_EQ(loaded.info.version_major, 1);
  EXPECT_FALSE(loaded.loaded.trace.kernels.viewing());
  // Chunks re-intern their tables, so ids differ: the same events over the same span.
  EXPECT_EQ(loaded.loaded.trace.event_count(), t.event_count());
  EXPECT_EQ(loaded.loaded.trace.span(), t.span());
}

} // namespace
} // namespace tdiag::trace
