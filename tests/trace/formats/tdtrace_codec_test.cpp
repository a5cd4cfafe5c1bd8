// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>

#include <gtest/gtest.h>

#include "formats/src/tdtrace/tdtrace_format.hpp"
#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

trace small_trace() {
  synthetic_options o;
  o.kernels = 300;
  o.devices = 2;
  return make_synthetic_trace(o);
}

TEST(TdtraceCodec, ChunkRoundTripKeepsEveryEventAndTable) {
  const trace original = small_trace();
  const std::string payload = detail::encode_chunk(original);
  trace decoded;
  detail::decode_chunk(std::as_bytes(std::span(payload)), decoded);
  decoded.finalize();
  EXPECT_EQ(decoded.event_count(), original.event_count());
  EXPECT_EQ(test::canonical_events(decoded), test::canonical_events(original));
  EXPECT_EQ(test::canonical_state(decoded), test::canonical_state(original));
  EXPECT_EQ(decoded.metadata, original.metadata);
  // Tables are written whole and in order, so a chunk made from a compact trace decodes to the
  // very same ids.
  EXPECT_EQ(decoded, original);
}

TEST(TdtraceCodec, ColumnsAreCompact) {
  synthetic_options o;
  o.kernels = 5000;
  o.allocations_per_100_kernels = 0;
  o.copies_per_100_kernels = 0;
  o.with_flows = false;
  trace kernels_only = make_synthetic_trace(o);
  kernels_only.api_calls.clear();
  kernels_only.finalize();
  const std::string payload = detail::encode_chunk(kernels_only);
  // 88-byte records; varint + delta columns must at least halve them before compression.
  EXPECT_LT(payload.size(), kernels_only.kernels.size() * 30);
}

TEST(TdtraceCodec, DecodingTruncatedPayloadsThrowsMalformedOnly) {
  const trace original = small_trace();
  const std::string payload = detail::encode_chunk(original);
  const auto bytes = std::as_bytes(std::span(payload));
  for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 64) {
    trace into;
    try {
      detail::decode_chunk(bytes.first(n), into);
    } catch (const detail::malformed&) {
      EXPECT_EQ(into.event_count(), 0u) << "partial chunk committed at " << n;
    }
  }
}

TEST(TdtraceCodec, RejectsUndefinedReferences) {
  trace t;
  const lane_id l = t.lanes.gpu(0, 1);
  kernel_event k;
  k.lane = l;
  k.name = 77; // no such string
  t.kernels.push_back(k);
  const std::string payload = detail::encode_chunk(t);
  trace into;
  EXPECT_THROW(detail::decode_chunk(std::as_bytes(std::span(payload)), into), detail::malformed);
  EXPECT_EQ(into.kernels.size(), 0u);
}

TEST(TdtraceCodec, ChunkHeaderRoundTripAndChecksum) {
  detail::chunk_header h;
  h.sequence = 7;
  h.compressed_size = 1234;
  h.uncompressed_size = 99999;
  h.event_count = 42;
  h.payload_crc = 0xDEADBEEF;
  h.t_min = -5;
  h.t_max = 1'000'000'000'000;
  std::string bytes = detail::encode_chunk_header(h);
  ASSERT_EQ(bytes.size(), detail::chunk_header_size);
  detail::chunk_header back;
  ASSERT_TRUE(detail::decode_chunk_header(std::as_bytes(std::span(bytes)), back));
  EXPECT_EQ(back.sequence, 7u);
  EXPECT_EQ(back.compressed_size, 1234u);
  EXPECT_EQ(back.t_min, -5);
  EXPECT_EQ(back.t_max, 1'000'000'000'000);
  bytes[9] ^= 1;
  EXPECT_FALSE(detail::decode_chunk_header(std::as_bytes(std::span(bytes)), back));
}

} // namespace
} // namespace tdiag::trace
