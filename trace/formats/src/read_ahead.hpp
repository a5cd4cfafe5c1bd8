// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: reads a regular file block by block ahead of the one thread that parses it, on a
// thread of its own. The kernel's copy of a file into the reader's buffer (pread) was a tenth of
// a snapshot import's parsing thread; done beside it, on the other core, while the parser works
// on the block before, it no longer delays it. Two buffers take turns: the thread fills one
// while the parser reads the other, and each has room before its block for the few bytes the
// parser had not consumed of the last one (a value cut by the block's end), so a block is never
// copied again. The file is read with the same input_file::read_at a parser without the thread
// uses: a read error is thrown to the parser when it reaches that block, and a file that
// shrinks gives short blocks, as it would give short reads.
#pragma once

#include <tensordiag/core/file_io.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace tdiag::trace::detail {

class read_ahead {
public:
  /// Room before each block for the bytes of the last one not consumed yet.
  static constexpr std::size_t head = std::size_t{64} << 10;

  /// Reads `file` (regular, seekable) in blocks of `block` bytes.
  read_ahead(input_file& file, std::size_t block);
  read_ahead(const read_ahead&) = delete;
  read_ahead& operator=(const read_ahead&) = delete;
  ~read_ahead() { stop(); }

  /// Starts the thread on the block at `offset`; false (and no thread) where one cannot be
  /// started: the caller then reads the file itself.
  bool start(std::uint64_t offset);
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  /// The memory its buffers hold.
  [[nodiscard]] std::size_t bytes() const noexcept { return buffers_[0] ? 2 * (head + block_) : 0; }

  /// The block at `offset`, waiting for it: its bytes are [data, data + size), with head bytes
  /// free before data; size is short (or 0) at the file's end. Null where the thread read
  /// another offset (the caller reads the file itself). Throws what the read threw. The block
  /// stays the caller's until next(): only then does the thread go on into the other buffer.
  std::uint8_t* take(std::uint64_t offset, std::size_t& size);
  /// The caller is done with the block before the one take() gave: the thread reads the one
  /// after it into that buffer.
  void next();
  /// Stops and joins the thread.
  void stop() noexcept;

private:
  void run();

  input_file& file_;
  std::size_t block_;
  std::unique_ptr<std::uint8_t[]> buffers_[2];
  std::mutex mutex_;
  std::condition_variable wake_;
  // Guarded by mutex_: the block the thread reads or has read (into buffers_[filling_]).
  std::uint64_t offset_ = 0;
  std::size_t size_ = 0;
  int filling_ = 0;
  bool wanted_ = false, ready_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

} // namespace tdiag::trace::detail
