// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "page_prefaulter.hpp"

#include <algorithm>
#include <sys/mman.h>
#include <system_error>

namespace tdiag::trace::detail {

bool populate_pages(std::uintptr_t begin, std::size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t page = 4096;
  const auto b = (begin + page - 1) & -page;
  const auto e = (begin + bytes) & -page;
  return e <= b || ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE) == 0;
#else
  (void)begin, (void)bytes;
  return false;
#endif
}

bool page_prefaulter::start(void* begin, std::size_t bytes) {
  stop();
  begin_ = reinterpret_cast<std::uintptr_t>(begin);
  bytes_ = bytes;
  done_.store(0, std::memory_order_relaxed);
  wanted_ = std::min(bytes_, ahead); // the writer's first pages
  stopping_ = false;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    return false; // no thread to spare: the writer populates its pages itself
  }
  return true;
}

void page_prefaulter::writer_at(std::size_t offset) {
  {
    const std::lock_guard lock(mutex_);
    wanted_ = std::min(bytes_, offset + ahead);
  }
  wake_.notify_one();
}

void page_prefaulter::stop() noexcept {
  if (!thread_.joinable())
    return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void page_prefaulter::run() {
  std::size_t done = 0;
  for (;;) {
    std::size_t wanted = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || wanted_ > done; });
      if (stopping_)
        return;
      wanted = wanted_;
    }
    while (done < wanted) {
      const auto next = std::min(wanted, (done / step + 1) * step);
      // Refused (no MADV_POPULATE_WRITE, or no memory): the writer's own faults take over, and
      // tell of the memory.
      if (!populate_pages(begin_ + done, next - done))
        return;
      done = next;
      done_.store(done, std::memory_order_release);
    }
  }
}

} // namespace tdiag::trace::detail
