// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The GPU back-end, one source for CUDA and HIP: failure buffers in pinned host-mapped memory
// (or in device memory read by copy where the link has no host atomics), bound into every GPU
// module that includes assert.h, and launches with the launch id encoded as a launch slot in the
// dynamic shared memory size (docs/assertions.md). Compiled once per runtime: `Api`
// (cuda/cuda_backend.cpp, hip/hip_backend.cpp) is a traits struct of static functions and constants
// over that runtime; it also serves gpu/launch_slot_pool.hpp and gpu/relaxed_capture_mode.hpp,
// whose comments list their part. The back-end's part, each function returning Api::status_type:
//   names:      name ("cuda", also the prefix of the runtime's functions in error messages),
//               label ("CUDA"), error_field ("cuda_error"), code (codes.hpp),
//               error_name(e), error_string(e), kills_context(e) -> bool, clear_error(),
//               invalid_device, invalid_value
//   devices:    device_count(int*), get_device(int*), set_device(int), device_prop_type,
//               get_properties(device_prop_type*, int), arch(prop) -> std::string,
//               max_shared_memory(prop), host_mapped_atomics(int, prop) -> bool,
//               buffer_in_host_memory(int) -> bool
//   memory:     host_alloc_mapped(void**, n) (coherent, portable), host_alloc(void**, n) (pinned),
//               host_device_pointer(void**, void*), host_free(void*), device_alloc(void**, n)
//               (fine-grained where the runtime has it), device_free(void*),
//               memcpy_async(dst, src, n, stream) (any direction), memcpy_to_symbol_async(symbol,
//               src, n, stream), symbol_address(void**, symbol)
//   streams:    create_stream(stream_type*) (non-blocking), destroy_stream(s),
//               stream_synchronize(s), device_synchronize(), never_captured(s) -> bool (a handle
//               no capture can hold: the legacy stream), is_capturing(s, bool*),
//               capture_of(s, std::uint64_t* capture id, const void** graph)
//   launches:   describe_kernel(kernel, kernel_info*) (shared memory and launch handle, asked once
//               per kernel and device) and launch_kernel(kernel, handle, grid, block, args, shared,
//               stream), with grid and block as tdiag::extent3.
// Not API.
#pragma once

#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/backend.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../runtime_state.hpp"
#include "launch_slot_pool.hpp"
#include "relaxed_capture_mode.hpp"

namespace tdiag::assertions::detail {

/// What the back-end keeps of one kernel on one device. Its shared memory as the device's slot
/// decoding sees it (gpu_fail.h): CUDA reads the dynamic size alone (`static_bytes` 0), AMD the
/// dispatch packet's total; `dynamic_limit` is the most dynamic shared memory the kernel may be
/// launched with. `handle`: the runtime's own handle to launch it by (CUDA: the driver's function
/// in this device's context), or null to launch by its host address.
struct kernel_info {
  std::uint64_t static_bytes = 0;
  std::uint64_t dynamic_limit = 0;
  void* handle = nullptr;
};

/// The dynamic shared memory size that carries `slot` for a launch asking for `shared` bytes:
/// the smallest size not below `shared` whose total as the device sees it is slot (mod 256).
[[nodiscard]] constexpr std::uint64_t slot_shared_memory(std::uint32_t slot, std::uint64_t shared,
                                                         const kernel_info& kernel) noexcept {
  constexpr std::uint64_t granularity = 256;
  return shared + ((slot - kernel.static_bytes - shared) & (granularity - 1));
}

template <typename Api> class gpu_backend final : public backend {
  using status_type = typename Api::status_type;
  using stream_type = typename Api::stream_type;
  using pool_type = launch_slot_pool<Api>;
  using relaxed = relaxed_capture_mode<Api>;
  static constexpr std::uint32_t launch_slots = pool_type::slots;
  // Slots [pool_type::graph_first, launch_slots) belong to launches captured into graphs: a graph
  // replays its kernel node with the captured dynamic shared memory size, so the slot keeps its
  // launch id for the life of the process. Table values of graph slots carry graph_flag, which
  // the device turns into failure_origin::flags = 2 ("replayed from a graph").
  static constexpr std::uint64_t graph_flag = 1ull << 63;
  // Slot -> launch id, then slot -> the shared memory size the device will see: a plain launch
  // whose size only happens to decode as a slot must not pass for the slot's tensordiag launch
  // (gpu_fail.h compares the two). Then the trap text area (record.hpp), in the same host-mapped
  // allocation: readable after a trap.
  static constexpr std::size_t table_bytes = 2 * launch_slots * sizeof(std::uint64_t);
  static constexpr std::size_t mapped_extra = table_bytes + sizeof(trap_text_area);

public:
  gpu_backend() {
    int count = 0;
    if (Api::device_count(&count) != Api::success) {
      Api::clear_error(); // no driver or no device: a back-end with 0 devices, no error
      count = 0;
    }
    count_ = count;
    devices_.resize(static_cast<std::size_t>(count));
    for (auto& d : devices_)
      d = std::make_unique<device_slots>();
  }

private:
  // `what` is the runtime function without its prefix ("LaunchKernel": cudaLaunchKernel).
  [[noreturn, gnu::cold]] static void fail(status_type e, const char* what, int device) {
    const std::string function = fmt::format("{}{}", Api::name, what);
    diagnostic d;
    d.code = Api::code;
    d.title = fmt::format("{} call failed", Api::label);
    d.message = fmt::format("{} failed on device {}: {} ({})", function, device, Api::error_name(e),
                            Api::error_string(e));
    d.add_field(std::string(Api::error_field), static_cast<int>(e));
    d.add_field("call", function);
    if (Api::kills_context(e))
      d.hint = fmt::format("the {} context is now unusable: a kernel trapped "
                           "(TDIAG_ASSERT_POLICY=trap or a foreign assert); restart the process",
                           Api::label);
    throw error(std::move(d));
  }
  static void call(status_type e, const char* what, int device) {
    if (e != Api::success) [[unlikely]]
      fail(e, what, device);
  }

  // Makes `device` current for a scope and restores the caller's device, also when a call in
  // between throws (the launching thread must not find its device changed by a failed report).
  class device_scope {
  public:
    explicit device_scope(int device) {
      call(Api::get_device(&previous_), "GetDevice", device);
      if (previous_ == device)
        return;
      call(Api::set_device(device), "SetDevice", device);
      switched_ = true;
    }
    device_scope(const device_scope&) = delete;
    device_scope& operator=(const device_scope&) = delete;
    ~device_scope() {
      if (switched_)
        (void)Api::set_device(previous_);
    }

  private:
    int previous_ = 0;
    bool switched_ = false;
  };

  // A buffer in device memory (no host atomics) has its slot table and host shadow apart.
  struct device_allocation {
    void* device = nullptr;
    void* table_host = nullptr;
    void* shadow = nullptr;
  };

  // Launch slots of one device: slot -> launch id in host-mapped memory, read by failing threads.
  struct device_slots {
    std::mutex mutex;
    std::uint64_t* table_host = nullptr;
    std::uint64_t* table_device = nullptr;
    pool_type pool;
    stream_type copy_stream = nullptr; // reads and writes: never waits for running kernels
    std::unordered_map<const void*, kernel_info> kernels; // per kernel, asked once
    const void* last_kernel = nullptr;                    // the last launch's entry of `kernels`
    kernel_info last_info;
    void* bound = nullptr;                   // failure buffer's device address
    std::size_t bound_modules = 0;           // modules that have it
    std::vector<device_allocation> separate; // non-coherent buffers, until freed
  };

  std::string_view do_name() const noexcept override { return Api::name; }
  int do_device_count() const override { return count_; }
  int do_current_device() const override {
    if (count_ == 1)
      return 0; // the only choice; spares a runtime call on every launch
    int d = 0;
    call(Api::get_device(&d), "GetDevice", -1);
    return d;
  }

  device_slots& slots_of(int device) const {
    if (device < 0 || device >= count_)
      fail(Api::invalid_device, "SetDevice", device);
    return *devices_[static_cast<std::size_t>(device)];
  }

  device_properties do_properties(int device) const override {
    typename Api::device_prop_type p{};
    call(Api::get_properties(&p, device), "GetDeviceProperties", device);
    device_properties out;
    out.name = p.name;
    out.arch = Api::arch(p);
    out.ordinal = device;
    out.max_threads_per_block = static_cast<std::uint32_t>(p.maxThreadsPerBlock);
    out.max_block_dim = {static_cast<std::uint32_t>(p.maxThreadsDim[0]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[1]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[2])};
    out.max_grid_dim = {static_cast<std::uint32_t>(p.maxGridSize[0]),
                        static_cast<std::uint32_t>(p.maxGridSize[1]),
                        static_cast<std::uint32_t>(p.maxGridSize[2])};
    out.max_shared_memory_per_block = Api::max_shared_memory(p);
    out.warp_size = static_cast<std::uint32_t>(p.warpSize);
    out.multiprocessor_count = static_cast<std::uint32_t>(p.multiProcessorCount);
    out.host_mapped_atomics = Api::host_mapped_atomics(device, p);
    return out;
  }

  // Points the header's reserved words at the slot table and the trap text area behind it.
  static void set_reserved(buffer_header* header, void* table_device, void* table_host) {
    header->reserved[0] = reinterpret_cast<std::uintptr_t>(table_device);
    header->reserved[1] =
        reinterpret_cast<std::uintptr_t>(static_cast<char*>(table_device) + table_bytes);
    header->reserved[2] =
        reinterpret_cast<std::uintptr_t>(static_cast<char*>(table_host) + table_bytes);
  }

  // A graph replays its slot for good, also after configure() gave the device a new buffer and
  // table: the graph slots' entries move to the new table (the caller holds the device's mutex).
  static void carry_graph_slots(const device_slots& slots, std::uint64_t* table) {
    if (slots.table_host == nullptr)
      return;
    for (std::uint32_t slot = pool_type::graph_first; slot < launch_slots; ++slot) {
      table[launch_slots + slot] = slots.table_host[launch_slots + slot];
      table[slot] = slots.table_host[slot];
    }
  }

  mapped_buffer do_allocate_failure_buffer(int device, std::size_t bytes) override {
    auto& slots = slots_of(device);
    const device_scope scope(device);
    relaxed relaxed_mode;
    if (Api::buffer_in_host_memory(device)) {
      // Buffer and slot table in one pinned, mapped allocation: readable after a trap, no
      // managed memory, no compute-capability rule.
      void* host = nullptr;
      call(Api::host_alloc_mapped(&host, bytes + mapped_extra), "HostAlloc", device);
      std::memset(host, 0, bytes + mapped_extra);
      void* dev = nullptr;
      call(Api::host_device_pointer(&dev, host), "HostGetDevicePointer", device);
      std::lock_guard lock(slots.mutex);
      carry_graph_slots(slots, reinterpret_cast<std::uint64_t*>(static_cast<char*>(host) + bytes));
      slots.table_host = reinterpret_cast<std::uint64_t*>(static_cast<char*>(host) + bytes);
      slots.table_device = reinterpret_cast<std::uint64_t*>(static_cast<char*>(dev) + bytes);
      set_reserved(static_cast<buffer_header*>(host), slots.table_device, slots.table_host);
      return mapped_buffer{host, dev, bytes, true};
    }
    return allocate_separate(slots, device, bytes);
  }

  // Without host atomics the protocol's add and compare-and-swap must stay on the device, so the
  // buffer goes to device memory and the runtime reads it by copy (fine-grained where possible:
  // coarse-grained memory is only coherent with the host at kernel boundaries, and the watchdog
  // reads while kernels run). The slot table stays host-mapped: the device only loads from it.
  mapped_buffer allocate_separate(device_slots& slots, int device, std::size_t bytes) {
    device_allocation a;
    std::unique_lock lock(slots.mutex, std::defer_lock);
    try {
      call(Api::host_alloc_mapped(&a.table_host, mapped_extra), "HostAlloc", device);
      std::memset(a.table_host, 0, mapped_extra);
      void* table_device = nullptr;
      call(Api::host_device_pointer(&table_device, a.table_host), "HostGetDevicePointer", device);
      call(Api::device_alloc(&a.device, bytes), "Malloc", device);
      // The shadow is what mapped_buffer::host points at; the runtime never reads a non-coherent
      // buffer there (failure_reader.cpp copies), so it only holds the header as first written.
      // Pinned, so a copy into it needs no staging.
      call(Api::host_alloc(&a.shadow, bytes), "MallocHost", device);
      std::memset(a.shadow, 0, bytes);
      set_reserved(static_cast<buffer_header*>(a.shadow), table_device, a.table_host);
      write_device_memory(device, a.device, a.shadow, bytes);
      lock.lock();
      slots.separate.push_back(a); // first: if it throws, no launch sees the table
      carry_graph_slots(slots, static_cast<std::uint64_t*>(a.table_host));
      slots.table_host = static_cast<std::uint64_t*>(a.table_host);
      slots.table_device = static_cast<std::uint64_t*>(table_device);
    } catch (...) {
      if (a.shadow != nullptr)
        (void)Api::host_free(a.shadow);
      if (a.device != nullptr)
        (void)Api::device_free(a.device);
      if (a.table_host != nullptr)
        (void)Api::host_free(a.table_host);
      throw;
    }
    return mapped_buffer{a.shadow, a.device, bytes, false};
  }

  void do_free_failure_buffer(int device, const mapped_buffer& buffer) override {
    auto& slots = slots_of(device);
    if (slots.bound == buffer.device)
      bind_all(device, nullptr);
    if (buffer.host_coherent) {
      {
        std::lock_guard lock(slots.mutex);
        if (slots.table_host ==
            reinterpret_cast<std::uint64_t*>(static_cast<char*>(buffer.host) + buffer.bytes))
          slots.table_host = slots.table_device = nullptr; // later launches use slot 0
      }
      call(Api::host_free(buffer.host), "FreeHost", device);
      return;
    }
    device_allocation a;
    {
      std::lock_guard lock(slots.mutex);
      for (auto it = slots.separate.begin(); it != slots.separate.end(); ++it)
        if (it->device == buffer.device) {
          a = *it;
          slots.separate.erase(it);
          break;
        }
      if (a.device == nullptr)
        fail(Api::invalid_value, "free_failure_buffer", device);
      if (slots.table_host == a.table_host)
        slots.table_host = slots.table_device = nullptr;
    }
    call(Api::device_free(a.device), "Free", device);
    call(Api::host_free(a.shadow), "FreeHost", device);
    call(Api::host_free(a.table_host), "FreeHost", device);
  }

  void do_bind_failure_buffer(int device, const mapped_buffer& buffer) override {
    bind_all(device, buffer.device);
  }

  // Writes the buffer address into every registered module's device_buffer on `device`, and has
  // the runtime read each module's fallback storage, where failures went until now. On the
  // private stream: a copy on the null stream would join a capture in progress.
  void bind_all(int device, void* address) {
    auto& slots = slots_of(device);
    relaxed relaxed_mode;
    const stream_type stream = copy_stream(device); // before the lock: it takes it
    std::lock_guard lock(slots.mutex);
    const device_scope scope(device);
    const auto modules = registered_buffer_slots();
    for (std::size_t i = 0; i < modules.size(); ++i) {
      call(Api::memcpy_to_symbol_async(modules[i].host_shadow, &address, sizeof(address), stream),
           "MemcpyToSymbolAsync", device);
      void* fallback = nullptr;
      if (modules[i].fallback_shadow != nullptr)
        call(Api::symbol_address(&fallback, modules[i].fallback_shadow), "GetSymbolAddress",
             device);
      watch_module_fallback(*this, device, i, fallback, address != nullptr);
    }
    call(Api::stream_synchronize(stream), "StreamSynchronize", device);
    slots.bound = address;
    slots.bound_modules = modules.size();
  }

  // Both directions go through a private non-blocking stream: a copy on the null stream waits for
  // kernels still running, so the watchdog could neither read nor acknowledge (the non-coherent
  // buffer acknowledges by a write) the failures of a kernel that spins until they are reported.
  stream_type copy_stream(int device) const {
    auto& s = slots_of(device);
    std::lock_guard lock(s.mutex);
    if (s.copy_stream == nullptr) {
      const device_scope scope(device);
      call(Api::create_stream(&s.copy_stream), "StreamCreateWithFlags", device);
    }
    return s.copy_stream;
  }
  void copy(int device, void* destination, const void* source, std::size_t bytes) const {
    relaxed relaxed_mode;
    const stream_type stream = copy_stream(device);
    call(Api::memcpy_async(destination, source, bytes, stream), "MemcpyAsync", device);
    call(Api::stream_synchronize(stream), "StreamSynchronize", device);
  }
  void do_read_device_memory(int device, const void* source, void* destination,
                             std::size_t bytes) const override {
    copy(device, destination, source, bytes);
  }
  void do_write_device_memory(int device, void* destination, const void* source,
                              std::size_t bytes) override {
    copy(device, destination, source, bytes);
  }

  // What the back-end keeps of `kernel` on this device, asked once per kernel (the caller holds
  // the device's mutex). The query may load the module lazily, which a global capture refuses.
  const kernel_info& info_of(device_slots& s, const void* kernel) {
    if (s.last_kernel == kernel)
      return s.last_info;
    auto found = s.kernels.find(kernel);
    if (found == s.kernels.end()) {
      relaxed relaxed_mode;
      kernel_info k;
      if (Api::describe_kernel(kernel, &k) != Api::success) {
        Api::clear_error(); // a kernel the runtime cannot describe launches with slot 0
        k = kernel_info{};
      }
      found = s.kernels.emplace(kernel, k).first;
    }
    s.last_kernel = kernel;
    s.last_info = found->second;
    return s.last_info;
  }

  // Whether `stream` is being captured into a graph. The legacy stream never is, and asking
  // would cost a runtime call on the most common launch of all.
  static bool capturing(stream_type stream) {
    if (Api::never_captured(stream))
      return false;
    bool active = false;
    if (Api::is_capturing(stream, &active) != Api::success) {
      Api::clear_error(); // not a sticky error; the launch below reports the real one
      return false;
    }
    return active;
  }

  // A launch that took a graph slot: its capture sequence and graph go with it for good (asked
  // only here, at capture time; a replay makes no call at all).
  static void pin_captured(std::uint64_t launch_id, stream_type stream) {
    std::uint64_t capture_id = 0;
    const void* graph = nullptr;
    if (Api::capture_of(stream, &capture_id, &graph) != Api::success) {
      Api::clear_error(); // the launch stands; its report just lacks the capture's id
      capture_id = 0;
      graph = nullptr;
    }
    pin_graph_launch(launch_id, capture_id, graph);
  }

  launch_status do_launch(const launch_request& r) override {
    auto& s = slots_of(r.device);
    if (registered_buffer_slot_count() != s.bound_modules && s.bound != nullptr)
      bind_all(r.device, s.bound); // a module loaded since the last bind
    std::uint64_t shared = r.shared_memory;
    const auto stream = static_cast<stream_type>(r.stream);
    const bool captured = capturing(stream);
    std::lock_guard lock(s.mutex);
    const kernel_info& kernel = info_of(s, r.kernel);
    std::uint32_t slot = s.table_host != nullptr ? s.pool.acquire(captured) : 0;
    if (slot != 0) {
      const std::uint64_t padded = slot_shared_memory(slot, r.shared_memory, kernel);
      if (padded <= kernel.dynamic_limit) {
        __atomic_store_n(&s.table_host[launch_slots + slot], kernel.static_bytes + padded,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&s.table_host[slot], r.launch_id | (captured ? graph_flag : 0),
                         __ATOMIC_RELEASE);
        shared = padded;
      } else {
        slot = 0; // no room for the slot bytes: the record carries launch id 0 and flags 1
      }
    }
    call(Api::launch_kernel(r.kernel, kernel.handle, r.grid, r.block, const_cast<void**>(r.args),
                            static_cast<std::size_t>(shared), stream),
         "LaunchKernel", r.device);
    // The kernel is already launched: a failing event record is no launch failure (the slot just
    // stays out of use; the context is broken and the next call says so).
    if (slot != 0 && !captured)
      (void)s.pool.launched(slot, stream);
    if (slot != 0 && captured)
      pin_captured(r.launch_id, stream);
    return launch_status::ok;
  }

  void do_synchronize(int device, stream_handle stream) override {
    if (stream != nullptr) {
      call(Api::stream_synchronize(static_cast<stream_type>(stream)), "StreamSynchronize", device);
      return;
    }
    const device_scope scope(device);
    call(Api::device_synchronize(), "DeviceSynchronize", device);
  }
  stream_handle do_create_stream(int device) override {
    const device_scope scope(device);
    stream_type s = nullptr;
    call(Api::create_stream(&s), "StreamCreateWithFlags", device);
    return s;
  }
  void do_destroy_stream(int device, stream_handle stream) override {
    call(Api::destroy_stream(static_cast<stream_type>(stream)), "StreamDestroy", device);
  }

  int count_ = 0;
  std::vector<std::unique_ptr<device_slots>> devices_;
};

} // namespace tdiag::assertions::detail
