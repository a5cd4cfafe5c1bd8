// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/units.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using namespace tdiag::trace;

TEST(Units, DurationSuffixes) {
  EXPECT_EQ(parse_duration("3.5s"), 3'500'000'000);
  EXPECT_EQ(parse_duration("12ms"), 12'000'000);
  EXPECT_EQ(parse_duration("800us"), 800'000);
  EXPECT_EQ(parse_duration("800\xC2\xB5s"), 800'000);
  EXPECT_EQ(parse_duration("42ns"), 42);
  EXPECT_EQ(parse_duration(" +1.25 ms "), 1'250'000);
}

TEST(Units, BareNumberIsSecondsForDurationsAndOffsets) {
  EXPECT_EQ(parse_duration("2"), 2'000'000'000);
  EXPECT_EQ(parse_time_offset("2", 10), 2'000'000'000);
  EXPECT_EQ(parse_duration("0"), 0);
}

TEST(Units, TimeOffsetPercentOfSpan) {
  EXPECT_EQ(parse_time_offset("40%", 1'000'000), 400'000);
  EXPECT_EQ(parse_time_offset("12ms", 1'000'000), 12'000'000);
  EXPECT_FALSE(parse_duration("40%").has_value()); // a percentage needs a span
}

TEST(Units, OneMessageForABadTime) {
  EXPECT_EQ(bad_time_message("1h"), "'1h' is not a time like 1.5s, 250ms, 800us, 42ns (bare: "
                                    "seconds), or 40% of the span");
}

TEST(Units, RejectsMalformedDurations) {
  for (const char* bad : {"", "soon", "5 parsecs", "ms", "1.5 m", "nan", "inf", "1e30s", "--1s"})
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
  EXPECT_FALSE(parse_time_offset("%", 100).has_value());
}

TEST(Units, FormatsBytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(3221225472u), "3.00 GiB");
  EXPECT_EQ(format_byte_delta(-512), "-512 B");
  EXPECT_EQ(format_byte_delta(1572864), "+1.50 MiB");
  EXPECT_EQ(format_byte_delta(std::numeric_limits<std::int64_t>::min()),
            "-8192.00 PiB"); // no overflow negating it
}

TEST(Units, FormatsDurationsWithoutExponents) {
  EXPECT_EQ(format_duration(950), "950 ns");
  EXPECT_EQ(format_duration(12'500), "12.5 us");
  EXPECT_EQ(format_duration(3'200'000), "3.2 ms");
  EXPECT_EQ(format_duration(1'234'000'000), "1.234 s");
  EXPECT_EQ(format_duration(999'950), "1 ms");
  EXPECT_EQ(format_duration(999'950'000), "1 s");
  EXPECT_EQ(format_duration(123'456'000'000'000), "123456 s");
  EXPECT_EQ(format_duration(-12'500), "-12.5 us");
}

} // namespace
