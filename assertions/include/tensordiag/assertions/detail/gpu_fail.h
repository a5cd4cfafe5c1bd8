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
/// the dynamic shared memory size (padded until it is slot mod 256); the slot table after the
/// buffer's reserved words maps slot -> launch id (bit 63 set for a launch captured into a graph).
/// Slot 0 means "not launched through tensordiag": the record then carries the hardware grid id and
/// flags = 1, and the host says so.
TDIAG_DEVICE inline void current_launch(buffer_header* h, failure_origin& o) {
#if TDIAG_HAS_CUDA
  // The table's second half holds the size each slot was launched with: a plain launch whose
  // odd size only decodes as a slot is not taken for the slot's tensordiag launch.
  unsigned dyn = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  const unsigned slot = dyn & 0xffu;
  const auto* slots = reinterpret_cast<const std::uint64_t*>(h->reserved[0]);
  constexpr unsigned slot_count = 256; // launch_slot_pool::slots
  if (slot != 0 && slots != nullptr && load_acquire(&slots[slot_count + slot]) == dyn) {
    // Bit 63: the slot belongs to a launch captured into a CUDA graph (flags 2 = graph replay).
    const std::uint64_t entry = load_acquire(&slots[slot]);
    o.launch_id = entry & ~(1ull << 63);
    o.flags = (entry >> 63) != 0 ? 2 : 0;
  } else {
    unsigned long long grid = 0;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    o.launch_id = grid;
    o.flags = 1;
  }
#else
  // No register holds the dynamic LDS size on AMD. The dispatch packet's group_segment_size
  // (hsa_kernel_dispatch_packet_t, byte offset 28 by the HSA spec) is static + dynamic LDS, and
  // the HIP back-end pads the dynamic part so that the sum is slot mod 256. Not minus
  // __builtin_amdgcn_groupstaticsize(): in this non-inlined callee it is 0, not the kernel's.
  // The C cast converts from the constant address space (no C++ cast does).
  // The table's second half holds each slot's expected LDS total: a plain launch whose LDS only
  // happens to leave a remainder is not taken for the slot's tensordiag launch.
  const auto* packet = (const std::uint32_t*)__builtin_amdgcn_dispatch_ptr();
  const unsigned slot = packet[7] & 0xffu;
  const auto* slots = reinterpret_cast<const std::uint64_t*>(h->reserved[0]);
  constexpr unsigned slot_count = 256; // launch_slot_pool::slots
  if (slot != 0 && slots != nullptr && load_acquire(&slots[slot_count + slot]) == packet[7]) {
    const std::uint64_t entry = load_acquire(&slots[slot]);
    o.launch_id = entry & ~(1ull << 63);
    o.flags = (entry >> 63) != 0 ? 2 : 0;
  } else {
    o.launch_id = 0; // no readable grid id on AMD
    o.flags = 1;
  }
#endif
}

TDIAG_DEVICE inline void write_hardware_ids(failure_record& r) {
#if TDIAG_HAS_CUDA
  unsigned sm = 0, lane = 0;
  unsigned long long now = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  r.sm = sm;
  r.lane = lane;
  r.timestamp_ns = now;
#else
  r.sm = static_cast<std::uint32_t>(__smid());
  r.lane = static_cast<std::uint32_t>(__lane_id());
  r.timestamp_ns = static_cast<std::uint64_t>(wall_clock64());
#endif
}

/// Copies at most `quota` bytes of `text` and a NUL to `out`; `length` becomes the copied length.
/// Returns where the next string goes.
TDIAG_DEVICE inline char* copy_text(char* out, const char* text, std::uint32_t& length,
                                    std::uint32_t quota) {
  const std::uint32_t n = length < quota ? length : quota;
  for (std::uint32_t i = 0; i < n; ++i)
    out[i] = text[i];
  out[n] = 0;
  length = n;
  return out + n + 1;
}

/// Copies the site's descriptor and strings into the host-mapped trap text area (if the back-end
/// made one), so that the report can name the site after the trap has killed the context. Only a
/// trapping thread calls it. Its registers count against the kernel's (4 of the 6 that
/// TDIAG_CHECK_INDEX adds in tests/assertions/register_check.cmake).
TDIAG_DETAIL_NOINLINE TDIAG_DEVICE inline void save_site_text(buffer_header* h,
                                                              const site_descriptor* site) {
  auto* area = reinterpret_cast<trap_text_area*>(h->reserved[1]);
  if (area == nullptr)
    return;
  const std::uint64_t n = atomic_add(&area->claimed, 1);
  if (n >= trap_text_entries)
    return;
  site_text_copy& e = area->entries[n];
  e.descriptor = *site;
  // Room for each string with its NUL (2,048 bytes in all).
  char* out = e.text;
  out = copy_text(out, site->file, e.descriptor.file_length, 480);
  out = copy_text(out, site->expression, e.descriptor.expression_length, 800);
  out = copy_text(out, site->message, e.descriptor.message_length, 320);
  (void)copy_text(out, site->function, e.descriptor.function_length, 444);
  static_assert(480 + 800 + 320 + 444 + 4 == trap_text_bytes);
  publish_store(&e.site, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(site)));
}

/// The GPU twin of publish_failure() (same protocol: claim, count the site, write unless full,
/// publish after a system-scope fence), writing each field straight into the record after the
/// claim instead of gathering a failure_origin first: fewer values live at once keeps this
/// callee's register count, which the kernel inherits, low (tests/assertions/register_check.cmake).
[[noreturn]] TDIAG_DETAIL_NOINLINE TDIAG_DEVICE inline void
gpu_fail(buffer_header* h, const site_descriptor* site, const std::uint64_t* values,
         const value_type* types, std::uint32_t count) {
  if (h == nullptr)
    h = &fallback_storage.header; // no buffer bound into this module yet (assert.h)
  const std::uint64_t claim = atomic_add(&h->claimed, 1);
  const auto site_address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(site));
  count_site(h, site_address, site->site_id);
  const std::uint64_t acknowledged = load_acquire(&h->acknowledged);
  // A stale `acknowledged` only makes this conservative: the failure is counted as dropped.
  if (claim - acknowledged >= h->record_capacity) {
    atomic_add(&h->dropped, 1);
  } else {
    failure_record& r = records(h)[claim % h->record_capacity];
    r.site = site_address;
    r.site_id = site->site_id;
    r.version = layout_version;
    r.operand_count = static_cast<std::uint8_t>(count);
    failure_origin o{};
    current_launch(h, o);
    r.launch_id = o.launch_id;
    r.flags = o.flags;
    r.block[0] = blockIdx.x;
    r.block[1] = blockIdx.y;
    r.block[2] = blockIdx.z;
    r.thread[0] = threadIdx.x;
    r.thread[1] = threadIdx.y;
    r.thread[2] = threadIdx.z;
    write_hardware_ids(r);
    for (std::uint32_t i = 0; i < max_operands; ++i) {
      r.types[i] = i < count ? types[i] : value_type::none;
      r.values[i] = i < count ? values[i] : 0;
    }
    publish_store(&r.sequence, claim + 1);
  }
  if (static_cast<policy>(*static_cast<volatile std::uint32_t*>(&h->policy)) == policy::trap) {
    save_site_text(h, site);
    trap();
  }
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
