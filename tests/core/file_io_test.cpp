// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "sample_report.hpp"

namespace fs = std::filesystem;

namespace {
class FileIo : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tdiag_file_io_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};
} // namespace

TEST_F(FileIo, WritesAndReadsAReport) {
  const auto r = tdiag::test::sample_report();
  const auto path = dir_ / "report.json";
  tdiag::write_text_file(path, tdiag::to_json(r));
  EXPECT_EQ(tdiag::to_json(tdiag::read_report_file(path)), tdiag::to_json(r));
  // Only the target is left: the temporary file was renamed.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FileIo, MissingFileIsAnInputErrorNamingThePath) {
  const auto path = dir_ / "absent.json";
  try {
    (void)tdiag::read_report_file(path);
    FAIL() << "no exception";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": cannot open: No such file or directory");
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-CORE-004");
  }
  EXPECT_THROW((void)tdiag::read_report_file(dir_), tdiag::input_error);
}

TEST_F(FileIo, ParseErrorsNameTheFile) {
  const auto path = dir_ / "bad.json";
  tdiag::write_text_file(path, "{\"schema\":");
  try {
    (void)tdiag::read_report_file(path);
    FAIL() << "no exception";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ":1:11: the input ends inside an array or object")
        << e.what();
  }
}

TEST_F(FileIo, UnwritablePathThrowsError) {
  try {
    tdiag::write_text_file(dir_ / "no" / "such" / "dir.json", "x");
    FAIL() << "no exception";
  } catch (const tdiag::error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-CORE-005");
    EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos);
  }
}
