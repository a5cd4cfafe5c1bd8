// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// fn(i) for every i in [0, count) on up to `threads` threads (the caller's one among them), each
// taking the next index; the first exception by index is rethrown once all are done, so what
// fails is reported as it would be one index after another. Internal: not installed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tdiag::trace::detail {

/// 0 threads: one per hardware thread. Never more threads than indices.
template <typename Fn> void parallel_for(std::size_t count, unsigned threads, Fn&& fn) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(count);
  auto work = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned i = 1; i < threads; ++i)
      pool.emplace_back(work);
    work();
  }
  for (const auto& e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace tdiag::trace::detail
