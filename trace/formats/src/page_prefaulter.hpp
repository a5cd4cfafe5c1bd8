// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: makes the pages of an array resident a little ahead of the one thread that writes
// it, on a thread of its own. A snapshot's rows take fresh memory at ~90 bytes an event, and
// the kernel zeroing those pages (MADV_POPULATE_WRITE) was a third of a 10M-event
// import; done beside the parser, on the other core, it no longer delays it. The pages stay
// the writer's: making them resident changes no byte, so the two threads share nothing but
// two counters, and a writer that overtakes the thread faults its pages in itself, as it would
// without one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace tdiag::trace::detail {

class page_prefaulter {
public:
  /// Pages are made resident `step` bytes at a time.
  static constexpr std::size_t step = std::size_t{2} << 20;
  /// How far past the writer: the most memory made resident that the array may never use.
  static constexpr std::size_t ahead = std::size_t{4} << 20;

  page_prefaulter() = default;
  page_prefaulter(const page_prefaulter&) = delete;
  page_prefaulter& operator=(const page_prefaulter&) = delete;
  ~page_prefaulter() { stop(); }

  /// Starts the thread over [begin, begin + bytes); false (and no thread) where one cannot be
  /// started. Where the kernel cannot populate pages the thread ends at its first try. Either
  /// way done() stays behind and the writer populates its pages itself.
  bool start(void* begin, std::size_t bytes);
  /// The writer reaches byte `offset`: the thread may run up to `ahead` past it.
  void writer_at(std::size_t offset);
  /// Bytes from the start already resident.
  [[nodiscard]] std::size_t done() const noexcept { return done_.load(std::memory_order_acquire); }
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  /// Stops and joins the thread (the pages it made resident stay so).
  void stop() noexcept;

private:
  void run();

  std::uintptr_t begin_ = 0;
  std::size_t bytes_ = 0;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::size_t wanted_ = 0; // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

/// Makes [begin, begin + bytes) resident and writable without writing to it (one call, not a
/// fault per page); false where the kernel cannot (before Linux 5.14): the pages then fault in
/// as they are written.
bool populate_pages(std::uintptr_t begin, std::size_t bytes) noexcept;

} // namespace tdiag::trace::detail
