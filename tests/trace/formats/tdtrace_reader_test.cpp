// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include "formats/src/tdtrace/tdtrace_format.hpp"
#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

// A multi-chunk file, its bytes, and the offsets/event counts of its chunks.
struct sample_file {
  std::vector<char> bytes;
  std::vector<std::uint64_t> offsets; // chunk starts, then the footer offset
  std::vector<std::size_t> events;    // events per chunk
  std::size_t total_events = 0;
};

const sample_file& sample() {
  static const sample_file f = [] {
    sample_file s;
    const auto path = test::temp_path("reader_sample.tdtrace");
    tdtrace_writer_options w;
    w.chunk_bytes = 32 << 10;
    write_tdtrace(path, make_synthetic_trace({.kernels = 3000}), w);
    s.bytes = test::read_file(path);
    const auto full = read_tdtrace(path);
    s.offsets = full.info.chunk_offsets;
    s.total_events = full.loaded.trace.event_count();
    // The footer starts where the last chunk ends: find it through the trailer.
    std::uint64_t footer = 0;
    std::memcpy(&footer, s.bytes.data() + s.bytes.size() - 24, 8);
    s.offsets.push_back(footer);
    // Events per chunk: load each prefix.
    std::size_t before = 0;
    for (std::size_t k = 1; k < s.offsets.size(); ++k) {
      auto part = read_tdtrace(std::as_bytes(std::span(s.bytes.data(), s.offsets[k])), "prefix");
      s.events.push_back(part.loaded.trace.event_count() - before);
      before = part.loaded.trace.event_count();
    }
    return s;
  }();
  return f;
}

std::span<const std::byte> prefix(const sample_file& s, std::size_t n) {
  return std::as_bytes(std::span(s.bytes.data(), n));
}

TEST(TdtraceReader, SampleHasSeveralChunks) {
  const auto& s = sample();
  ASSERT_GE(s.offsets.size(), 5u);
  std::size_t sum = 0;
  for (auto n : s.events)
    sum += n;
  EXPECT_EQ(sum, s.total_events);
}

TEST(TdtraceReader, TruncationAtEveryChunkBoundaryLoadsTheCompleteChunks) {
  const auto& s = sample();
  std::size_t expected = 0;
  for (std::size_t k = 0; k < s.offsets.size(); ++k) {
    const auto r = read_tdtrace(prefix(s, s.offsets[k]), "cut");
    EXPECT_FALSE(r.info.has_footer);
    EXPECT_EQ(r.info.chunks_loaded, k);
    EXPECT_EQ(r.info.bytes_lost, 0u) << "cut at chunk " << k;
    EXPECT_EQ(r.loaded.trace.event_count(), expected);
    EXPECT_TRUE(test::has_code(r.loaded.warnings, "TDIAG-TR-310"));
    EXPECT_FALSE(test::has_code(r.loaded.warnings, "TDIAG-TR-314"));
    if (k < s.events.size())
      expected += s.events[k];
  }
}

TEST(TdtraceReader, TruncationMidChunkReportsTheLostBytes) {
  const auto& s = sample();
  for (std::size_t k = 0; k + 1 < s.offsets.size(); ++k) {
    const std::uint64_t begin = s.offsets[k];
    const std::uint64_t end = s.offsets[k + 1];
    for (std::uint64_t cut : {begin + 1, begin + 47, begin + 48, (begin + end) / 2, end - 1}) {
      const auto r = read_tdtrace(prefix(s, cut), "cut");
      EXPECT_EQ(r.info.chunks_loaded, k) << "cut at " << cut;
      EXPECT_EQ(r.info.bytes_lost, cut - begin) << "cut at " << cut;
      EXPECT_TRUE(test::has_code(r.loaded.warnings, "TDIAG-TR-314"));
      EXPECT_TRUE(test::has_code(r.loaded.warnings, "TDIAG-TR-310"));
    }
  }
  // Cut inside the footer: every chunk is there, the footer is not.
  const auto r = read_tdtrace(prefix(s, s.bytes.size() - 1), "cut");
  EXPECT_EQ(r.info.chunks_loaded, s.offsets.size() - 1);
  EXPECT_EQ(r.loaded.trace.event_count(), s.total_events);
  EXPECT_FALSE(r.info.has_footer);
}

TEST(TdtraceReader, CorruptedPayloadSkipsOnlyThatChunk) {
  const auto& s = sample();
  std::vector<char> bytes = s.bytes;
  const std::size_t victim = 2;
  bytes[s.offsets[victim] + 48 + 10] ^= 0x40;
  const auto r = read_tdtrace(std::as_bytes(std::span(bytes)), "corrupt");
  EXPECT_TRUE(r.info.has_footer);
  EXPECT_EQ(r.info.chunks_corrupted, 1u);
  EXPECT_EQ(r.info.chunks_loaded, s.offsets.size() - 2);
  EXPECT_EQ(r.loaded.trace.event_count(), s.total_events - s.events[victim]);
  EXPECT_EQ(r.info.bytes_lost, s.offsets[victim + 1] - s.offsets[victim]);
  ASSERT_TRUE(test::has_code(r.loaded.warnings, "TDIAG-TR-312"));
  const auto& d = r.loaded.warnings.front();
  EXPECT_EQ(d.level, severity::warning);
  ASSERT_NE(d.find_field("offset"), nullptr);
  EXPECT_EQ(*d.find_field("offset"), field_value(s.offsets[victim]));
}

TEST(TdtraceReader, SalvageModeIgnoresDamagedChecksumsOnly) {
  const auto& s = sample();
  std::vector<char> bytes = s.bytes;
  bytes[s.offsets[1] + 20] ^= 0x01; // the stored payload CRC, not the payload
  const auto strict = read_tdtrace(std::as_bytes(std::span(bytes)), "crc");
  EXPECT_EQ(strict.info.chunks_corrupted, 1u); // the header CRC covers that field
  tdtrace_read_options salvage;
  salvage.verify_checksums = false;
  const auto r = read_tdtrace(std::as_bytes(std::span(bytes)), "crc", salvage);
  EXPECT_EQ(r.info.chunks_corrupted, 0u);
  EXPECT_EQ(r.loaded.trace.event_count(), s.total_events);
  // A damaged payload is still caught: zstd frames carry their own content checksum.
  bytes[s.offsets[2] + 48 + 20] ^= 0x55;
  const auto damaged = read_tdtrace(std::as_bytes(std::span(bytes)), "crc", salvage);
  EXPECT_EQ(damaged.loaded.trace.event_count(), s.total_events - s.events[2]);
  EXPECT_TRUE(test::has_code(damaged.loaded.warnings, "TDIAG-TR-313"));
}

TEST(TdtraceReader, CorruptedChunkHeaderResynchronisesOnTheNextChunk) {
  const auto& s = sample();
  std::vector<char> bytes = s.bytes;
  const std::size_t victim = 1;
  bytes[s.offsets[victim] + 5] ^= 0x01; // inside the header: its CRC fails
  const auto r = read_tdtrace(std::as_bytes(std::span(bytes)), "corrupt");
  EXPECT_TRUE(test::has_code(r.loaded.warnings, "TDIAG-TR-311"));
  EXPECT_EQ(r.info.chunks_loaded, s.offsets.size() - 2);
  EXPECT_EQ(r.loaded.trace.event_count(), s.total_events - s.events[victim]);
  EXPECT_EQ(r.info.bytes_lost, s.offsets[victim + 1] - s.offsets[victim]);
}

TEST(TdtraceReader, RangeLoadReadsOnlyOverlappingChunks) {
  const auto& s = sample();
  const auto full = read_tdtrace(prefix(s, s.bytes.size()), "full");
  const time_span span = full.loaded.trace.span();
  tdtrace_read_options o;
  o.range = time_span{span.begin, span.begin + span.duration() / 10};
  const auto path = test::temp_path("reader_range.tdtrace");
  test::write_file(path, s.bytes.data(), s.bytes.size());
  const auto part = read_tdtrace(path, o);
  EXPECT_GT(part.info.chunks_out_of_range, 0u);
  EXPECT_GT(part.info.chunks_loaded, 0u);
  EXPECT_LT(part.loaded.trace.event_count(), s.total_events);
  EXPECT_TRUE(part.loaded.warnings.empty());
  // Every event in the range is there.
  std::size_t in_range_full = 0;
  std::size_t in_range_part = 0;
  for (const auto& k : full.loaded.trace.kernels.all())
    in_range_full += k.start <= o.range->end && k.end >= o.range->begin;
  for (const auto& k : part.loaded.trace.kernels.all())
    in_range_part += k.start <= o.range->end && k.end >= o.range->begin;
  EXPECT_EQ(in_range_part, in_range_full);
}

TEST(TdtraceReader, RejectsOtherFilesAndNewerVersions) {
  const std::string junk = "{\"traceEvents\": []}";
  try {
    (void)read_tdtrace(std::as_bytes(std::span(junk)), "junk.json");
    FAIL();
  } catch (const input_error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-TR-301");
  }
  std::vector<char> bytes = sample().bytes;
  bytes[8] = 9; // major version 9, with a header CRC that matches it
  const std::uint32_t crc = detail::crc32_of(std::as_bytes(std::span(bytes.data(), 28)));
  std::memcpy(bytes.data() + 28, &crc, 4);
  try {
    (void)read_tdtrace(std::as_bytes(std::span(bytes)), "v9");
    FAIL();
  } catch (const input_error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-TR-302");
  }
  EXPECT_THROW((void)read_tdtrace(prefix(sample(), 20), "short"), input_error);
  EXPECT_THROW((void)read_tdtrace(std::filesystem::path("/no/such/file.tdtrace")), input_error);
}

TEST(TdtraceReader, SniffsTheMagic) {
  const auto& s = sample();
  EXPECT_TRUE(sniff_tdtrace(prefix(s, 64)));
  const std::string other = "\x80\x04pickle";
  EXPECT_FALSE(sniff_tdtrace(std::as_bytes(std::span(other))));
}

} // namespace
} // namespace tdiag::trace
