// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The runtime: per-device failure buffers, the launch path, checking, delivery, the watchdog and
// the check at exit.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/cuda_backend.hpp>
#include <tensordiag/assertions/failure_buffer.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture_hooks.hpp"
#include "host_ticks.hpp"
#include "runtime_state.hpp"

namespace tdiag::assertions::detail {
namespace {

void at_exit() noexcept;

std::uint64_t small_thread_number() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

void start_watchdog_locked(runtime_state& st, std::chrono::milliseconds period);
void stop_watchdog_locked(runtime_state& st);

// Wall-clock time of a launch at the kernel tick's resolution (1-4 ms): the precise clock costs
// 20-120 ns a call (more in VMs), which alone would exceed the launch overhead budget.
} // namespace

runtime_state& state() {
  static runtime_state* st = [] {
    auto* s = new runtime_state; // never destroyed: kernels and the exit check may outlive statics
    s->config = runtime_config::from_environment();
    s->registry = std::make_unique<launch_registry>(s->config.launches);
    (void)cpu_backend::shared(); // registers the CPU back-end
#if defined(TDIAG_ASSERTIONS_WITH_CUDA)
    (void)cuda_backend(); // registers the CUDA back-end (chosen when it has a device)
#endif
    std::atexit(at_exit);
    if (s->config.watchdog_ms != 0) {
      std::lock_guard lock(s->watchdog_mutex);
      start_watchdog_locked(*s, std::chrono::milliseconds(s->config.watchdog_ms));
    }
    return s;
  }();
  return *st;
}

namespace {

// Registers the built-in back-ends before main(), so that tdiag::select_backend() finds them even
// in a program that asks before its first launch.
[[maybe_unused]] const bool initialized_at_startup = (static_cast<void>(state()), true);

backend& active_backend(runtime_state& st) {
  const std::uint64_t generation = backend_registry_generation();
  backend* fast = st.backend_fast.load(std::memory_order_acquire);
  if (fast != nullptr && st.backend_generation.load(std::memory_order_acquire) == generation)
    return *fast;
  std::lock_guard lock(st.mutex);
  st.backend_cache = select_backend();
  st.backend_fast.store(st.backend_cache.get(), std::memory_order_release);
  st.backend_generation.store(generation, std::memory_order_release);
  return *st.backend_cache;
}

// The device's state if it has one already: what every launch needs, kept small to inline.
device_state* find_device(runtime_state& st, const backend& be, int device,
                          std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    device_state* ds = st.devices[i].load(std::memory_order_acquire);
    if (ds->owner.get() == &be && ds->device == device)
      return ds;
  }
  return nullptr;
}

device_state& create_device(runtime_state& st, backend& be, int device, std::size_t n,
                            const std::shared_ptr<backend>& owner);

device_state& device_for(runtime_state& st, backend& be, int device) {
  const std::size_t n = st.device_count.load(std::memory_order_acquire);
  if (device_state* ds = find_device(st, be, device, n))
    return *ds;
  return create_device(st, be, device, n, nullptr);
}

[[gnu::noinline]] device_state& create_device(runtime_state& st, backend& be, int device,
                                              std::size_t n,
                                              const std::shared_ptr<backend>& owner) {
  refresh_capture_hooks(); // after the back-end's start, which may have loaded an injected capture
  std::lock_guard lock(st.mutex);
  const std::size_t now = st.device_count.load(std::memory_order_acquire);
  for (std::size_t i = n; i < now; ++i) {
    device_state* ds = st.devices[i].load(std::memory_order_acquire);
    if (ds->owner.get() == &be && ds->device == device)
      return *ds;
  }
  if (now == max_device_states) {
    diagnostic d;
    d.code = codes::too_many_devices;
    d.title = "too many devices";
    d.message = fmt::format("tensordiag tracks at most {} devices per process", max_device_states);
    throw error(std::move(d));
  }
  auto ds = std::make_unique<device_state>();
  ds->owner = owner                                               ? owner
              : st.backend_cache && st.backend_cache.get() == &be ? st.backend_cache
                                                                  : find_backend(be.name());
  ds->device = device;
  ds->properties = be.properties(device);
  ds->record_capacity = std::max<std::uint32_t>(1, st.config.records);
  ds->site_capacity = std::bit_ceil(std::max<std::uint32_t>(2, st.config.sites));
  const auto bytes = buffer_bytes(ds->record_capacity, ds->site_capacity);
  ds->buffer = be.allocate_failure_buffer(device, bytes);
  // Start from what the back-end put there: a GPU back-end keeps its launch-slot table address
  // in reserved[0].
  buffer_header header{};
  be.read_device_memory(device, ds->buffer.device, &header, sizeof(header));
  header.magic = buffer_magic;
  header.version = layout_version;
  header.header_bytes = sizeof(buffer_header);
  header.record_capacity = ds->record_capacity;
  header.site_capacity = ds->site_capacity;
  header.policy = static_cast<std::uint32_t>(st.config.failure_policy);
  header.device = device;
  header.sites_offset = sizeof(buffer_header);
  header.records_offset =
      sizeof(buffer_header) + std::uint64_t{ds->site_capacity} * sizeof(site_counter);
  be.write_device_memory(device, ds->buffer.device, &header, sizeof(header));
  // Runtime off: unbind, so that a buffer bound under an earlier configuration cannot swallow
  // failures silently; an unbound failing thread traps (loud).
  be.bind_failure_buffer(device, st.config.enabled ? ds->buffer : mapped_buffer{});
  device_state* raw = ds.get();
  st.owned.push_back(std::move(ds));
  st.devices[now].store(raw, std::memory_order_release);
  st.device_count.store(now + 1, std::memory_order_release);
  return *raw;
}

[[noreturn, gnu::cold, gnu::noinline]] void
throw_bad_configuration(const launch_request& r, const tdiag::detail::launch_site_info& site,
                        const device_properties& p, std::string problem) {
  diagnostic d;
  d.code = codes::bad_launch;
  d.title = "invalid launch configuration";
  d.message =
      fmt::format("invalid launch of {}: {} (grid ({},{},{}) block ({},{},{}), {} bytes "
                  "of dynamic shared memory, on {} device {})",
                  site.kernel_name ? site.kernel_name : "kernel", problem, r.grid.x, r.grid.y,
                  r.grid.z, r.block.x, r.block.y, r.block.z, r.shared_memory, p.name, r.device);
  if (site.file)
    d.location = source_location{site.file, site.line, 0, site.function ? site.function : ""};
  d.add_field("grid", field_value::list{r.grid.x, r.grid.y, r.grid.z});
  d.add_field("block", field_value::list{r.block.x, r.block.y, r.block.z});
  d.add_field("shared_memory", r.shared_memory);
  d.add_field("device", r.device);
  d.add_field("max_threads_per_block", p.max_threads_per_block);
  d.add_field("max_block_dim",
              field_value::list{p.max_block_dim.x, p.max_block_dim.y, p.max_block_dim.z});
  d.add_field("max_grid_dim",
              field_value::list{p.max_grid_dim.x, p.max_grid_dim.y, p.max_grid_dim.z});
  d.add_field("max_shared_memory_per_block", p.max_shared_memory_per_block);
  d.hint = "the kernel was not launched; fix the configuration against the device limits above";
  throw error(std::move(d));
}

void validate(const launch_request& r, const tdiag::detail::launch_site_info& site,
              const device_properties& p) {
  const char* axes = "xyz";
  const std::uint32_t grid[3] = {r.grid.x, r.grid.y, r.grid.z};
  const std::uint32_t block[3] = {r.block.x, r.block.y, r.block.z};
  const std::uint32_t max_grid[3] = {p.max_grid_dim.x, p.max_grid_dim.y, p.max_grid_dim.z};
  const std::uint32_t max_block[3] = {p.max_block_dim.x, p.max_block_dim.y, p.max_block_dim.z};
  for (int a = 0; a < 3; ++a) {
    if (grid[a] == 0 || block[a] == 0)
      throw_bad_configuration(r, site, p,
                              fmt::format("{}.{} is 0", grid[a] == 0 ? "grid" : "block", axes[a]));
    if (grid[a] > max_grid[a])
      throw_bad_configuration(
          r, site, p,
          fmt::format("grid.{} = {} exceeds the limit {}", axes[a], grid[a], max_grid[a]));
    if (block[a] > max_block[a])
      throw_bad_configuration(
          r, site, p,
          fmt::format("block.{} = {} exceeds the limit {}", axes[a], block[a], max_block[a]));
  }
  if (r.block.volume() > p.max_threads_per_block)
    throw_bad_configuration(r, site, p,
                            fmt::format("{} threads per block exceed the limit {}",
                                        r.block.volume(), p.max_threads_per_block));
  if (r.shared_memory > p.max_shared_memory_per_block)
    throw_bad_configuration(r, site, p,
                            fmt::format("{} bytes of dynamic shared memory exceed the "
                                        "limit {}",
                                        r.shared_memory, p.max_shared_memory_per_block));
}

std::vector<device_failures> collect(runtime_state& st, bool acknowledge, bool only_new) {
  std::vector<device_failures> all;
  const std::size_t n = st.device_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    device_state& ds = *st.devices[i].load(std::memory_order_acquire);
    if (only_new && ds.buffer.host_coherent &&
        load_acquire(&static_cast<buffer_header*>(ds.buffer.host)->claimed) ==
            ds.seen_claimed.load(std::memory_order_relaxed))
      continue;
    std::lock_guard lock(ds.mutex);
    auto f = read_failures(ds, acknowledge);
    if (f.total != 0 || !f.records.empty())
      all.push_back(std::move(f));
  }
  return all;
}

// Each failing site, as its report names it, into a running capture's trace.
void send_to_capture(const report& r) {
  const auto hook = current_capture_hooks().assertion.load(std::memory_order_acquire);
  if (hook == nullptr)
    return;
  for (const auto& d : r.diagnostics) {
    std::int64_t launch_id = 0, device = 0;
    std::uint64_t stream = 0;
    std::uint32_t block[3] = {}, thread[3] = {};
    std::string condition;
    for (const auto& f : d.fields) {
      const auto* number = std::get_if<std::int64_t>(&f.value.value);
      const auto* text = std::get_if<std::string>(&f.value.value);
      const auto* list = std::get_if<field_value::list>(&f.value.value);
      if (f.name == "launch_id" && number)
        launch_id = *number;
      else if (f.name == "device" && number)
        device = *number;
      else if (f.name == "stream" && text)
        stream = std::strtoull(text->c_str(), nullptr, 16);
      else if (f.name == "condition" && text)
        condition = *text;
      else if ((f.name == "block" || f.name == "thread") && list && list->size() == 3)
        for (int i = 0; i < 3; ++i)
          if (const auto* v = std::get_if<std::int64_t>(&(*list)[i].value))
            (f.name == "block" ? block : thread)[i] = static_cast<std::uint32_t>(*v);
    }
    const std::string site = d.location.file.empty() ? condition
                                                     : fmt::format("{}:{}: {}", d.location.file,
                                                                   d.location.line, condition);
    hook(static_cast<std::uint64_t>(launch_id), static_cast<std::int32_t>(device), stream,
         site.c_str(), d.message.c_str(), block, thread);
  }
}

std::optional<report> take(runtime_state& st, std::string_view reason) {
  auto failures = collect(st, true, true);
  if (failures.empty())
    return std::nullopt;
  runtime_config config;
  {
    std::lock_guard lock(st.mutex);
    config = st.config;
  }
  report r = build_report(failures, config, reason);
  send_to_capture(r);
  return r;
}

void at_exit() noexcept {
  runtime_state& st = state();
  {
    std::lock_guard lock(st.watchdog_mutex);
    stop_watchdog_locked(st);
  }
  try {
    if (auto r = take(st, "at exit: these failures were never checked"))
      deliver(std::move(*r), false);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tensordiag: could not report device assertion failures at exit: {}\n",
               e.what());
  }
}

void watchdog_loop(runtime_state* st, std::chrono::milliseconds period) {
  std::unique_lock lock(st->watchdog_mutex);
  while (!st->watchdog_stop) {
    st->watchdog_wake.wait_for(lock, period, [&] { return st->watchdog_stop; });
    if (st->watchdog_stop)
      break;
    bool has_handler = false;
    {
      std::lock_guard h(st->handler_mutex);
      has_handler = static_cast<bool>(st->handler);
    }
    lock.unlock();
    try {
      if (has_handler) {
        if (auto r = take(*st, "reported by the watchdog while kernels may still run"))
          deliver(std::move(*r), false);
      } else {
        // Print once and leave the failures pending, so the program's own check still sees them.
        const std::size_t n = st->device_count.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < n; ++i) {
          device_state& ds = *st->devices[i].load(std::memory_order_acquire);
          std::lock_guard dl(ds.mutex);
          auto f = read_failures(ds, false);
          const std::uint64_t claimed = ds.seen_claimed.load(std::memory_order_relaxed) + f.total;
          if (f.total == 0 || claimed == ds.watchdog_printed)
            continue;
          ds.watchdog_printed = claimed;
          runtime_config config;
          {
            std::lock_guard cl(st->mutex);
            config = st->config;
          }
          auto r =
              build_report({f}, config, "reported by the watchdog while kernels may still run");
          if (config.print)
            fmt::print(stderr, "{}", render(r, config.stderr_format));
        }
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "tensordiag watchdog: {}\n", e.what());
    }
    lock.lock();
  }
}

void start_watchdog_locked(runtime_state& st, std::chrono::milliseconds period) {
  stop_watchdog_locked(st);
  st.watchdog_stop = false;
  st.watchdog = std::thread(watchdog_loop, &st, period);
}

void stop_watchdog_locked(runtime_state& st) {
  if (!st.watchdog.joinable())
    return;
  st.watchdog_stop = true;
  st.watchdog_wake.notify_all();
  std::thread t = std::move(st.watchdog);
  st.watchdog_mutex.unlock();
  t.join();
  st.watchdog_mutex.lock();
}

} // namespace

void deliver(report r, bool may_throw) {
  runtime_state& st = state();
  runtime_config config;
  {
    std::lock_guard lock(st.mutex);
    config = st.config;
  }
  if (!config.report_path.empty())
    write_text_file(config.report_path, to_json(r));
  failure_handler handler;
  {
    std::lock_guard lock(st.handler_mutex);
    handler = st.handler;
  }
  // A handler owns the report; otherwise it goes to stderr as well as into the exception, since
  // an exception may be caught and dropped by code that does not know what it carries.
  if (config.print && !handler)
    fmt::print(stderr, "{}", render(r, config.stderr_format));
  if (handler) {
    handler(r);
    return;
  }
  if (may_throw)
    throw device_assertion_error(std::move(r));
}

} // namespace tdiag::assertions::detail

namespace tdiag::detail {
namespace {

// Out of line and cold: building a diagnostic here would give every launch its stack frame.
[[gnu::cold, gnu::noinline]] void report_trapped_launch(assertions::detail::runtime_state& st,
                                                        bool enabled) {
  using namespace tdiag::assertions::detail;
  if (!enabled) {
    diagnostic d;
    d.code = assertions::codes::failed_runtime_disabled;
    d.title = "device assertion failed (runtime disabled)";
    d.message = "a device assertion failed and trapped the launch; TDIAG_ASSERTIONS=0 turned "
                "the tensordiag runtime off, so no details were recorded";
    d.hint = "run again with TDIAG_ASSERTIONS=1 (the default) to get the failing site, values, "
             "block, thread and launch";
    d.add_field("runtime_enabled", false);
    throw device_assertion_error(std::move(d));
  }
  auto r = take(st, "the launch was aborted by the trap policy");
  if (r)
    deliver(std::move(*r), true);
}

} // namespace

void launch_kernel(launch_request& request, const launch_site_info& site) {
  using namespace tdiag::assertions;
  using namespace tdiag::assertions::detail;
  runtime_state& st = state();
  backend& be = active_backend(st);
  request.device = be.current_device();
  device_state& ds = device_for(st, be, request.device);
  validate(request, site, ds.properties);
  const bool enabled = st.config.enabled;
  if (enabled) {
    // Reused per thread: a fresh launch_info would zero 256 bytes of stack frames every launch.
    thread_local launch_info info;
    info.kernel = request.kernel;
    info.kernel_name = site.kernel_name;
    info.file = site.file;
    info.function = site.function;
    info.line = site.line;
    info.device = request.device;
    info.grid = request.grid;
    info.block = request.block;
    info.shared_memory = request.shared_memory;
    info.stream = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(request.stream));
    info.host_ticks = host_ticks();
    info.host_thread = small_thread_number();
    info.backend = &be;
    if (st.config.capture_stacks)
      info.stack = capture_raw_stack(1);
    else
      info.stack.size = 0;
    request.launch_id = st.registry->record(info);
    if (const auto hook = current_capture_hooks().launch.load(std::memory_order_acquire))
      hook(request.launch_id, site.kernel_name != nullptr ? site.kernel_name : "");
  }
  if (be.launch(request) == launch_status::trapped)
    report_trapped_launch(st, enabled);
}

} // namespace tdiag::detail

namespace tdiag {

void check() {
  using namespace tdiag::assertions::detail;
  runtime_state& st = state();
  if (auto r = take(st, ""))
    deliver(std::move(*r), true);
}

void synchronize_and_check(stream_handle stream) {
  using namespace tdiag::assertions::detail;
  runtime_state& st = state();
  backend& be = active_backend(st);
  try {
    be.synchronize(be.current_device(), stream);
  } catch (const error&) {
    // A trapped launch surfaces as a sticky runtime error; its record is still in the mapped
    // buffer, so report the assertion itself (the runtime error becomes secondary).
    check();
    throw;
  }
  check();
}

std::optional<report> take_failures() {
  using namespace tdiag::assertions::detail;
  return take(state(), "");
}

} // namespace tdiag

namespace tdiag::assertions {

void configure(const runtime_config& config) {
  using namespace detail;
  runtime_state& st = state();
  if (auto r = take(st, "before reconfiguration: these failures were never checked"))
    deliver(std::move(*r), false);
  {
    std::lock_guard lock(st.watchdog_mutex);
    stop_watchdog_locked(st);
  }
  refresh_capture_hooks();
  std::vector<std::pair<std::shared_ptr<backend>, int>> in_use;
  {
    std::lock_guard lock(st.mutex);
    // Old device states stay alive (a racing reader may hold one) but leave the table.
    const std::size_t n = st.device_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
      const device_state* ds = st.devices[i].load(std::memory_order_acquire);
      in_use.emplace_back(ds->owner, ds->device);
      st.devices[i].store(nullptr, std::memory_order_relaxed);
    }
    st.device_count.store(0, std::memory_order_release);
    st.config = config;
    st.retired_registries.push_back(std::move(st.registry));
    st.registry = std::make_unique<launch_registry>(config.launches);
  }
  // Bind fresh buffers at once, so that even plain <<<>>> launches record into the new ones.
  for (const auto& [owner, device] : in_use)
    if (owner)
      (void)create_device(st, *owner, device, st.device_count.load(std::memory_order_acquire),
                          owner);
  if (config.watchdog_ms != 0) {
    std::lock_guard lock(st.watchdog_mutex);
    start_watchdog_locked(st, std::chrono::milliseconds(config.watchdog_ms));
  }
}

runtime_config configuration() {
  auto& st = detail::state();
  std::lock_guard lock(st.mutex);
  return st.config;
}

failure_totals pending() {
  using namespace detail;
  auto all = collect(state(), false, false);
  failure_totals t;
  for (const auto& f : all) {
    t.total += f.total;
    t.records += f.records.size();
    t.dropped += f.dropped;
    t.in_flight += f.in_flight;
  }
  return t;
}

std::vector<failure_event> take_failure_events() {
  using namespace detail;
  runtime_state& st = state();
  std::vector<failure_event> events;
  for (const auto& f : collect(st, true, true)) {
    for (const auto& t : f.records) {
      failure_event e;
      e.backend = std::string(f.state->owner->name());
      e.device = f.state->device;
      e.claim = t.claim;
      e.record = t.record;
      if (t.record.flags == 0 || t.record.flags == 2)
        e.launch = st.registry->find(t.record.launch_id);
      events.push_back(std::move(e));
    }
  }
  return events;
}

void set_failure_handler(failure_handler handler) {
  auto& st = detail::state();
  std::lock_guard lock(st.handler_mutex);
  st.handler = std::move(handler);
}

launch_registry& launches() {
  return *detail::state().registry;
}

void start_watchdog(std::chrono::milliseconds period) {
  auto& st = detail::state();
  std::lock_guard lock(st.watchdog_mutex);
  detail::start_watchdog_locked(st, period);
}

void stop_watchdog() {
  auto& st = detail::state();
  std::lock_guard lock(st.watchdog_mutex);
  detail::stop_watchdog_locked(st);
}

} // namespace tdiag::assertions

namespace tdiag::assertions::detail {

std::vector<buffer_slot> registered_buffer_slots() {
  auto& r = buffer_slot_registry();
  std::lock_guard lock(r.mutex);
  return r.slots;
}

std::size_t registered_buffer_slot_count() noexcept {
  return buffer_slot_registry().count.load(std::memory_order_acquire);
}

slot_registry& buffer_slot_registry() {
  static auto* r = new slot_registry; // filled during static initialization of GPU modules
  return *r;
}

} // namespace tdiag::assertions::detail

/// Called by the host pass of every GPU translation unit that includes assert.h, at static
/// initialization: remembers the host shadow of that module's device_buffer variable.
extern "C" int tdiag_detail_register_buffer_slot(const void* host_shadow, const char* file) {
  auto& r = tdiag::assertions::detail::buffer_slot_registry();
  std::lock_guard lock(r.mutex);
  r.slots.push_back({host_shadow, file});
  r.count.store(r.slots.size(), std::memory_order_release);
  return static_cast<int>(r.slots.size());
}
