// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The windowed traceEvents stream (issue 18 items 3, 9 and 10): nothing but white space may
// follow the top-level value, a truncated top level is named as such, and one huge value is
// refused within the memory budget instead of growing the window until bad_alloc.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

using tdiag::trace::test::as_bytes;

constexpr std::string_view event =
    R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1})";

// `n` events, comma separated.
std::string events(int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    (out += i == 0 ? "" : ",\n") += event;
  return out;
}

// The input_error of importing `json` with 4 KiB windows, or a failure.
tdiag::diagnostic refusal(const std::string& json, std::string_view name) {
  try {
    (void)import_kineto(as_bytes(json), name, {}, nullptr, 4096);
  } catch (const tdiag::input_error& e) {
    return e.report().diagnostics.front();
  }
  ADD_FAILURE() << name << " accepted";
  return {};
}

TEST(KinetoStream, TrailingContentIsRefused) {
  // Small ones (one window) and long ones (the trailing bytes in a later window).
  for (const int n : {1, 500}) {
    const auto object = R"({"traceEvents": [)" + events(n) + "]}";
    const auto bare = "[" + events(n) + "]";
    for (const auto& json : {object + R"({"traceEvents": []})", object + " xyz", bare + " [1]",
                             bare + std::string(1, '\0'), object + "\n}"}) {
      const auto d = refusal(json, "trailing.json");
      EXPECT_EQ(d.code, "TDIAG-TR-121") << d.message;
      EXPECT_NE(d.message.find("trailing.json: byte offset"), std::string::npos) << d.message;
      EXPECT_NE(d.message.find("trailing content after the top-level JSON value"),
                std::string::npos)
          << d.message;
    }
  }
}

TEST(KinetoStream, WhiteSpaceAfterTheValueIsAccepted) {
  for (const auto& json : {R"({"traceEvents": [)" + events(3) + "], \"x\": [1, {}]} \n\t\r\n",
                           "[" + events(3) + "]\n"}) {
    const auto r = import_kineto(as_bytes(json), "ok.json", {}, nullptr, 4096);
    EXPECT_EQ(r.trace.api_calls.size(), 3u);
  }
}

TEST(KinetoStream, TruncatedTopLevelObjectIsNamed) {
  const auto json = R"({"traceEvents": [)" + events(2) + R"(], "meta": {"a": [1, 2)";
  const auto d = refusal(json, "cut.json");
  EXPECT_EQ(d.code, "TDIAG-TR-122") << d.message;
  EXPECT_NE(d.message.find("cut.json: byte offset"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("truncated"), std::string::npos) << d.message;
}

// Not "ended early" (issue 18 item 9): a non-object event, a stray byte between events and a
// mismatched bracket are named with the event's index, small inputs and long ones alike.
TEST(KinetoStream, NonObjectEventsAndStrayBytesAreNamed) {
  for (const int n : {1, 500}) {
    const auto head = R"({"traceEvents": [)" + events(n);
    const auto at = std::to_string(n);
    for (const auto& [json, what] : {
             std::pair{head + R"(, "str"]})", "traceEvents[" + at + "] is a string, not an event"},
             std::pair{head + ", 7]}", "traceEvents[" + at + "] is a number"},
             std::pair{head + std::string(1, '\0') + "]}",
                       "\\x00 after traceEvents[" + std::to_string(n - 1) + "] where ','"},
             std::pair{head + R"(, {"ph": "X"]})", "']' closes a '{' in traceEvents[" + at + "]"},
         }) {
      const auto d = refusal(json, "odd.json");
      EXPECT_EQ(d.code, "TDIAG-TR-121") << d.message;
      EXPECT_NE(d.message.find("odd.json: byte offset"), std::string::npos) << d.message;
      EXPECT_NE(d.message.find(what), std::string::npos) << what << " / " << d.message;
    }
  }
}

// A 16 MiB string (in an event, before the events, or after them) under a 4 MiB budget.
TEST(KinetoStream, OneHugeValueStaysWithinTheMemoryBudget) {
  setenv("TDIAG_MEMORY_LIMIT", "4M", 1);
  const std::string huge = '"' + std::string(std::size_t{16} << 20, 'a') + '"';
  for (const auto& json :
       {R"({"traceEvents": [)" + events(2) + R"(, {"ph": "X", "name": )" + huge + "}]}",
        R"({"x": )" + huge + R"(, "traceEvents": []})",
        R"({"traceEvents": [)" + events(2) + R"(], "x": )" + huge + "}"}) {
    const auto d = refusal(json, "huge.json");
    EXPECT_EQ(d.code, "TDIAG-CORE-006") << d.message;
    EXPECT_NE(d.message.find("huge.json: "), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("the memory budget is 4.0 MiB"), std::string::npos) << d.message;
  }
  unsetenv("TDIAG_MEMORY_LIMIT");
  // Within the budget the same value loads.
  const auto ok = import_kineto(
      as_bytes(R"({"traceEvents": [)" + events(2) + R"(], "x": )" + huge + "}"), "fine.json");
  EXPECT_EQ(ok.trace.api_calls.size(), 2u);
}

// Two traces concatenated: the second document is named where it begins, also when the first
// one's events end mid-window and the second's fill later windows (it was read as nothing).
TEST(KinetoStream, SecondDocumentIsRefusedWhereItBegins) {
  for (const int n : {1, 500}) {
    const auto object = R"({"schemaVersion": 1, "traceEvents": [)" + events(n) + "]}";
    const auto d = refusal(object + "\n" + object, "two_docs.json");
    EXPECT_EQ(d.code, "TDIAG-TR-121") << d.message;
    EXPECT_NE(d.message.find(fmt::format("two_docs.json: byte offset {}: ", object.size() + 1)),
              std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("a second JSON document begins here"), std::string::npos) << d.message;
  }
}

// A top level with "traceEvents" twice: whichever holds the events, the other was silently
// dropped; now one line names the second key.
TEST(KinetoStream, TraceEventsTwiceIsRefused) {
  for (const int n : {1, 500}) {
    const auto first_empty = R"({"traceEvents": [], "x": 1, "traceEvents": [)" + events(n) + "]}";
    const auto second_scalar = R"({"traceEvents": [)" + events(n) + R"(], "traceEvents": 5})";
    for (const auto& json : {first_empty, second_scalar}) {
      const auto d = refusal(json, "dup.json");
      EXPECT_EQ(d.code, "TDIAG-TR-121") << d.message;
      EXPECT_NE(d.message.find("\"traceEvents\" appears twice"), std::string::npos) << d.message;
    }
  }
  // A "traceEvents" that is no array is named as such, before the one that is.
  const auto d = refusal(R"({"traceEvents": 5, "traceEvents": [)" + events(3) + "]}", "dup.json");
  EXPECT_EQ(d.code, "TDIAG-TR-123") << d.message;
  EXPECT_NE(d.message.find("dup.json: byte offset 16: \"traceEvents\" is a number, not an array"),
            std::string::npos)
      << d.message;
}

// Top-level keys after the events are metadata, also when a later key's value is an array that
// ends like the events do (its ']' after a '}'): they were once read as the events' end.
TEST(KinetoStream, ArraysAfterTheEventsAreMetadata) {
  for (const int n : {1, 500}) {
    const auto json =
        R"({"traceEvents": [)" + events(n) + R"(], "extra": [{"a": 1}], "displayTimeUnit": "ms"})";
    kineto_stats stats;
    const auto r = import_kineto(as_bytes(json), "after.json", {}, &stats, 4096);
    EXPECT_EQ(stats.events, static_cast<std::size_t>(n));
    const auto& props = r.trace.metadata.properties;
    EXPECT_NE(std::find(props.begin(), props.end(),
                        std::pair<std::string, std::string>{"displayTimeUnit", "ms"}),
              props.end());
  }
}

} // namespace
