// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The snapshot importer's read-ahead thread (trace/formats/src/read_ahead.hpp): blocks come in
// file order with room before each for a tail, a file cut after it was opened gives short
// blocks, and a block at another offset is refused, not served.
#include <tensordiag/core/file_io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "formats/src/read_ahead.hpp"

namespace {

using tdiag::trace::detail::read_ahead;

class ReadAhead : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tdiag_read_ahead_" + std::to_string(::getpid()) + ".bin");
    bytes_.resize(1'000'003);
    std::uint32_t x = 12345;
    for (auto& b : bytes_)
      b = static_cast<std::uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()),
               static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::filesystem::path path_;
  std::vector<std::uint8_t> bytes_;
};

TEST_F(ReadAhead, GivesTheFileInBlocksWithRoomForATail) {
  tdiag::input_file file(path_);
  constexpr std::size_t block = 65536;
  read_ahead ahead(file, block);
  ASSERT_TRUE(ahead.start(100));
  std::uint64_t at = 100;
  std::vector<std::uint8_t> seen(bytes_.begin(), bytes_.begin() + 100);
  const std::uint8_t* last = nullptr;
  std::size_t last_size = 0;
  for (;;) {
    std::size_t size = 0;
    auto* data = ahead.take(at, size);
    ASSERT_NE(data, nullptr) << "at " << at;
    // The room before the block takes the last one's final bytes, as the importer puts them.
    if (last != nullptr) {
      const auto tail = std::min<std::size_t>(last_size, 7);
      std::memcpy(data - tail, last + last_size - tail, tail);
      ASSERT_EQ(std::memcmp(data - tail, bytes_.data() + at - tail, tail), 0);
    }
    seen.insert(seen.end(), data, data + size);
    if (size == 0)
      break;
    ASSERT_LE(size, block);
    at += size;
    last = data, last_size = size;
    ahead.next();
  }
  EXPECT_EQ(seen, bytes_);
  ahead.next();
  std::size_t size = 1;
  EXPECT_EQ(ahead.take(at, size), nullptr) << "nothing is read past the end";
}

TEST_F(ReadAhead, AFileCutShortGivesShortBlocksAndAnotherOffsetIsRefused) {
  tdiag::input_file file(path_);
  read_ahead ahead(file, 300'000);
  ASSERT_TRUE(ahead.start(0));
  std::size_t size = 0;
  ASSERT_NE(ahead.take(0, size), nullptr);
  EXPECT_EQ(size, 300'000u);
  // Another process cuts the file while it is read: the next blocks are as short as the reads.
  std::filesystem::resize_file(path_, 400'000);
  ahead.next();
  ASSERT_NE(ahead.take(300'000, size), nullptr);
  EXPECT_EQ(size, 100'000u);
  ahead.next();
  EXPECT_EQ(ahead.take(999, size), nullptr) << "a block at another offset is not served";
  ahead.stop();
  EXPECT_FALSE(ahead.running());
  // Started again, and destroyed while it reads.
  ASSERT_TRUE(ahead.start(0));
}

} // namespace
