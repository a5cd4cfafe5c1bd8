// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The capture session: CUPTI activity setup, buffer hand-over, the converter thread and the
// public start()/stop()/flush() API. CUPTI's buffer callbacks only move pointers under a mutex;
// everything else happens on the converter thread and the writer's thread.
#include "session.hpp"

#include <tensordiag/capture/codes.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/version.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <unistd.h>

namespace tdiag::capture::detail {
namespace {

std::atomic<session*> current_session{nullptr};
std::atomic<session*> latest_session{nullptr};
std::mutex lifecycle_mutex; // serializes start() and stop()

// Completed buffers beyond this many wait for the converter: CUPTI then gets no buffer and
// counts the records it cannot store as dropped (reported), instead of memory growing unbounded.
constexpr std::size_t max_outstanding_buffers = 128;
// Zeroed, already-faulted buffers kept ready: CUPTI would otherwise zero each new buffer itself
// in the thread that asked for it (the application's, in the launch path), and a fresh buffer's
// page faults would land there too.
constexpr std::size_t prepared_buffers = 4;
constexpr std::size_t max_free_buffers = 8;

std::uint8_t* zeroed_buffer(std::size_t bytes) noexcept {
  return static_cast<std::uint8_t*>(std::calloc(1, bytes));
}

// calloc's pages are zero but not yet mapped; writing a byte of each maps them here, on the
// converter's or the starting thread, instead of under CUPTI in the launch path.
void prefault(std::uint8_t* buffer, std::size_t bytes) noexcept {
  volatile std::uint8_t* p = buffer;
  for (std::size_t i = 0; i < bytes; i += 4096)
    p[i] = 0;
}

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  if (auto* s = session::current())
    s->buffer_requested(buffer, size, max_records);
  else
    *buffer = nullptr, *size = 0, *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                                  std::size_t /*size*/, std::size_t valid) {
  if (auto* s = session::current())
    s->buffer_completed(context, stream_id, buffer, valid);
  else
    std::free(buffer);
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : text)
    if (c == '\0')
      c = ' ';
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

std::string api_function_name(bool driver, std::uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                           &name) != CUPTI_SUCCESS ||
      name == nullptr)
    return {};
  std::string text(name);
  // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the version suffix is CUPTI's, not the API's.
  if (auto v = text.rfind("_v"); v != std::string::npos && v + 2 < text.size() &&
                                 text.find_first_not_of("0123456789", v + 2) == std::string::npos)
    text.erase(v);
  return text;
}

} // namespace

void check_cupti(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS)
    return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  diagnostic d;
  d.code = codes::cupti_failed;
  d.title = "CUPTI call failed";
  d.message = fmt::format("{} returned {} ({})", call, static_cast<int>(result),
                          text ? text : "unknown CUPTI error");
  d.add_field("call", std::string(call));
  d.hint = "Another CUPTI client (Nsight Systems, Kineto, a profiler) may own the activity API, "
           "or the driver is older than CUPTI; run without it or update the driver.";
  throw tdiag::error(std::move(d));
}

std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t system_thread_id() noexcept {
  return static_cast<std::uint64_t>(gettid());
}

session::session(const options& opts) : options_(opts) {
  // A launch's stack is kept on its API record, the kernel joined to it by correlation id.
  if (options_.stacks)
    options_.runtime_api = options_.driver_api = true;
}

session* session::current() noexcept {
  return current_session.load(std::memory_order_acquire);
}

session* session::latest() noexcept {
  return latest_session.load(std::memory_order_acquire);
}

void session::begin() {
  std::uint64_t cupti_now = 0;
  check_cupti(cuptiGetTimestamp(&cupti_now), "cuptiGetTimestamp");
  time_base_ns_ = cupti_now;

  trace::trace_metadata meta;
  meta.format = "cupti";
  meta.time_origin_ns = static_cast<std::int64_t>(realtime_ns());
  std::uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  meta.properties = {
      {"capture.tool", fmt::format("tensordiag {}", TDIAG_VERSION_STRING)},
      {"capture.cupti_api_version", std::to_string(cupti_version)},
      {"capture.pid", std::to_string(getpid())},
      {"capture.command", command_line()},
      {"capture.stacks", options_.stacks ? "1" : "0"},
      {"capture.memory", options_.memory ? "1" : "0"},
      {"capture.runtime_api", options_.runtime_api ? "1" : "0"},
      {"capture.driver_api", options_.driver_api ? "1" : "0"},
  };
  if (!options_.ranges.empty())
    meta.properties.emplace_back("capture.ranges", options_.ranges);
  meta.properties.insert(meta.properties.end(), options_.properties.begin(),
                         options_.properties.end());
  trace::tdtrace_writer_options wopts;
  wopts.compression_level = options_.compression_level;
  writer_ = std::make_unique<trace::tdtrace_writer>(options_.output, std::move(meta), wopts);

  // Published before any activity is enabled: buffer callbacks may come at once.
  for (std::size_t i = 0; i < prepared_buffers; ++i)
    if (auto* b = zeroed_buffer(options_.buffer_bytes)) {
      prefault(b, options_.buffer_bytes);
      free_buffers_.push_back(b);
    }
  current_session.store(this, std::memory_order_release);
  latest_session.store(this, std::memory_order_release);
  converter_thread_ = std::thread([this] { run_converter(); });
  try {
    check_cupti(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    // Every buffer we hand out is zeroed (calloc, or cleared by the converter before reuse).
    // Advisory: a CUPTI without the attribute zeroes them again, which is only slower.
    std::uint8_t zeroed = 1;
    std::size_t zeroed_size = sizeof(zeroed);
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size,
                              &zeroed);
    check_cupti(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed),
                "cuptiActivityRegisterCallbacks");
    if (options_.device_buffer_bytes != 0) {
      // Advisory: an older CUPTI or a context created earlier may keep its own size.
      std::size_t bytes = options_.device_buffer_bytes, size = sizeof(bytes);
      cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes);
    }
    // Ranges need the subscriber to see where they start.
    if (options_.callbacks || options_.stacks || !options_.ranges.empty())
      subscribe();
    else
      callbacks_status_ = "off (options)";
    begin_ranges(); // enables the activity kinds now unless every range starts later
  } catch (...) {
    end();
    throw;
  }
  if (options_.flush_period_ms != 0)
    cuptiActivityFlushPeriod(options_.flush_period_ms);
}

void session::subscribe() {
  // One subscriber per process (before CUDA 13.2): without it there are no stacks, launch ids
  // or teardown flushes, but activity records still work.
  const CUptiResult r = cuptiSubscribe(&subscriber_, on_callback, this);
  if (r != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    callbacks_status_ = fmt::format("unavailable: {}", text ? text : "cuptiSubscribe failed");
    fmt::print(stderr, "tdiag capture: no CUPTI callbacks ({}); no launch stacks\n",
               callbacks_status_);
    return;
  }
  callbacks_status_ = "on";
  enable_teardown_callbacks(subscriber_);
}

void session::enable_launch_callbacks() noexcept {
  if (subscriber_ == nullptr || launch_ids_wanted_.exchange(true))
    return;
  std::lock_guard lock(range_mutex_);
  update_callbacks();
}

void session::set_activities(bool on) {
  if (!on) {
    for (auto kind :
         {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL,
          CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
      cuptiActivityDisable(kind);
    return;
  }
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
              "cuptiActivityEnable(CONCURRENT_KERNEL)");
  std::string missing;
  if (options_.memory) {
    check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(MEMCPY)");
    check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(MEMSET)");
    // Allocation tracking may be missing on some platforms: record what is off, keep going.
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) != CUPTI_SUCCESS)
      missing += "MEMORY2 ";
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL) != CUPTI_SUCCESS)
      missing += "MEMORY_POOL ";
  }
  if (options_.runtime_api)
    check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(RUNTIME)");
  if (options_.driver_api)
    check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "cuptiActivityEnable(DRIVER)");
  if (!missing.empty() && !missing_reported_)
    fmt::print(stderr, "tdiag capture: activity kinds unavailable: {}\n", missing);
  missing_reported_ = true;
}

void session::buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0; // as many as fit
  std::uint8_t* b = nullptr;
  {
    std::lock_guard lock(buffer_mutex_);
    if (buffers_outstanding_ >= max_outstanding_buffers) {
      *buffer = nullptr; // CUPTI drops and counts what it cannot store
      *size = 0;
      return;
    }
    ++buffers_outstanding_;
    if (!free_buffers_.empty()) {
      b = free_buffers_.back();
      free_buffers_.pop_back();
    }
  }
  if (b == nullptr)
    b = zeroed_buffer(options_.buffer_bytes);
  if (b == nullptr) {
    std::lock_guard lock(buffer_mutex_);
    --buffers_outstanding_;
  }
  *buffer = b;
  *size = b ? options_.buffer_bytes : 0;
}

void session::buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                               std::size_t valid) {
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (buffer == nullptr)
    return;
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(buffer_mutex_);
    completed_.push_back({buffer, valid});
  }
  work_ready_.notify_one();
}

void session::recycle(std::uint8_t* buffer) {
  bool keep = false;
  {
    std::lock_guard lock(buffer_mutex_);
    --buffers_outstanding_;
    keep = free_buffers_.size() < max_free_buffers;
  }
  if (!keep) {
    std::free(buffer);
    return;
  }
  // On the converter thread, outside the lock: CUPTI was told every buffer arrives zeroed.
  std::memset(buffer, 0, options_.buffer_bytes);
  std::lock_guard lock(buffer_mutex_);
  free_buffers_.push_back(buffer);
}

void session::push_correlation(const correlation_info& info) {
  std::lock_guard lock(host_mutex_);
  correlations_.push_back(info);
}
void session::push_memory(host_memory item) {
  std::lock_guard lock(host_mutex_);
  memory_.push_back(std::move(item));
}
void session::push_assertion(host_assertion item) {
  std::lock_guard lock(host_mutex_);
  assertions_.push_back(std::move(item));
}
void session::push_marker(host_marker item) {
  std::lock_guard lock(host_mutex_);
  markers_.push_back(std::move(item));
}

stats session::snapshot() const {
  stats s;
  s.buffers_completed = buffers_completed_.load();
  s.records = records_.load();
  s.kernels = kernels_.load();
  s.copies = copies_.load();
  s.api_calls = api_calls_.load();
  s.memory_events = memory_events_.load();
  s.dropped_records = dropped_.load();
  s.stacks_captured = stacks_captured.load();
  if (writer_) {
    const auto w = writer_->stats();
    s.events_written = w.events_written;
    s.file_bytes = w.file_bytes;
  }
  return s;
}

void session::flush() {
  cuptiActivityFlushAll(0);
  std::unique_lock lock(buffer_mutex_);
  const std::uint64_t generation = ++work_requested_;
  work_ready_.notify_one();
  work_done_.wait(lock, [&] { return work_done_generation_ >= generation || stopping_; });
  lock.unlock();
  writer_->flush();
}

void session::end() {
  // Forced: buffers of work still running are delivered too (their incomplete records drop).
  end_ranges();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  set_activities(false);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (subscriber_ != nullptr) {
    cuptiUnsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
  {
    std::lock_guard lock(buffer_mutex_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  if (converter_thread_.joinable())
    converter_thread_.join();
  current_session.store(nullptr, std::memory_order_release);
  {
    std::lock_guard lock(buffer_mutex_);
    for (auto* b : free_buffers_)
      std::free(b);
    free_buffers_.clear();
  }
  trace::trace last;
  last.metadata.properties = {
      {"capture.callbacks", callbacks_status_},
      {"capture.buffers_completed", std::to_string(buffers_completed_.load())},
      {"capture.records", std::to_string(records_.load())},
      {"capture.dropped_records", std::to_string(dropped_.load())},
      {"capture.stacks_captured", std::to_string(stacks_captured.load())},
  };
  if (gate_.has_ranges())
    last.metadata.properties.emplace_back("capture.ranges_opened",
                                          std::to_string(gate_.times_opened()));
  writer_->append(std::move(last));
  writer_->close();
}

void session::drain_host() {
  // Converter thread only: app threads keep appending into fresh vectors meanwhile.
  std::vector<correlation_info> correlations;
  std::vector<host_memory> memory;
  std::vector<host_assertion> assertions;
  std::vector<host_marker> markers;
  {
    std::lock_guard lock(host_mutex_);
    correlations.swap(correlations_);
    memory.swap(memory_);
    assertions.swap(assertions_);
    markers.swap(markers_);
  }
  for (const auto& c : correlations)
    converter_->add_correlation(c);
  for (auto& m : memory)
    converter_->add_memory(m.event, m.stack, m.tag);
  for (auto& a : assertions)
    converter_->add_assertion(a.event, a.site, a.message);
  for (auto& m : markers)
    converter_->add_launch_marker(m.time, m.process, m.thread, m.name);
}

void session::convert_buffer(const completed_buffer& b) {
  CUpti_Activity* record = nullptr;
  std::uint64_t n = 0;
  while (cuptiActivityGetNextRecord(b.data, b.valid, &record) == CUPTI_SUCCESS) {
    converter_->add(*record);
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER)
      max_api_correlation_ = std::max(
          max_api_correlation_, reinterpret_cast<const CUpti_ActivityAPI*>(record)->correlationId);
    ++n;
  }
  records_.fetch_add(n, std::memory_order_relaxed);
  recycle(b.data);
}

void session::run_converter() noexcept {
  converter_options copts;
  copts.time_base_ns = time_base_ns_;
  copts.api_name = api_function_name;
  converter_ = std::make_unique<cupti_converter>(std::move(copts));
  std::uint64_t dropped_reported = 0;
  for (;;) {
    std::vector<completed_buffer> work;
    std::uint64_t generation = 0;
    bool stop = false;
    {
      std::unique_lock lock(buffer_mutex_);
      work_ready_.wait_for(lock, std::chrono::milliseconds(250), [&] {
        return !completed_.empty() || work_requested_ > work_done_generation_ || stopping_;
      });
      work.swap(completed_);
      generation = work_requested_;
      stop = stopping_;
    }
    try {
      // Host facts first: the API records in these buffers look their correlation ids up.
      drain_host();
      for (const auto& b : work)
        convert_buffer(b);
      const auto& c = converter_->counts();
      kernels_.store(c.kernels, std::memory_order_relaxed);
      copies_.store(c.copies, std::memory_order_relaxed);
      api_calls_.store(c.api_calls, std::memory_order_relaxed);
      memory_events_.store(c.memory, std::memory_order_relaxed);
      if (converter_->pending_correlations() > (1u << 16) && max_api_correlation_ > (1u << 15))
        converter_->forget_before(max_api_correlation_ - (1u << 15));
      const std::uint64_t dropped = dropped_.load(std::memory_order_relaxed);
      if (dropped != dropped_reported) {
        writer_->add_dropped_records(dropped - dropped_reported);
        dropped_reported = dropped;
      }
      if (converter_->batch_events() > 0)
        writer_->append(converter_->take_batch());
    } catch (const std::exception& e) {
      // A conversion failure must not take the application down; it is reported once.
      fmt::print(stderr, "tdiag capture: converter error: {}\n", e.what());
    }
    {
      std::lock_guard lock(buffer_mutex_);
      work_done_generation_ = generation;
      if (stop && completed_.empty())
        stop_done_ = true;
    }
    work_done_.notify_all();
    if (stop_done_)
      break;
  }
}

} // namespace tdiag::capture::detail

namespace tdiag::capture {

bool start(const options& opts) {
  std::lock_guard lock(detail::lifecycle_mutex);
  if (detail::session::current() != nullptr)
    return false;
  // Never freed: a hook may still hold the pointer while stop() runs (see session::current).
  auto* s = new detail::session(opts);
  s->begin();
  static std::once_flag atexit_once;
  std::call_once(atexit_once, [] {
    std::atexit([] {
      try {
        stop();
      } catch (const std::exception& e) {
        fmt::print(stderr, "tdiag capture: at exit: {}\n", e.what());
      }
    });
  });
  return true;
}

void stop() {
  std::lock_guard lock(detail::lifecycle_mutex);
  if (auto* s = detail::session::current())
    s->end();
}

void flush() {
  if (auto* s = detail::session::current())
    s->flush();
}

bool active() noexcept {
  return detail::session::current() != nullptr;
}

stats current_stats() {
  auto* s = detail::session::latest();
  return s ? s->snapshot() : stats{};
}

std::int64_t now_ns() noexcept {
  auto* s = detail::session::current();
  std::uint64_t t = 0;
  if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
    t = detail::realtime_ns();
  return s ? static_cast<std::int64_t>(t - s->time_base()) : static_cast<std::int64_t>(t);
}

} // namespace tdiag::capture
