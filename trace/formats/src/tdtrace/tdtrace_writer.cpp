// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>
#include <tensordiag/trace/trace_merge.hpp>

#include <fmt/format.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "tdtrace_format.hpp"
#include "tdtrace_image.hpp"

namespace tdiag::trace {
namespace detail {

void throw_write_error(const std::filesystem::path& path, std::string_view what, int err) {
  diagnostic d;
  d.code = codes::cannot_write;
  d.title = "cannot write trace file";
  d.message = fmt::format("cannot write trace file '{}': {}{}{}", path.string(), what,
                          err ? ": " : "", err ? std::strerror(err) : "");
  d.add_field("path", path.string());
  d.hint = "check free disk space and permissions";
  throw error(std::move(d));
}

void throw_create_error(const std::filesystem::path& path, int err) {
  diagnostic d;
  d.code = codes::cannot_create;
  d.title = "cannot create trace file";
  d.message = fmt::format("cannot create trace file '{}': {}", path.string(), std::strerror(err));
  d.add_field("path", path.string());
  d.hint = "check that the folder exists and is writable";
  throw error(std::move(d));
}

ZSTD_CCtx* make_chunk_compressor(int level) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  // A content checksum in every frame: salvage reads (checksums off) still reject damage.
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  return cctx;
}

std::string frame_chunk(ZSTD_CCtx* cctx, std::string_view payload, chunk_header& h,
                        const std::filesystem::path& path) {
  std::string compressed(ZSTD_compressBound(payload.size()), '\0');
  const std::size_t n =
      ZSTD_compress2(cctx, compressed.data(), compressed.size(), payload.data(), payload.size());
  if (ZSTD_isError(n))
    throw_write_error(path, fmt::format("zstd: {}", ZSTD_getErrorName(n)), 0);
  compressed.resize(n);
  if (payload.size() > max_chunk_payload || n > max_chunk_payload)
    throw_write_error(path, "a chunk exceeds 256 MiB (lower chunk_bytes)", 0);
  h.compressed_size = static_cast<std::uint32_t>(n);
  h.uncompressed_size = static_cast<std::uint32_t>(payload.size());
  h.payload_crc = crc32_of(std::as_bytes(std::span(compressed)));
  return encode_chunk_header(h) + compressed;
}

} // namespace detail

struct tdtrace_writer::chunk_builder {
  trace chunk;
  std::size_t record_bytes = 0;
  std::chrono::steady_clock::time_point first_event{};
  std::uint32_t sequence = 0;
  std::uint64_t file_offset = 0;
  std::vector<detail::footer_entry> index;
  ZSTD_CCtx* cctx = nullptr;

  explicit chunk_builder(int level) : cctx(detail::make_chunk_compressor(level)) {}
  ~chunk_builder() { ZSTD_freeCCtx(cctx); }
  chunk_builder(const chunk_builder&) = delete;
  chunk_builder& operator=(const chunk_builder&) = delete;
};

tdtrace_writer::tdtrace_writer(const std::filesystem::path& path, trace_metadata metadata,
                               tdtrace_writer_options options)
    : options_(std::move(options)), // declared first: the members below read options_
      path_(options_.display_name.empty() ? path : std::filesystem::path(options_.display_name)),
      metadata_(std::move(metadata)),
      builder_(std::make_unique<chunk_builder>(options_.compression_level)) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_)
    detail::throw_create_error(path_, errno);
  const std::string header =
      detail::encode_file_header(detail::version_major, detail::version_minor, 0,
                                 static_cast<std::uint32_t>(options_.chunk_bytes));
  try {
    write_bytes(header.data(), header.size());
  } catch (...) {
    std::fclose(file_);
    throw;
  }
  thread_ = std::thread([this] { run(); });
}

tdtrace_writer::~tdtrace_writer() {
  try {
    close();
  } catch (const std::exception& e) {
    // Destructors cannot throw; the error is still shown, never swallowed silently.
    fmt::print(stderr, "tensordiag: {}\n", e.what());
  }
}

bool tdtrace_writer::append(trace batch) {
  const std::uint64_t events = batch.event_count();
  std::unique_lock lock(mutex_);
  if (!closing_ && !failure_ && queue_.size() >= options_.queue_capacity) {
    if (options_.drop_when_full) {
      stats_.events_dropped += events;
      metadata_.dropped_records += events;
      return false;
    }
    space_ready_.wait(
        lock, [&] { return closing_ || failure_ || queue_.size() < options_.queue_capacity; });
  }
  if (closing_ || failure_) {
    stats_.events_dropped += events;
    return false;
  }
  stats_.events_appended += events;
  queue_.push_back(std::move(batch));
  lock.unlock();
  work_ready_.notify_one();
  return true;
}

void tdtrace_writer::add_dropped_records(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  metadata_.dropped_records += n;
}

void tdtrace_writer::flush() {
  std::unique_lock lock(mutex_);
  if (closing_ || failure_)
    return;
  const std::uint64_t ticket = ++flush_requested_;
  work_ready_.notify_one();
  flushed_.wait(lock, [&] { return flush_done_ >= ticket || failure_ || closed_; });
}

void tdtrace_writer::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      if (failure_ && !failure_thrown_) {
        failure_thrown_ = true;
        std::rethrow_exception(failure_);
      }
      return;
    }
    closing_ = true;
  }
  work_ready_.notify_one();
  space_ready_.notify_all();
  if (thread_.joinable())
    thread_.join();
  std::lock_guard lock(mutex_);
  closed_ = true;
  if (failure_) {
    failure_thrown_ = true;
    std::rethrow_exception(failure_);
  }
}

tdtrace_writer_stats tdtrace_writer::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void tdtrace_writer::run() noexcept {
  try {
    std::uint64_t flushes_served = 0;
    for (;;) {
      std::deque<trace> work;
      bool closing = false;
      std::uint64_t flush_ticket = 0;
      {
        std::unique_lock lock(mutex_);
        auto ready = [&] {
          return !queue_.empty() || closing_ || flush_requested_ > flushes_served;
        };
        if (options_.flush_interval.count() > 0)
          work_ready_.wait_for(lock, options_.flush_interval, ready);
        else
          work_ready_.wait(lock, ready);
        work.swap(queue_);
        closing = closing_;
        flush_ticket = flush_requested_;
      }
      space_ready_.notify_all();
      for (auto& batch : work)
        add_batch(batch);
      work.clear();

      const bool stale =
          options_.flush_interval.count() > 0 && builder_->chunk.event_count() > 0 &&
          std::chrono::steady_clock::now() - builder_->first_event >= options_.flush_interval;
      if (stale || (flush_ticket > flushes_served && builder_->chunk.event_count() > 0))
        write_pending_chunk();
      if (flush_ticket > flushes_served) {
        flushes_served = flush_ticket;
        {
          std::lock_guard lock(mutex_);
          flush_done_ = flush_ticket;
        }
        flushed_.notify_all();
      }
      if (closing) {
        finish_file();
        return;
      }
    }
  } catch (...) {
    if (file_) {
      std::fclose(file_);
      file_ = nullptr;
    }
    {
      std::lock_guard lock(mutex_);
      failure_ = std::current_exception();
      for (const auto& batch : queue_)
        stats_.events_dropped += batch.event_count();
      queue_.clear();
    }
    flushed_.notify_all();
    space_ready_.notify_all();
  }
}

void tdtrace_writer::add_batch(trace& batch) {
  auto& b = *builder_;
  {
    std::lock_guard lock(mutex_);
    metadata_.dropped_records += batch.metadata.dropped_records;
    metadata_.properties.insert(metadata_.properties.end(), batch.metadata.properties.begin(),
                                batch.metadata.properties.end());
  }
  id_remapper map(b.chunk, batch);
  auto pump = [&](const auto& from, auto select) {
    std::size_t index = 0;
    for (auto record : from.all()) {
      if (b.chunk.event_count() == 0 && b.record_bytes == 0)
        b.first_event = std::chrono::steady_clock::now();
      if constexpr (std::is_same_v<decltype(record), range_event>)
        if (const auto* w = batch.sync_wait_of(index))
          b.chunk.sync_waits.push_back({static_cast<std::uint32_t>(b.chunk.ranges.size()),
                                        w->record_correlation, w->stream});
      ++index;
      map.remap(record);
      select(b.chunk).push_back(record);
      b.record_bytes += sizeof(record);
      if (b.record_bytes + b.chunk.strings.text_bytes() >= options_.chunk_bytes) {
        write_pending_chunk();
        map.reset();
      }
    }
  };
  pump(
      batch.kernels, [](trace & t) -> auto& { return t.kernels; });
  pump(
      batch.copies, [](trace & t) -> auto& { return t.copies; });
  pump(
      batch.api_calls, [](trace & t) -> auto& { return t.api_calls; });
  pump(
      batch.ranges, [](trace & t) -> auto& { return t.ranges; });
  pump(
      batch.markers, [](trace & t) -> auto& { return t.markers; });
  pump(
      batch.memory, [](trace & t) -> auto& { return t.memory; });
  pump(
      batch.assertions, [](trace & t) -> auto& { return t.assertions; });
  pump(
      batch.flows, [](trace & t) -> auto& { return t.flows; });
  pump(
      batch.counters, [](trace & t) -> auto& { return t.counters; });
  for (collective_info c : batch.collectives) { // keyed by correlation id: any chunk holds it
    map.remap(c);
    b.chunk.collectives.push_back(c);
  }
  if (batch.final_allocator_state) {
    auto state = std::move(*batch.final_allocator_state);
    for (auto& seg : state.segments) {
      seg.stack = map.stack(seg.stack);
      for (auto& blk : seg.blocks)
        blk.stack = map.stack(blk.stack);
      b.record_bytes += sizeof(segment) + seg.blocks.size() * sizeof(block);
    }
    b.chunk.final_allocator_state = std::move(state);
  }
}

void tdtrace_writer::write_bytes(const void* data, std::size_t size) {
  if (std::fwrite(data, 1, size, file_) != size)
    detail::throw_write_error(path_, "write failed", errno);
  builder_->file_offset += size;
}

void tdtrace_writer::write_pending_chunk() {
  auto& b = *builder_;
  trace& c = b.chunk;
  {
    std::lock_guard lock(mutex_);
    c.metadata = metadata_;
  }
  c.finalize();
  const std::string payload = detail::encode_chunk(c);
  detail::chunk_header h;
  h.sequence = b.sequence++;
  h.event_count = static_cast<std::uint32_t>(c.event_count());
  const time_span span = c.span();
  h.t_min = span.begin;
  h.t_max = span.end;
  const std::uint64_t offset = b.file_offset;
  const std::string bytes = detail::frame_chunk(b.cctx, payload, h, path_);
  write_bytes(bytes.data(), bytes.size());
  // Each chunk reaches the OS at once: a crash of this process then loses nothing written.
  if (std::fflush(file_) != 0)
    detail::throw_write_error(path_, "flush failed", errno);
  b.index.push_back({offset, h.compressed_size, h.event_count, h.t_min, h.t_max});
  {
    std::lock_guard lock(mutex_);
    stats_.events_written += h.event_count;
    stats_.chunks_written += 1;
    stats_.payload_bytes += payload.size();
    stats_.file_bytes = b.file_offset;
  }
  c = trace{};
  b.record_bytes = 0;
}

void tdtrace_writer::finish_file() {
  auto& b = *builder_;
  // The last chunk also carries the final metadata (dropped counts); an empty trace still gets
  // one chunk so its metadata survives.
  write_pending_chunk();
  const std::uint64_t footer_offset = b.file_offset;
  const std::string footer = detail::encode_footer(b.index, footer_offset);
  write_bytes(footer.data(), footer.size());
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0)
    detail::throw_write_error(path_, "close failed", errno);
  std::lock_guard lock(mutex_);
  stats_.file_bytes = b.file_offset;
}

void write_tdtrace(const std::filesystem::path& path, const trace& t,
                   tdtrace_writer_options options) {
  if (options.layout == tdtrace_layout::row_image ||
      (options.layout == tdtrace_layout::automatic &&
       t.event_count() >= options.row_image_min_events))
    return detail::write_row_image(path, t, options);
  options.flush_interval = std::chrono::milliseconds(0);
  tdtrace_writer writer(path, t.metadata, options);
  trace batch = t;
  batch.metadata = {}; // already the writer's metadata
  writer.append(std::move(batch));
  writer.close();
}

} // namespace tdiag::trace
