// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "read_ahead.hpp"

#include <algorithm>
#include <span>
#include <system_error>

namespace tdiag::trace::detail {

read_ahead::read_ahead(input_file& file, std::size_t block) : file_(file), block_(block) {}

bool read_ahead::start(std::uint64_t offset) {
  stop();
  for (auto& b : buffers_)
    if (!b)
      b = std::make_unique_for_overwrite<std::uint8_t[]>(head + block_);
  offset_ = offset;
  size_ = 0;
  filling_ = 0;
  wanted_ = true;
  ready_ = stopping_ = false;
  error_ = nullptr;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    return false; // no thread to spare: the caller reads the file itself
  }
  return true;
}

std::uint8_t* read_ahead::take(std::uint64_t offset, std::size_t& size) {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return ready_ || !wanted_; });
  if (!ready_ || offset_ != offset)
    return nullptr;
  if (error_)
    std::rethrow_exception(error_);
  size = size_;
  return buffers_[filling_].get() + head;
}

void read_ahead::next() {
  {
    const std::lock_guard lock(mutex_);
    ready_ = false;
    if (size_ == 0)
      return; // the file's end: nothing more to read
    offset_ += size_;
    filling_ ^= 1;
    wanted_ = true;
  }
  wake_.notify_one();
}

void read_ahead::stop() noexcept {
  if (!thread_.joinable())
    return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  wanted_ = ready_ = false;
}

void read_ahead::run() {
  for (;;) {
    std::uint64_t offset = 0;
    std::uint8_t* into = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (wanted_ && !ready_); });
      if (stopping_)
        return;
      offset = offset_;
      into = buffers_[filling_].get() + head;
    }
    std::size_t got = 0;
    std::exception_ptr error;
    try {
      // As the parser's own reads: until the block is full, or the file's size when it was
      // opened is reached, or it gives no more.
      const std::uint64_t left = file_.size() > offset ? file_.size() - offset : 0;
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(block_, left));
      while (got < want) {
        const auto n =
            file_.read_at(offset + got, std::as_writable_bytes(std::span(into + got, want - got)));
        if (n == 0)
          break;
        got += n;
      }
    } catch (...) {
      error = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      size_ = got;
      error_ = error;
      ready_ = true;
      wanted_ = false;
    }
    wake_.notify_all();
  }
}

} // namespace tdiag::trace::detail
