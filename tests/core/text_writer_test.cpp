// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

#include "sample_report.hpp"

using tdiag::test::sample_report;

TEST(TextWriter, PutsTheMessageFirstThenFieldsHintAndStack) {
  const std::string text = tdiag::to_text(sample_report().diagnostics.at(0));
  const std::string first_line = text.substr(0, text.find('\n'));
  EXPECT_EQ(first_line, "kernels/gather.cu:42:5: error: index 4113 is out of range for 4096 rows "
                        "[TDIAG-DSA-001]");
  const auto fields = text.find("    block  = [3, 0, 0]\n");
  const auto nested = text.find("    nested = [[1, 2], \"x\", 0.5]\n");
  const auto note = text.find("  note: second note\n        with two lines\n");
  const auto hint = text.find("  hint: check the vocabulary size\n");
  const auto related = text.find("  related: main.cpp:88: launched here\n");
  const auto stack =
      text.find("    #0  0x00007f3a12c4e1b0 launch_checked at launch.cpp:57 (libtdiag.so)\n");
  ASSERT_NE(fields, std::string::npos) << text;
  ASSERT_NE(nested, std::string::npos) << text;
  ASSERT_NE(note, std::string::npos) << text;
  ASSERT_NE(hint, std::string::npos) << text;
  ASSERT_NE(related, std::string::npos) << text;
  ASSERT_NE(stack, std::string::npos) << text;
  EXPECT_LT(fields, note);
  EXPECT_LT(note, hint);
  EXPECT_LT(hint, related);
  EXPECT_LT(related, stack);
}

TEST(TextWriter, EndsWithASummaryLine) {
  const std::string text = tdiag::to_text(sample_report());
  EXPECT_NE(text.find("tensordiag 0.1.0 on gpu-node-07, rank 3, device 1 at 2026-12-02T13:14:15Z: "
                      "1 error, 1 warning, 1 note\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(tdiag::to_text(tdiag::report{}), "tensordiag: 0 errors, 0 warnings, 0 notes\n");
}

TEST(TextWriter, ColoursOnlyWhenAsked) {
  const auto r = sample_report();
  EXPECT_EQ(tdiag::to_text(r).find('\x1b'), std::string::npos);
  const std::string coloured = tdiag::to_text(r, {.color = true});
  EXPECT_NE(coloured.find("\x1b[1m\x1b[31merror:\x1b[0m"), std::string::npos);
}

TEST(TextWriter, EscapesControlCharactersFromTheReport) {
  tdiag::diagnostic d;
  d.message = "evil \x1b[2J clear";
  const std::string text = tdiag::to_text(d);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("evil \\x1b[2J clear"), std::string::npos);
}

TEST(TextWriter, FieldValuesReadNaturally) {
  EXPECT_EQ(tdiag::to_text(tdiag::field_value{17}), "17");
  EXPECT_EQ(tdiag::to_text(tdiag::field_value{2.5}), "2.5");
  EXPECT_EQ(tdiag::to_text(tdiag::field_value{"gather<float>"}), "gather<float>");
  EXPECT_EQ(tdiag::to_text(tdiag::field_value{tdiag::field_value::list{"a", true}}),
            "[\"a\", true]");
}

TEST(TextWriter, ColourWantedHonoursNoColorAndTerminals) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(tdiag::colour_wanted(fds[1])) << "a pipe is not a terminal";
  close(fds[0]);
  close(fds[1]);
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(tdiag::colour_wanted(STDOUT_FILENO));
  unsetenv("NO_COLOR");
}
