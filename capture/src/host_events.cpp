// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Host events: the assertion runtime's launches and failures, and allocations of allocators
// CUPTI cannot see. Each call copies a few words (and, with stacks on, the raw return
// addresses) into the session's host queue; the converter thread does the rest.
#include <tensordiag/capture/capture.hpp>
#include <tensordiag/capture/hooks.h>

#include <unistd.h>

#include "session.hpp"

namespace tdiag::capture {
namespace {

void record_memory(trace::memory_action action, const void* address, std::uint64_t size,
                   std::uint64_t stream, std::int32_t device, std::uint64_t pool,
                   const char* tag) noexcept {
  auto* s = detail::session::current();
  if (s == nullptr)
    return;
  try {
    detail::host_memory item;
    item.event.time = now_ns();
    item.event.action = action;
    item.event.device = device;
    item.event.address = reinterpret_cast<std::uintptr_t>(address);
    item.event.size = size;
    item.event.stream = stream;
    item.event.pool = pool;
    if (s->opts().stacks) {
      item.stack = capture_raw_stack();
      s->stacks_captured.fetch_add(1, std::memory_order_relaxed);
    }
    if (tag != nullptr)
      item.tag = tag;
    s->push_memory(std::move(item));
  } catch (...) {
    // Out of memory while queueing: the event is lost, the application is not.
  }
}

} // namespace

void record_launch(std::uint64_t launch_id, const char* kernel_name) noexcept {
  auto* s = detail::session::current();
  if (s == nullptr || launch_id == 0)
    return;
  try {
    s->enable_launch_callbacks();
    detail::set_pending_launch_id(launch_id);
    s->push_marker({now_ns(), static_cast<std::int64_t>(getpid()), detail::system_thread_id(),
                    kernel_name ? kernel_name : ""});
  } catch (...) {
  }
}

void record_assertion(std::uint64_t launch_id, std::int32_t device, std::uint64_t stream,
                      const char* site, const char* message, const std::uint32_t block[3],
                      const std::uint32_t thread[3]) noexcept {
  auto* s = detail::session::current();
  if (s == nullptr)
    return;
  try {
    detail::host_assertion item;
    item.event.time = now_ns();
    item.event.launch_id = launch_id;
    item.event.device = device;
    // add_assertion() turns this stream into the lane id.
    item.event.lane = static_cast<trace::lane_id>(stream);
    for (int i = 0; i < 3; ++i) {
      item.event.block[i] = block ? block[i] : 0;
      item.event.thread[i] = thread ? thread[i] : 0;
    }
    item.site = site ? site : "";
    item.message = message ? message : "";
    s->push_assertion(std::move(item));
  } catch (...) {
  }
}

void record_allocation(const void* address, std::uint64_t size, std::uint64_t stream,
                       std::int32_t device, std::uint64_t pool, const char* tag) noexcept {
  record_memory(trace::memory_action::alloc, address, size, stream, device, pool, tag);
}

void record_free(const void* address, std::uint64_t size, std::uint64_t stream, std::int32_t device,
                 std::uint64_t pool, const char* tag) noexcept {
  record_memory(trace::memory_action::free_requested, address, size, stream, device, pool, tag);
}

} // namespace tdiag::capture

extern "C" void tdiag_capture_record_launch(uint64_t launch_id, const char* kernel_name) {
  tdiag::capture::record_launch(launch_id, kernel_name);
}

extern "C" void tdiag_capture_record_assertion(uint64_t launch_id, int32_t device, uint64_t stream,
                                               const char* site, const char* message,
                                               const uint32_t block[3], const uint32_t thread[3]) {
  tdiag::capture::record_assertion(launch_id, device, stream, site, message, block, thread);
}
