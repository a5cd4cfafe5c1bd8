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

TEST(IdStore, TcpStoreServesEveryReaderOnLoopback) {
  auto server = make_tcp_store(0, true, 10s);
  const int port = tcp_store_port(*server);
  ASSERT_GT(port, 0);
  std::vector<std::string> got(3);
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      got[static_cast<std::size_t>(r)] = make_tcp_store(port, false)->fetch(blob.size(), 10s);
    });
  }
  server->publish(blob, 3);
  for (auto& t : readers)
    t.join();
  for (const auto& g : got)
    EXPECT_EQ(g, blob);
}

} // namespace
