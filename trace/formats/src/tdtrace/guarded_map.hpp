// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A read-only private mapping of a file that another process may truncate while it is mapped.
// Touching a page past the file's new end raises SIGBUS, which would end the process (and the
// Python interpreter with it). A process-wide handler, installed with the first mapping and
// chaining to the handler before it for every other fault, turns a fault inside a guarded mapping
// into zero pages from the faulting page to the mapping's end and marks the mapping changed: the
// reader sees zeros, then changed(), never the signal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tdiag::trace::detail {

/// The size of the file open as `fd` now, or -1.
[[nodiscard]] std::int64_t size_now(int fd) noexcept;

class guarded_map {
public:
  /// Maps `size` bytes of `fd`, or returns null with `why` set (the mapping failed, the file is
  /// not `size` bytes any more, or too many guarded mappings are alive at once).
  static std::shared_ptr<const guarded_map> map(int fd, std::size_t size, std::string& why);
  ~guarded_map();
  guarded_map(const guarded_map&) = delete;
  guarded_map& operator=(const guarded_map&) = delete;

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept;
  /// A page was touched past the file's end: the file shrank under the mapping, and the bytes
  /// read from there on are zeros, not the file's.
  [[nodiscard]] bool changed() const noexcept;

private:
  guarded_map(void* base, std::size_t size, std::size_t slot) noexcept;
  void* base_;
  std::size_t size_;
  std::size_t slot_;
};

} // namespace tdiag::trace::detail
