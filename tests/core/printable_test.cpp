// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace {

// `n` copies of `c`: a length given as a parameter, as clang-tidy takes a literal one of ten
// million for a swapped argument.
std::string repeated(char c, std::size_t n) {
  return std::string(n, c);
}

} // namespace

TEST(Printable, EscapesEveryControlCharacter) {
  EXPECT_EQ(tdiag::printable(std::string("a\nb\tc\x1b[31m\a\x7f") + '\0'),
            "a\\x0ab\\x09c\\x1b[31m\\x07\\x7f\\x00");
  EXPECT_EQ(tdiag::escape_controls("a\nb\tc\x1b", true), "a\nb\tc\\x1b");
  EXPECT_EQ(tdiag::printable("plain"), "plain");
}

TEST(Printable, CutsTheMiddleOfLongValues) {
  const std::string value = "start" + repeated('x', 10'000'000) + "end";
  const auto shown = tdiag::printable(value, 100);
  EXPECT_LT(shown.size(), 140u);
  EXPECT_EQ(shown.rfind("startxx", 0), 0u);
  EXPECT_EQ(shown.substr(shown.size() - 5), "xxend");
  EXPECT_NE(shown.find("bytes cut]"), std::string::npos);
}

TEST(Printable, NeverSplitsAUtf8Character) {
  std::string value;
  for (int i = 0; i < 100; ++i)
    value += "\xc3\xa9"; // é
  const auto shown = tdiag::printable(value, 51);
  const auto cut = shown.find("...[");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(cut % 2, 0u);
  EXPECT_EQ((shown.size() - shown.find("]...") - 4) % 2, 0u);
}

TEST(Printable, ThrownErrorsAreOneLine) {
  tdiag::diagnostic d;
  d.code = "TDIAG-CORE-004";
  d.message = "bad\nfile" + std::string(1'000'000, 'v') + ": what is wrong";
  const tdiag::error e(d);
  const std::string what = e.what();
  EXPECT_EQ(what.find('\n'), std::string::npos);
  EXPECT_LE(what.size(), tdiag::error_message_max_bytes + 40);
  EXPECT_EQ(what.rfind("bad\\x0afile", 0), 0u);
  EXPECT_EQ(what.substr(what.size() - 15), ": what is wrong");
  EXPECT_EQ(e.report().diagnostics.at(0).message, what);
}

TEST(Printable, GithubAnnotationsCarryNoRawControlBytes) {
  tdiag::report r;
  tdiag::diagnostic d;
  d.code = "TDIAG-X-001";
  d.message = std::string("op\x1b[2J\a") + '\0' + "name";
  r.diagnostics.push_back(d);
  const auto out = tdiag::to_github(r);
  for (const char c : out)
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << static_cast<int>(c);
  EXPECT_NE(out.find("op\\x1b[2J\\x07\\x00name"), std::string::npos) << out;
}

TEST(Printable, LinesKeepNewlinesAndTabsAndCut) {
  EXPECT_EQ(tdiag::printable_lines("a\nb\tc\x1b\r"), "a\nb\tc\\x1b\\x0d");
  const auto shown = tdiag::printable_lines("top\n" + std::string(100'000, 'y') + "\nend", 600);
  EXPECT_LT(shown.size(), 640u);
  EXPECT_EQ(shown.rfind("top\nyyy", 0), 0u);
  EXPECT_EQ(shown.substr(shown.size() - 4), "\nend");
}

// A 10 MB op name from a trace is cut in the human-readable formats (in the message, a field's
// value and the file name); the JSON report keeps it whole, as data.
TEST(Printable, HumanFormatsCutHugeValues) {
  tdiag::report r;
  tdiag::diagnostic d;
  d.code = "TDIAG-X-002";
  const std::string name = "kernel_" + repeated('k', 10'000'000) + "_end\x1b";
  d.message = "#1 of kernel time: " + name;
  d.add_field("kernel", name);
  d.location.file = name;
  r.diagnostics.push_back(d);
  for (const auto& out : {tdiag::to_text(r), tdiag::to_github(r)}) {
    EXPECT_LT(out.size(), 8 * tdiag::report_text_max_bytes);
    EXPECT_NE(out.find("bytes cut]..."), std::string::npos);
    EXPECT_NE(out.find("_end\\x1b"), std::string::npos);
    EXPECT_EQ(out.find('\x1b'), std::string::npos);
  }
  EXPECT_NE(tdiag::to_json(r).find(repeated('k', 10'000'000)), std::string::npos);
}

// Bytes that are not well-formed UTF-8 (a lone surrogate as Python's pickle writes it, Latin-1
// text, a cut character) are escaped like control characters; valid characters stay.
TEST(Printable, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(tdiag::printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(tdiag::printable("a\xed\xa0\x80z"), "a\\xed\\xa0\\x80z");      // U+D800
  EXPECT_EQ(tdiag::printable("caf\xe9"), "caf\\xe9");                      // Latin-1
  EXPECT_EQ(tdiag::printable("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
  EXPECT_EQ(tdiag::printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // past U+10FFFF
  EXPECT_EQ(tdiag::printable("end\xe2\x82"), "end\\xe2\\x82");             // cut short
  EXPECT_EQ(tdiag::printable_lines("a\n\xff"), "a\n\\xff");
}
