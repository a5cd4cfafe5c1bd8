// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/id_store.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <unistd.h>

namespace {

using namespace tdiag::dtensor::comm;
using namespace std::chrono_literals;

const std::string blob(128, 'x');

TEST(IdStore, FileStoreHandsTheIdToLateReaders) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tdiag-id-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string got;
  std::thread reader([&] { got = make_file_store(dir, "job1")->fetch(blob.size(), 10s); });
  std::this_thread::sleep_for(20ms);
  make_file_store(dir, "job1")->publish(blob, 1);
  reader.join();
  EXPECT_EQ(got, blob);
  std::filesystem::remove_all(dir);
}

TEST(IdStore, FileStoreTimesOutNamingThePath) {
  try {
    (void)make_file_store(std::filesystem::temp_directory_path(), "tdiag-never-written")
        ->fetch(8, 30ms);
    FAIL() << "expected a timeout";
  } catch (const tdiag::error& e) {
    EXPECT_NE(std::string(e.what()).find("tdiag-never-written"), std::string::npos) << e.what();
  }
}

} // namespace
