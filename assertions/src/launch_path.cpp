// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The launch path: validating a launch against the device's limits, registering it and handing
// it to the back-end.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <fmt/format.h>

#include <exception>

#include "capture_hooks.hpp"
#include "host_ticks.hpp"
#include "runtime_state.hpp"

namespace tdiag::assertions::detail {

std::uint64_t small_thread_number() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

namespace {

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

} // namespace
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
  auto r = take(st, "the launch was aborted by the trap policy", false);
  if (r)
    deliver(std::move(*r), true);
}

// The runtime refused a launch. After an earlier trap (TDIAG_ASSERT_POLICY=trap) every later call
// fails with the dead context's sticky error: the assertion that killed it is the error the
// caller gets, as tdiag::device_assertion_error, with its report printed and recorded first.
[[noreturn, gnu::cold, gnu::noinline]] void
rethrow_launch_error(assertions::detail::runtime_state& st) {
  using namespace tdiag::assertions::detail;
  const std::exception_ptr launch_error = std::current_exception();
  std::optional<report> r;
  try {
    r = take(st, "the launch failed: an earlier launch trapped and left the context unusable",
             false);
  } catch (const error&) {
    // Nothing readable: the launch's own error (which names the sticky CUDA error) goes up.
    std::rethrow_exception(launch_error);
  }
  if (r)
    deliver(std::move(*r), true);
  std::rethrow_exception(launch_error);
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
  launch_status status = launch_status::ok;
  try {
    status = be.launch(request);
  } catch (const error&) {
    rethrow_launch_error(st);
  }
  if (status == launch_status::trapped)
    report_trapped_launch(st, enabled);
}

} // namespace tdiag::detail
