// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The snapshot importer's page prefaulter (trace/formats/src/page_prefaulter.hpp): pages become
// resident ahead of the writer, no further than `ahead` past it, and no byte changes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <sys/mman.h>
#include <thread>
#include <vector>

#include "formats/src/page_prefaulter.hpp"

namespace {

using tdiag::trace::detail::page_prefaulter;
using tdiag::trace::detail::populate_pages;

constexpr std::size_t page = 4096;

struct mapping {
  explicit mapping(std::size_t n)
      : bytes(n), data(static_cast<unsigned char*>(::mmap(nullptr, n, PROT_READ | PROT_WRITE,
                                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {}
  ~mapping() { ::munmap(data, bytes); }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  // Resident pages in [from, to).
  std::size_t resident(std::size_t from, std::size_t to) const {
    std::vector<unsigned char> in((to - from) / page);
    EXPECT_EQ(::mincore(data + from, to - from, in.data()), 0);
    std::size_t n = 0;
    for (const auto c : in)
      n += c & 1;
    return n;
  }
  std::size_t bytes;
  unsigned char* data;
};

bool wait_for(const page_prefaulter& p, std::size_t done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (p.done() < done && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return p.done() >= done;
}

TEST(PagePrefaulter, MakesPagesResidentAheadOfTheWriterAndNoFurther) {
  const std::size_t size = 32 << 20;
  mapping m(size);
  ASSERT_NE(m.data, MAP_FAILED);
  // Disable huge pages here, so residency is counted in 4 KiB pages the test can predict.
  (void)::madvise(m.data, size, MADV_NOHUGEPAGE);
  if (!populate_pages(reinterpret_cast<std::uintptr_t>(m.data), page))
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux < 5.14): nothing to test";
  std::memset(m.data + 10 * page, 0x5a, page); // a page the writer already wrote

  page_prefaulter p;
  ASSERT_TRUE(p.start(m.data, size));
  ASSERT_TRUE(wait_for(p, page_prefaulter::ahead)) << "the first pages, before the writer asks";
  p.writer_at(8 << 20);
  const std::size_t expect = (8 << 20) + page_prefaulter::ahead;
  ASSERT_TRUE(wait_for(p, expect));
  p.stop();
  EXPECT_EQ(p.done(), expect) << "no further than ahead past the writer";
  EXPECT_EQ(m.resident(0, expect), expect / page);
  EXPECT_EQ(m.resident(expect, size), 0u);
  for (std::size_t i = 0; i < expect; ++i)
    ASSERT_EQ(m.data[i], i / page == 10 ? 0x5a : 0) << "byte " << i << " changed";
}

TEST(PagePrefaulter, StopsWhileWaitingAndStopsAtTheEnd) {
  const std::size_t size = 6 << 20;
  mapping m(size);
  ASSERT_NE(m.data, MAP_FAILED);
  if (!populate_pages(reinterpret_cast<std::uintptr_t>(m.data), page))
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux < 5.14): nothing to test";
  page_prefaulter p;
  ASSERT_TRUE(p.start(m.data, size));
  EXPECT_TRUE(p.running());
  p.writer_at(size); // past the end: clamped to it
  ASSERT_TRUE(wait_for(p, size));
  EXPECT_EQ(p.done(), size);
  p.stop();
  EXPECT_FALSE(p.running());
  p.stop(); // twice: nothing
  // Restarted over another range, and destroyed while it waits for the writer.
  mapping other(8 << 20);
  ASSERT_TRUE(p.start(other.data, other.bytes));
  ASSERT_TRUE(wait_for(p, page_prefaulter::ahead));
}

} // namespace
