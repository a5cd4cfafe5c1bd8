// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The device failure path for CUDA and HIP (device pass only; included by assert.h). Not API.
#pragma once

#include <tensordiag/assertions/failure_buffer.hpp>

namespace tdiag::assertions::detail {

TDIAG_DEVICE inline void trap() {
#if TDIAG_HAS_CUDA
  __trap();
#else
  __builtin_trap();
#endif
}

/// Launch id of the running grid. tdiag::launch encodes a launch-slot index in the low 8 bits of
/// the dynamic shared memory size (rounded to 256 + slot); the slot table after the buffer's
/// reserved words maps slot -> launch id. Slot 0 means "not launched through tensordiag": the
/// record then carries the hardware grid id and flags = 1, and the host says so.
TDIAG_DEVICE inline void current_launch(buffer_header* h, failure_origin& o) {
#if TDIAG_HAS_CUDA
  unsigned dyn = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  const unsigned slot = dyn & 0xffu;
  const auto* slots = reinterpret_cast<const std::uint64_t*>(h->reserved[0]);
  if (slot != 0 && slots != nullptr) {
    o.launch_id = load_acquire(&slots[slot]);
    o.flags = 0;
  } else {
    unsigned long long grid = 0;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    o.launch_id = grid;
    o.flags = 1;
  }
#else
  (void)h;
  o.launch_id = 0;
  o.flags = 1;
#endif
}

TDIAG_DEVICE inline void gpu_fail(buffer_header* h, const site_descriptor* site,
                                  const std::uint64_t* values, const value_type* types,
                                  std::uint32_t count) {
  if (h == nullptr) {
    // Never silent: no buffer bound (tensordiag runtime off, or a module it never saw).
    trap();
  }
  failure_origin o{};
  current_launch(h, o);
  o.block[0] = blockIdx.x;
  o.block[1] = blockIdx.y;
  o.block[2] = blockIdx.z;
  o.thread[0] = threadIdx.x;
  o.thread[1] = threadIdx.y;
  o.thread[2] = threadIdx.z;
#if TDIAG_HAS_CUDA
  unsigned sm = 0, lane = 0;
  unsigned long long now = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  o.sm = sm;
  o.lane = lane;
  o.timestamp_ns = now;
#else
  o.sm = static_cast<std::uint32_t>(__smid());
  o.lane = static_cast<std::uint32_t>(__lane_id());
  o.timestamp_ns = static_cast<std::uint64_t>(wall_clock64());
#endif
  publish_failure(h, site, o, values, types, count);
  if (static_cast<policy>(*static_cast<volatile std::uint32_t*>(&h->policy)) == policy::trap)
    trap();
#if TDIAG_HAS_CUDA
  // Stop this thread only: threads that already exited do not hold up bar.sync on sm_70+.
  asm volatile("exit;");
#else
  // HIP has no per-lane exit: s_endpgm ends this wavefront (documented in docs/assertions.md).
  __builtin_amdgcn_endpgm();
#endif
  __builtin_unreachable();
}

} // namespace tdiag::assertions::detail
