// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one way tensordiag reads outside files and writes its output files. Readers of outside
// input stay within a memory budget and read pipes as streams; output to `-o PATH` goes through a
// temporary file renamed over PATH only when PATH is (or will be) a regular file, and straight to
// a device, FIFO or the target of a symlink otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace tdiag {

/// Bytes one reader of outside input may hold. `TDIAG_MEMORY_LIMIT` when set (bytes, or with a
/// binary suffix K, M, G or T: `512M`, `8G`); otherwise half of the memory available now: the
/// smaller of MemAvailable and what the cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`)
/// leaves. Reads the environment and /proc on each call. A variable that is not a size throws
/// tdiag::input_error TDIAG-CORE-007 (the user meant a limit; the default would ignore it).
[[nodiscard]] std::uint64_t memory_budget();

/// Throws tdiag::input_error TDIAG-CORE-006 when `needed` bytes exceed memory_budget(). The one
/// line names `source` (the file), `what` it holds ("a chunk declaring 268435456 records") and the
/// bytes it would need, e.g. "x.tdtrace: a chunk declaring 268435456 records needs 8.0 GiB; the
/// memory budget is 2.0 GiB (TDIAG_MEMORY_LIMIT)". `advice`, when given, ends that line with
/// what to do instead (a reader that can open part of its input says how).
void check_memory_budget(std::string_view source, std::string_view what, std::uint64_t needed,
                         std::string_view advice = {});

/// An input file opened once. A regular file is read at offsets; anything else that can be read
/// (a pipe, a FIFO, process substitution, standard input as "-") is a stream read once from the
/// start. Devices and directories are refused when opened, so nothing ever blocks on /dev/zero.
class input_file {
public:
  /// Opens `path` ("-" is standard input). Throws tdiag::input_error TDIAG-CORE-004, one line
  /// naming the path: missing, a directory, a device, or unreadable.
  explicit input_file(const std::filesystem::path& path);
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  /// The path as messages show it ("<stdin>" for "-"), control characters escaped.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// True for a regular file: size() and read_at() work.
  [[nodiscard]] bool seekable() const noexcept { return seekable_; }
  /// The size of a regular file; 0 for a stream.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  /// Up to out.size() bytes at `offset` of a regular file (fewer at its end). Throws
  /// TDIAG-CORE-004 on a read error. Precondition: seekable().
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> out);
  /// Everything from the current position to the end, at most `limit` bytes (default
  /// memory_budget()): more throws TDIAG-CORE-006 naming the file. Call it once.
  [[nodiscard]] std::string read_all(std::uint64_t limit = memory_budget());

private:
  int fd_ = -1;
  bool owns_fd_ = true;
  bool seekable_ = false;
  std::uint64_t size_ = 0;
  std::string name_;
};

/// The whole of `path` ("-" is standard input) within the memory budget: input_file's rules.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path);

/// The destination of a command's output. Empty or "-" is standard output. A symlink is
/// followed; a target that is or will be a regular file is written through a temporary file in
/// its directory, renamed over it by commit() (its mode is kept), so a failed or abandoned write
/// leaves the old file as it was; a device or FIFO is written directly.
class output_file {
public:
  explicit output_file(const std::filesystem::path& target);
  ~output_file(); ///< Removes the temporary file unless commit() ran.
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  /// The target as messages show it ("<stdout>" for standard output).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Where a writer that wants a path should write (the temporary file, the device itself or
  /// /dev/stdout). Created empty by the constructor.
  [[nodiscard]] const std::filesystem::path& write_path() const noexcept { return write_path_; }
  /// The stream open on write_path(). Throws TDIAG-CORE-005 when it cannot be opened.
  [[nodiscard]] std::FILE* stream();
  /// Appends `text` to stream(); throws TDIAG-CORE-005 when the write fails.
  void write(std::string_view text);
  /// Flushes and closes the stream, then renames the temporary file over the target. Throws
  /// tdiag::error TDIAG-CORE-005 naming the target; the temporary file is then removed.
  void commit();

private:
  [[noreturn]] void fail(std::string_view what, int err);
  std::filesystem::path target_;
  std::filesystem::path write_path_;
  std::string name_;
  std::FILE* stream_ = nullptr;
  bool to_stdout_ = false;
  bool temporary_ = false;
  bool committed_ = false;
};

/// `text` to `target` (empty or "-": standard output) as output_file writes it. Throws
/// tdiag::error TDIAG-CORE-005 naming the target; a regular target is then left untouched.
void write_output(const std::filesystem::path& target, std::string_view text);

} // namespace tdiag
