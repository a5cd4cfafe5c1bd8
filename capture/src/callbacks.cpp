// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUPTI callback-API subscriber. On the launching thread it does the least it can: take the
// raw return addresses (no symbolization, no allocation) and the pending tensordiag launch id,
// and queue them under the CUPTI correlation id that the activity records carry. It also
// flushes CUPTI's buffers before a context goes away, so nothing is lost at teardown.
#include <tensordiag/core/stacktrace.hpp>

#include <cupti.h>

#include <iterator>

#include "session.hpp"

namespace tdiag::capture::detail {
namespace {

// The launch id given by record_launch() for this thread's next kernel launch.
thread_local std::uint64_t pending_launch_id = 0;
// Depth of enabled API calls on this thread: cudaLaunchKernel calls cuLaunchKernel, and both
// may carry correlation ids; the inner call reuses what the outer one captured.
thread_local int api_depth = 0;
thread_local correlation_info outer_call;

constexpr CUpti_CallbackId runtime_launches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};
constexpr CUpti_CallbackId runtime_allocations[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
};
constexpr CUpti_CallbackId driver_launches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

template <std::size_t N>
bool contains(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId cbid) noexcept {
  for (auto id : ids)
    if (id == cbid)
      return true;
  return false;
}

bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) noexcept {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? contains(runtime_launches, cbid)
                                               : contains(driver_launches, cbid);
}

void on_api(session& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
            const CUpti_CallbackData& cb) {
  if (cb.callbackSite == CUPTI_API_EXIT) {
    if (api_depth > 0)
      --api_depth;
    return;
  }
  const bool nested = api_depth++ > 0;
  correlation_info info;
  info.correlation = cb.correlationId;
  if (nested) {
    info.launch_id = outer_call.launch_id;
    info.stack = outer_call.stack;
  } else {
    if (is_launch(domain, cbid)) {
      info.launch_id = pending_launch_id;
      pending_launch_id = 0;
    }
    if (s.opts().stacks) {
      info.stack = capture_raw_stack();
      s.stacks_captured.fetch_add(1, std::memory_order_relaxed);
    }
    outer_call = info;
  }
  if (info.launch_id != 0 || info.stack.size != 0)
    s.push_correlation(info);
}

} // namespace

void set_pending_launch_id(std::uint64_t launch_id) noexcept {
  pending_launch_id = launch_id;
}

void CUPTIAPI on_callback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  session* s = session::current();
  if (s == nullptr || data == nullptr)
    return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    // The context's buffers must reach us before it is gone (a linked start() registers its
    // atexit before the CUDA runtime's, so the runtime's teardown runs first).
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
    if (cb.callbackSite == CUPTI_API_ENTER)
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return;
  }
  on_api(*s, domain, cbid, cb);
}

void enable_teardown_callbacks(CUpti_SubscriberHandle subscriber) {
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
}

void enable_launch_callbacks(CUpti_SubscriberHandle subscriber) {
  // Unknown ids (an older CUPTI) fail individually; the others still work.
  for (auto id : runtime_launches)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (auto id : runtime_allocations)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (auto id : driver_launches)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
}

} // namespace tdiag::capture::detail
