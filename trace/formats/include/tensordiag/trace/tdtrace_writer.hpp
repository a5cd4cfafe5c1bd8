// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Writes .tdtrace files (docs/trace-format.md) from a background thread. Producers hand over
// batches (small `trace` objects with their own tables, e.g. one per CUPTI buffer); the writer
// thread re-interns them into self-contained chunks of about `chunk_bytes`, encodes the columns,
// compresses with zstd, checksums and appends each chunk, then writes a footer index at close().
// A crash loses at most the chunk being built (at most `flush_interval` old).
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tdiag::trace {

/// How write_tdtrace() lays out a whole trace (docs/trace-format.md, "Which layout").
enum class tdtrace_layout {
  automatic, ///< row_image from row_image_min_events events on, chunks below
  chunks,    ///< zstd-compressed columnar chunks (version 1.1): small, readable by every reader
  row_image, ///< finalized rows stored raw and mapped on reopen (version 2.0): near-instant
};

struct tdtrace_writer_options {
  /// In-memory record bytes gathered into one chunk before it is encoded and written.
  std::size_t chunk_bytes = std::size_t{1} << 20;
  /// zstd level (1 fast ... 19 small).
  int compression_level = 3;
  /// Batches waiting for the writer thread before append() blocks or drops.
  std::size_t queue_capacity = 256;
  /// When the queue is full: false = append() waits, true = the batch is dropped and counted.
  bool drop_when_full = false;
  /// A partial chunk is written after this long without a full one (0 = only when full).
  std::chrono::milliseconds flush_interval{1000};
  /// The file as error messages name it (default: the path written), e.g. the target of
  /// `-o` while the bytes go to its temporary file.
  std::string display_name;
  /// write_tdtrace() only (the streaming writer always writes chunks).
  tdtrace_layout layout = tdtrace_layout::automatic;
  /// automatic: the event count from which a row image is written.
  std::size_t row_image_min_events = std::size_t{1} << 18;
};

struct tdtrace_writer_stats {
  std::uint64_t events_appended = 0; ///< events in batches accepted by append()
  std::uint64_t events_written = 0;  ///< events in chunks on disk
  std::uint64_t events_dropped = 0;  ///< events in batches dropped (queue full, writer failed)
  std::uint64_t chunks_written = 0;
  std::uint64_t payload_bytes = 0; ///< encoded chunk bytes before compression
  std::uint64_t file_bytes = 0;    ///< bytes written to the file, headers included
};

class tdtrace_writer {
public:
  /// Creates (truncates) `path`, writes the file header and starts the writer thread.
  /// Throws tdiag::error TDIAG-TR-320 when the file cannot be created.
  explicit tdtrace_writer(const std::filesystem::path& path, trace_metadata metadata = {},
                          tdtrace_writer_options options = {});
  /// Closes the file if close() was not called; an error then is printed to stderr (a
  /// destructor cannot throw): call close() to handle it.
  ~tdtrace_writer();
  tdtrace_writer(const tdtrace_writer&) = delete;
  tdtrace_writer& operator=(const tdtrace_writer&) = delete;

  /// Queues `batch` for writing. Thread-safe. The batch need not be finalized; its metadata's
  /// dropped_records are added to the file's and its properties appended. Returns false when the
  /// batch was dropped (queue full with drop_when_full, writer failed or closed).
  bool append(trace batch);
  /// Records that a producer lost `n` records (written in the file's metadata). Thread-safe.
  void add_dropped_records(std::uint64_t n);
  /// Writes everything queued so far as chunks and waits until it is on disk. Thread-safe.
  void flush();
  /// Writes what is queued, the final chunk and the footer, and closes the file. Idempotent.
  /// Throws tdiag::error TDIAG-TR-321 when a write failed (also for earlier failures).
  void close();

  /// A consistent copy of the counters. Thread-safe.
  [[nodiscard]] tdtrace_writer_stats stats() const;

private:
  struct chunk_builder;
  void run() noexcept;
  void write_pending_chunk();
  void add_batch(trace& batch);
  void write_bytes(const void* data, std::size_t size);
  void finish_file();

  tdtrace_writer_options options_;
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;

  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable space_ready_;
  std::condition_variable flushed_;
  std::deque<trace> queue_;
  bool closing_ = false;
  bool closed_ = false;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flush_done_ = 0;
  std::exception_ptr failure_;
  bool failure_thrown_ = false; // close() throws a failure once; the destructor then stays quiet
  trace_metadata metadata_;     // guarded by mutex_
  tdtrace_writer_stats stats_;  // guarded by mutex_

  // Writer-thread state.
  std::unique_ptr<chunk_builder> builder_;
  std::thread thread_;
};

/// Writes a whole trace to `path` in options.layout: chunks through one writer and one batch, or
/// a row image. Throws like tdtrace_writer.
void write_tdtrace(const std::filesystem::path& path, const trace& t,
                   tdtrace_writer_options options = {});

} // namespace tdiag::trace
