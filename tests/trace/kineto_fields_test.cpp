// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Kineto times are read strictly and exactly (issue 18 item 10): a string, NaN or Infinity is
// an error naming the field's path, never a silent 0; fractions keep their nanoseconds.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace tdiag::trace;

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string one_kernel(std::string_view ts, std::string_view dur) {
  return std::string(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0,)"
                     R"( "tid": 7, "ts": )") +
         std::string(ts) + R"(, "dur": )" + std::string(dur) + R"(, "args": {"stream": 7}}]})";
}

TEST(KinetoFields, TimesKeepNanoseconds) {
  const auto json = one_kernel("4203669603187.439", "9288.2915");
  const auto r = import_kineto(as_bytes(json), "ns.json");
  const auto& k = r.trace.kernels.all().front();
  EXPECT_EQ(k.start, 4203669603187439);
  EXPECT_EQ(k.end - k.start, 9288292); // the fourth digit rounds
  EXPECT_NE(r.trace.metadata.property("kineto.fractional_ts"), nullptr);
  const auto whole = import_kineto(as_bytes(one_kernel("12", "3")), "us.json");
  EXPECT_EQ(whole.trace.metadata.property("kineto.fractional_ts"), nullptr);
  EXPECT_EQ(whole.trace.kernels.all().front().start, 12000);
  const auto expo = import_kineto(as_bytes(one_kernel("1.5e3", "2")), "e.json");
  EXPECT_EQ(expo.trace.kernels.all().front().start, 1500000);
}

TEST(KinetoFields, NonNumericTimesAreRejectedWithTheirPath) {
  for (const auto& [ts, dur, field] : {std::tuple{"\"123\"", "1", "traceEvents[0].ts"},
                                       std::tuple{"1", "null", "traceEvents[0].dur"},
                                       std::tuple{"1", "\"2\"", "traceEvents[0].dur"}}) {
    try {
      (void)import_kineto(as_bytes(one_kernel(ts, dur)), "bad.json");
      ADD_FAILURE() << "accepted ts " << ts << " dur " << dur;
    } catch (const tdiag::input_error& e) {
      const auto& d = e.report().diagnostics.front();
      EXPECT_EQ(d.code, "TDIAG-TR-125");
      EXPECT_NE(d.message.find("bad.json"), std::string::npos) << d.message;
      EXPECT_NE(d.message.find(field), std::string::npos) << d.message;
    }
  }
  // NaN and Infinity are not JSON: the parser rejects them before the event is read.
  for (const auto* ts : {"NaN", "Infinity"})
    EXPECT_THROW((void)import_kineto(as_bytes(one_kernel(ts, "1")), "bad.json"), tdiag::input_error)
        << ts;
}

} // namespace
