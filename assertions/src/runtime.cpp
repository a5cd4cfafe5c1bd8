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
#include "launch_binding.hpp"
#include "runtime_state.hpp"

namespace tdiag::assertions::detail {
namespace {

// Why plain launches cannot be bound, as a diagnostic.
diagnostic binding_diagnostic(const std::string& why) {
  diagnostic d;
  d.code = codes::binding_unavailable;
  d.title = "plain launches cannot be bound";
  d.message = fmt::format("TDIAG_BIND=cupti: {}", why);
  d.hint = "failures of plain launches are still reported, with kernel, site, values, block and "
           "thread; launch through TDIAG_LAUNCH for the grid, stream and launch site";
  return d;
}

} // namespace

runtime_state& state() {
  static runtime_state* st = [] {
    auto* s = new runtime_state; // never destroyed: kernels and the exit check may outlive statics
    s->config = runtime_config::from_environment();
    s->registry = std::make_unique<launch_registry>(s->config.launches);
    // At startup, before main(): a binding that cannot start is said once, not thrown.
    if (s->config.bind == launch_binding::cupti)
      if (const std::string why = set_cupti_binding(true); !why.empty()) {
        fmt::print(stderr, "tensordiag: {} [{}]\n", binding_diagnostic(why).message,
                   codes::binding_unavailable);
        s->config.bind = launch_binding::none;
      }
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

} // namespace

void pin_graph_launch(std::uint64_t launch_id, std::uint64_t capture_id, const void* graph) {
  runtime_state& st = state();
  const auto info = st.registry->find(launch_id);
  if (!info)
    return; // registered moments ago on this thread: only a configure() in between loses it
  std::lock_guard lock(st.graph_mutex);
  st.graph_launches[launch_id] = graph_launch{*info, capture_id, graph};
}

std::optional<graph_launch> find_graph_launch(std::uint64_t launch_id) {
  runtime_state& st = state();
  std::lock_guard lock(st.graph_mutex);
  const auto found = st.graph_launches.find(launch_id);
  if (found == st.graph_launches.end())
    return std::nullopt;
  return found->second;
}

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
  // A coherent buffer is written in place: no copy through the runtime, which a stream capture
  // in progress could forbid.
  buffer_header header{};
  if (ds->buffer.host_coherent)
    std::memcpy(&header, ds->buffer.host, sizeof(header));
  else
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
  if (ds->buffer.host_coherent)
    std::memcpy(ds->buffer.host, &header, sizeof(header));
  else
    be.write_device_memory(device, ds->buffer.device, &header, sizeof(header));
  // Runtime off: unbind, so that a buffer bound under an earlier configuration cannot swallow
  // failures silently; an unbound failing thread traps (loud).
  ds->bound_modules = registered_buffer_slot_count();
  be.bind_failure_buffer(device, st.config.enabled ? ds->buffer : mapped_buffer{});
  device_state* raw = ds.get();
  st.owned.push_back(std::move(ds));
  st.devices[now].store(raw, std::memory_order_release);
  st.device_count.store(now + 1, std::memory_order_release);
  return *raw;
}

} // namespace tdiag::assertions::detail

namespace tdiag::assertions {

void configure(const runtime_config& config) {
  using namespace detail;
  runtime_state& st = state();
  if (const std::string why = set_cupti_binding(config.bind == launch_binding::cupti); !why.empty())
    throw error(binding_diagnostic(why));
  if (auto r = take(st, "before reconfiguration: these failures were never checked", false))
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
    const std::uint64_t next_id = st.registry->next_id();
    st.retired_registries.push_back(std::move(st.registry));
    st.registry = std::make_unique<launch_registry>(config.launches, next_id);
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

launch_registry& launches() {
  return *detail::state().registry;
}

} // namespace tdiag::assertions
