// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>

#include <gtest/gtest.h>

TEST(Error, WhatIsTheFirstMessageAndTheReportTravels) {
  tdiag::diagnostic d;
  d.code = "TDIAG-TEST-001";
  d.title = "title";
  d.message = "the message";
  const tdiag::error e(d);
  EXPECT_STREQ(e.what(), "the message");
  ASSERT_EQ(e.report().diagnostics.size(), 1u);
  EXPECT_EQ(e.report().diagnostics[0].code, "TDIAG-TEST-001");
  EXPECT_FALSE(e.report().metadata.version.empty());
}

TEST(Error, FallsBackToTheTitleOrASentence) {
  tdiag::diagnostic d;
  d.title = "only a title";
  EXPECT_STREQ(tdiag::error(d).what(), "only a title");
  EXPECT_STREQ(tdiag::error(tdiag::report{}).what(), "tensordiag error (empty report)");
}

TEST(Error, InputErrorIsAnError) {
  tdiag::diagnostic d;
  d.message = "bad input";
  try {
    throw tdiag::input_error(d);
  } catch (const tdiag::error& e) {
    EXPECT_STREQ(e.what(), "bad input");
    EXPECT_NE(dynamic_cast<const tdiag::input_error*>(&e), nullptr);
  }
}

TEST(Error, ThrowInputErrorCarriesOneDiagnostic) {
  try {
    tdiag::throw_input_error("TDIAG-CORE-004", "cannot read the file", "x.json: no such file",
                             "check the path", {{"path", std::string("x.json")}});
    FAIL() << "did not throw";
  } catch (const tdiag::input_error& e) {
    EXPECT_STREQ(e.what(), "x.json: no such file");
    ASSERT_EQ(e.report().diagnostics.size(), 1u);
    const auto& d = e.report().diagnostics[0];
    EXPECT_EQ(d.level, tdiag::severity::error);
    EXPECT_EQ(d.code, "TDIAG-CORE-004");
    EXPECT_EQ(d.title, "cannot read the file");
    EXPECT_EQ(d.hint, "check the path");
    ASSERT_NE(d.find_field("path"), nullptr);
  }
}
