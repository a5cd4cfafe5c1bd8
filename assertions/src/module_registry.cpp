// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The GPU modules that include assert.h: their buffer pointers, registered at static
// initialization, and their fallback storage, which holds the failures of launches made before
// the host bound a buffer into the module (docs/assertions.md, "Finding the buffer").
#include <fmt/format.h>

#include "runtime_state.hpp"

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

void watch_module_fallback(backend& be, int device, std::size_t module, void* fallback,
                           bool bound) {
  if (fallback == nullptr)
    return;
  runtime_state& st = state();
  std::lock_guard lock(st.fallback_mutex);
  device_state* found = nullptr;
  const device_state* same_device = nullptr;
  for (const auto& f : st.fallbacks) {
    if (f->device == device && f->owner.get() == &be) {
      same_device = f.get();
      if (f->buffer.device == fallback)
        found = f.get();
    }
  }
  if (found == nullptr) {
    auto ds = std::make_unique<device_state>();
    ds->owner = find_backend(be.name());
    ds->device = device;
    ds->properties = same_device != nullptr ? same_device->properties : be.properties(device);
    // Device memory, read by copy: the module's own variable, not host-mapped.
    ds->buffer = mapped_buffer{nullptr, fallback, sizeof(module_fallback), false};
    ds->record_capacity = module_fallback_records;
    ds->site_capacity = module_fallback_sites;
    const auto slots = registered_buffer_slots();
    ds->module_file = module < slots.size() ? slots[module].file : nullptr;
    found = ds.get();
    st.fallbacks.push_back(std::move(ds));
  }
  // Bound: the module's later launches record into the buffer; what is in the fallback was
  // recorded before, so the next checks read it (twice: a launch in flight during the bind).
  // Unbound: the fallback is where the module's failures go, so every check reads it.
  const int reads = bound ? 2 : -1;
  if (found->fallback_reads == 0)
    st.watched_fallbacks.fetch_add(1, std::memory_order_relaxed);
  found->fallback_reads = reads;
}

void collect_fallbacks(runtime_state& st, bool acknowledge, std::vector<device_failures>& all) {
  if (st.watched_fallbacks.load(std::memory_order_relaxed) == 0)
    return;
  std::vector<device_state*> watched;
  {
    std::lock_guard lock(st.fallback_mutex);
    for (const auto& f : st.fallbacks)
      if (f->fallback_reads != 0)
        watched.push_back(f.get());
  }
  for (device_state* ds : watched) {
    device_failures f;
    try {
      std::lock_guard lock(ds->mutex);
      f = read_failures(*ds, acknowledge);
    } catch (const error& e) {
      // A dead context (a trapped launch) cannot be read; the failure that trapped is in the
      // host-mapped buffer and already collected, so the report says what was not read.
      if (all.empty())
        throw;
      all.front().notes.push_back(fmt::format(
          "the fallback storage of {} on device {} could not be read: {}",
          ds->module_file != nullptr ? ds->module_file : "a GPU module", ds->device, e.what()));
      std::lock_guard lock(st.fallback_mutex);
      ds->fallback_reads = 0;
      st.watched_fallbacks.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    const bool found = f.total != 0 || !f.records.empty();
    if (acknowledge && !found) {
      std::lock_guard lock(st.fallback_mutex);
      if (ds->fallback_reads > 0 && --ds->fallback_reads == 0)
        st.watched_fallbacks.fetch_sub(1, std::memory_order_relaxed);
    }
    if (found) {
      f.notes.push_back(fmt::format("recorded in the module storage of {} (the launch came "
                                    "before tensordiag bound a failure buffer into that module)",
                                    ds->module_file != nullptr ? ds->module_file : "a GPU module"));
      all.push_back(std::move(f));
    }
  }
}

} // namespace tdiag::assertions::detail

/// Called by the host pass of every GPU translation unit that includes assert.h, at static
/// initialization: remembers the host shadows of that module's device_buffer and
/// fallback_storage variables.
extern "C" int tdiag_detail_register_module(const void* buffer_shadow, const void* fallback_shadow,
                                            const char* file) {
  auto& r = tdiag::assertions::detail::buffer_slot_registry();
  std::lock_guard lock(r.mutex);
  r.slots.push_back({buffer_shadow, fallback_shadow, file});
  r.count.store(r.slots.size(), std::memory_order_release);
  return static_cast<int>(r.slots.size());
}
