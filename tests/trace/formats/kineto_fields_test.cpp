// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Kineto numbers are read strictly (issue 18 item 10): a string, NaN, Infinity, true or null
// where a number is due is an error naming the field's path, never a silent 0; times are read
// exactly and keep their nanoseconds.
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
  // A string whose whole text is a number is that number (real writers do it; counted in a
  // note); any other string is refused.
  for (const auto& [ts, dur, field] : {std::tuple{"\"123 us\"", "1", "traceEvents[0].ts"},
                                       std::tuple{"1", "null", "traceEvents[0].dur"},
                                       std::tuple{"1", "\"2.\"", "traceEvents[0].dur"}}) {
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
  // NaN and Infinity are not JSON: refused with the field's path too, never read as 0.
  for (const auto* ts : {"NaN", "Infinity", "-Infinity"}) {
    try {
      (void)import_kineto(as_bytes(one_kernel(ts, "1")), "bad.json");
      ADD_FAILURE() << "accepted ts " << ts;
    } catch (const tdiag::input_error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json: traceEvents[0].ts: expected a finite"),
                std::string::npos)
          << e.what();
    }
  }
}

// Every other numeric field read is as strict: ids, sizes, devices, grids, pid/tid.
TEST(KinetoFields, NonNumericFieldsAreRejectedWithTheirPath) {
  const std::string head = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", )";
  for (const auto& [fields, path] : {
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": NaN})",
                     "traceEvents[0].args.device: expected a JSON integer, got NaN"},
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"grid": [1, "2x", 1]})",
                     "traceEvents[0].args.grid: expected a JSON integer, got \"2x\""},
           std::pair{R"("pid": true, "tid": 7, "ts": 1, "dur": 1})",
                     "traceEvents[0].pid: expected a JSON number or string, got true"},
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"correlation": null})",
                     "traceEvents[0].args.correlation: expected a JSON integer, got null"},
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"stream": "0xZZ"})",
                     "traceEvents[0].args.stream"},
           // What the parser met instead of a value, and a string that does not decode, are
           // said as such ("got " with nothing after it, and "expected a JSON string, got" a
           // string).
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"grid": [1, 1, ]})",
                     "traceEvents[0].args.grid: expected a JSON integer, got no value (a "
                     "trailing comma, or text that is not JSON)"},
           std::pair{R"("pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"Process Group Name": )"
                     R"("a\ud800b"})",
                     "traceEvents[0].args.Process Group Name: expected a JSON string, got "
                     "\"a\\ud800b\", which does not decode (a lone \\u surrogate"},
       }) {
    const auto json = head + fields + "}]}";
    try {
      (void)import_kineto(as_bytes(json), "bad.json");
      ADD_FAILURE() << "accepted " << fields;
    } catch (const tdiag::input_error& e) {
      EXPECT_EQ(e.report().diagnostics.front().code, "TDIAG-TR-125");
      EXPECT_NE(std::string(e.what()).find(std::string("bad.json: ") + path), std::string::npos)
          << e.what();
    }
  }
  const std::string memory =
      R"({"traceEvents": [{"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 1,)"
      R"( "args": {"Device Type": 1, "Device Id": 0, "Addr": 64, "Bytes": " 123"}}]})";
  EXPECT_THROW((void)import_kineto(as_bytes(memory), "m.json"), tdiag::input_error);
  // args before "ph" are re-parsed from a copy: the message must not read the freed copy
  // (found by the fuzzer under ASan).
  const std::string early =
      R"({"traceEvents": [{"args": {"Bytes": -92233"X"72036854775808}, "ph": "i", "ts": 1,)"
      R"( "name": "[memory]", "pid": 0, "tid": 0}]})";
  try {
    (void)import_kineto(as_bytes(early), "early.json");
    ADD_FAILURE() << "accepted a broken Bytes";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("early.json: traceEvents[0].args.Bytes: expected a JSON "
                                         "integer, got -92233"),
              std::string::npos)
        << e.what();
  }
  const std::string base = R"({"baseTimeNanoseconds": "+12", "traceEvents": []})";
  try {
    (void)import_kineto(as_bytes(base), "b.json");
    ADD_FAILURE() << "accepted a string baseTimeNanoseconds";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: baseTimeNanoseconds: expected"),
              std::string::npos)
        << e.what();
  }
}

// ROCm writes stream ids as hex strings ("0x0"): read as the number, not refused, not 0.
TEST(KinetoFields, HexStreamStringsAreNumbers) {
  const std::string json =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,)"
      R"( "ts": 1, "dur": 1, "args": {"stream": "0x1f", "device": 0}}]})";
  const auto r = import_kineto(as_bytes(json), "rocm.json");
  ASSERT_EQ(r.trace.kernels.size(), 1u);
  EXPECT_EQ(r.trace.kernels.all().front().stream, 31u);
}

} // namespace

namespace {
// A key an event gives twice is read at its last value, as json.load (and HTA) read it
// (docs/trace-format.md).
TEST(KinetoFields, AKeyGivenTwiceIsReadAtItsLastValue) {
  const std::string json =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "first", "name": "second", )"
      R"("pid": 0, "tid": 7, "ts": 100, "dur": 10, "dur": 999, "args": {"stream": 7, "stream": 9}}]})";
  const auto t = import_kineto(as_bytes(json), "twice.json").trace;
  ASSERT_EQ(t.kernels.size(), 1u);
  const auto& k = t.kernels.all()[0];
  EXPECT_EQ(t.name(k.name), "second");
  EXPECT_EQ(k.end - k.start, 999'000);
  EXPECT_EQ(k.stream, 9u);
}
} // namespace
