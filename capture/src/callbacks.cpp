// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUPTI callback-API subscriber. On the launching thread it does the least it can: take the
// raw return addresses (no symbolization, no allocation) and the pending tensordiag launch id,
// and queue them under the CUPTI correlation id that the activity records carry. It also
// flushes CUPTI's buffers before a context goes away, so nothing is lost at teardown.
#include <tensordiag/core/detail/cupti_launches.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <cupti.h>

#include <generated_nvtx_meta.h>
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

using tdiag::detail::cupti_driver_launches;
using tdiag::detail::cupti_runtime_launches;

constexpr CUpti_CallbackId runtime_allocations[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
};

template <std::size_t N>
bool contains(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId cbid) noexcept {
  for (auto id : ids)
    if (id == cbid)
      return true;
  return false;
}

bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) noexcept {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? contains(cupti_runtime_launches, cbid)
                                               : contains(cupti_driver_launches, cbid);
}

void on_api(session& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
            const CUpti_CallbackData& cb) {
  if (cb.callbackSite == CUPTI_API_EXIT) {
    if (api_depth > 0)
      --api_depth;
    // A launches:A:B range counts top-level launches (a graph launch is one) as they return:
    // it opens after launch A-1 and closes after launch B-1, between launches, never inside one.
    if (api_depth == 0 && s.counts_launches() && is_launch(domain, cbid))
      s.range_event([](range_gate& g) { return g.launch(); });
    return;
  }
  const bool nested = api_depth++ > 0;
  if (!s.capturing()) {
    outer_call = {};
    // A tdiag::launch outside a range: its id must not pass to the next launch inside one.
    if (!nested && is_launch(domain, cbid))
      pending_launch_id = 0;
    return;
  }
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

bool is_profiler(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool& start) noexcept {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    start = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
    return start || cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
  }
  start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
  return start || cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
}

// An ASCII message of an NVTX event (registered and wide strings are not matched).
std::string_view nvtx_message(const nvtxEventAttributes_t* a) noexcept {
  return a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr
             ? std::string_view(a->message.ascii)
             : std::string_view();
}

// One push/pop stack per thread and NVTX domain.
std::uint64_t nvtx_stack(const void* domain) noexcept {
  thread_local const std::uint64_t thread = system_thread_id();
  return thread ^ (reinterpret_cast<std::uintptr_t>(domain) * 0x9E3779B97F4A7C15ull);
}

void on_nvtx(session& s, CUpti_CallbackId cbid, const CUpti_NvtxData& d) {
  const void* p = d.functionParams;
  const char* ascii = nullptr;
  switch (cbid) {
  case CUPTI_CBID_NVTX_nvtxRangePushA:
    ascii = static_cast<const nvtxRangePushA_params*>(p)->message;
    return s.range_event(
        [&](range_gate& g) { return g.nvtx_push(nvtx_stack(nullptr), ascii ? ascii : ""); });
  case CUPTI_CBID_NVTX_nvtxRangePushW:
    return s.range_event([](range_gate& g) { return g.nvtx_push(nvtx_stack(nullptr), {}); });
  case CUPTI_CBID_NVTX_nvtxRangePushEx: {
    const auto name = nvtx_message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib);
    return s.range_event([&](range_gate& g) { return g.nvtx_push(nvtx_stack(nullptr), name); });
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
    const auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
    const auto name = nvtx_message(q->core.eventAttrib);
    return s.range_event([&](range_gate& g) { return g.nvtx_push(nvtx_stack(q->domain), name); });
  }
  case CUPTI_CBID_NVTX_nvtxRangePop:
    return s.range_event([](range_gate& g) { return g.nvtx_pop(nvtx_stack(nullptr)); });
  case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
    const void* domain = static_cast<const nvtxDomainRangePop_params*>(p)->domain;
    return s.range_event([&](range_gate& g) { return g.nvtx_pop(nvtx_stack(domain)); });
  }
  default:
    break;
  }
  // Start/end: the range id is the start call's return value.
  std::string_view name;
  if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA)
    ascii = static_cast<const nvtxRangeStartA_params*>(p)->message, name = ascii ? ascii : "";
  else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx)
    name = nvtx_message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib);
  else if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangeStartEx)
    name = nvtx_message(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib);
  else if (cbid == CUPTI_CBID_NVTX_nvtxRangeEnd || cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd) {
    const nvtxRangeId_t id = cbid == CUPTI_CBID_NVTX_nvtxRangeEnd
                                 ? static_cast<const nvtxRangeEnd_params*>(p)->id
                                 : static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id;
    return s.range_event([&](range_gate& g) { return g.nvtx_end(id); });
  } else
    return;
  if (d.functionReturnValue == nullptr || name.empty())
    return;
  const auto id = *static_cast<const nvtxRangeId_t*>(d.functionReturnValue);
  s.range_event([&](range_gate& g) { return g.nvtx_start(id, name); });
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
  if (domain == CUPTI_CB_DOMAIN_NVTX)
    return on_nvtx(*s, cbid, *static_cast<const CUpti_NvtxData*>(data));
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  // cudaProfilerStart also calls cuProfilerStart: the gate sees one edge. Start opens on exit
  // (after the call), stop closes on entry (before it).
  if (bool start = false; is_profiler(domain, cbid, start)) {
    if (start && cb.callbackSite == CUPTI_API_EXIT)
      s->range_event([](range_gate& g) { return g.profiler_start(); });
    else if (!start && cb.callbackSite == CUPTI_API_ENTER)
      s->range_event([](range_gate& g) { return g.profiler_stop(); });
    return;
  }
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

void enable_launch_callbacks(CUpti_SubscriberHandle subscriber, bool on) {
  // Unknown ids (an older CUPTI) fail individually; the others still work.
  const std::uint32_t enable = on ? 1 : 0;
  for (auto id : cupti_runtime_launches)
    cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (auto id : runtime_allocations)
    cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (auto id : cupti_driver_launches)
    cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
}

void enable_range_callbacks(CUpti_SubscriberHandle subscriber, bool profiler_api, bool nvtx) {
  if (profiler_api) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
  if (nvtx)
    check_cupti(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX), "cuptiEnableDomain(NVTX)");
}

} // namespace tdiag::capture::detail
