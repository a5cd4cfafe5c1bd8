// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The generic accelerator back-end interface and its registry. A back-end knows how to find its
// devices, describe them, hold the small host-visible memory that device code writes failures
// into, launch a kernel given as a function address plus argument pointers (the shape of
// cudaLaunchKernel / hipLaunchKernel), and synchronize. The CPU back-end (assertions library),
// the CUDA and HIP back-ends, and test doubles all implement it; none of them is special here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag {

/// Grid and block extents, CUDA's dim3 without the dependency.
struct extent3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;
  [[nodiscard]] std::uint64_t volume() const noexcept {
    return std::uint64_t{x} * std::uint64_t{y} * std::uint64_t{z};
  }
  friend bool operator==(const extent3& a, const extent3& b) noexcept {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
};

/// An opaque stream handle: cudaStream_t / hipStream_t on GPUs, a token on the CPU back-end.
/// nullptr is the default (legacy) stream of the current device.
using stream_handle = void*;

/// What a launch must respect on one device; a launch that breaks a limit is rejected with a
/// diagnostic before it reaches the driver.
struct device_properties {
  std::string name; ///< "NVIDIA H200", "CPU (host threads)"
  std::string arch; ///< "sm_90", "gfx90a", "x86_64"
  int ordinal = 0;
  std::uint32_t max_threads_per_block = 1024;
  extent3 max_block_dim{1024, 1024, 64};
  extent3 max_grid_dim{2147483647u, 65535u, 65535u};
  std::uint64_t max_shared_memory_per_block = 48 * 1024; ///< without opt-in
  std::uint32_t warp_size = 32;
  std::uint32_t multiprocessor_count = 1;
  bool host_mapped_atomics = true; ///< device atomics on host-mapped memory are reliable
};

/// Memory shared by host and device: `host` is where the host reads it, `device` what device
/// code is given. When `host_coherent` is false the host must read through
/// backend::read_device_memory() (e.g. HIP on a system without PCIe atomics).
struct mapped_buffer {
  void* host = nullptr;
  void* device = nullptr;
  std::size_t bytes = 0;
  bool host_coherent = true;
};

/// Calls `kernel` with the unpacked arguments on the host; only the CPU back-end uses it, GPU
/// translation units leave it null.
using host_invoke_fn = void (*)(const void* kernel, void* const* args);

/// One kernel launch, already validated and registered: the launch id is final.
struct launch_request {
  const void* kernel = nullptr; ///< the kernel's address (host stub on CUDA/HIP)
  void* const* args = nullptr;  ///< one pointer per kernel parameter, as cudaLaunchKernel takes
  std::size_t arg_count = 0;
  host_invoke_fn host_invoke = nullptr;
  extent3 grid;
  extent3 block;
  std::uint64_t shared_memory = 0; ///< dynamic shared memory in bytes
  stream_handle stream = nullptr;
  int device = 0;
  std::uint64_t launch_id = 0; ///< 0 = not registered (registry off)
};

enum class launch_status : std::uint8_t {
  ok,     ///< launched (on the CPU back-end: ran to completion)
  trapped ///< a device assertion with the `trap` policy aborted the launch
};

/// The interface every back-end implements (non-virtual interface: public calls, private
/// do_* hooks). All public functions may be called from several host threads at once; a back-end
/// serializes internally where its runtime needs it. Errors are thrown as tdiag::error.
class backend {
public:
  backend() = default;
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;
  virtual ~backend() = default;

  /// Stable lower-case name: "cpu", "cuda", "hip", or a custom one.
  [[nodiscard]] std::string_view name() const noexcept { return do_name(); }
  /// Number of devices this back-end can launch on now; 0 when the runtime finds none.
  [[nodiscard]] int device_count() const { return do_device_count(); }
  /// The calling host thread's current device.
  [[nodiscard]] int current_device() const { return do_current_device(); }
  /// Limits of `device`; throws tdiag::error for an ordinal out of range.
  [[nodiscard]] device_properties properties(int device) const { return do_properties(device); }

  /// Allocates `bytes` of zeroed memory that device code can write with atomics and the host can
  /// read while a kernel runs (pinned host-mapped memory on GPUs).
  [[nodiscard]] mapped_buffer allocate_failure_buffer(int device, std::size_t bytes) {
    return do_allocate_failure_buffer(device, bytes);
  }
  /// Frees a buffer from allocate_failure_buffer(); unbinds it first if bound.
  void free_failure_buffer(int device, const mapped_buffer& buffer) {
    do_free_failure_buffer(device, buffer);
  }
  /// Makes every later launch on `device` find `buffer` from device code (no kernel arguments).
  void bind_failure_buffer(int device, const mapped_buffer& buffer) {
    do_bind_failure_buffer(device, buffer);
  }
  /// Copies `bytes` from a device-visible address (a site descriptor, a non-coherent buffer).
  void read_device_memory(int device, const void* source, void* destination,
                          std::size_t bytes) const {
    do_read_device_memory(device, source, destination, bytes);
  }

  /// Copies `bytes` to a device-visible address (acknowledging a non-coherent buffer).
  void write_device_memory(int device, void* destination, const void* source, std::size_t bytes) {
    do_write_device_memory(device, destination, source, bytes);
  }

  /// Launches a validated, registered kernel. Returns `trapped` when the launch was aborted by a
  /// trapping assertion (the failure is in the buffer); throws tdiag::error when the runtime
  /// refuses the launch.
  launch_status launch(const launch_request& request) { return do_launch(request); }
  /// Waits for all work on `stream` (nullptr: the whole device).
  void synchronize(int device, stream_handle stream) { do_synchronize(device, stream); }

  /// A new stream on `device`, destroyed with destroy_stream().
  [[nodiscard]] stream_handle create_stream(int device) { return do_create_stream(device); }
  void destroy_stream(int device, stream_handle stream) { do_destroy_stream(device, stream); }

private:
  [[nodiscard]] virtual std::string_view do_name() const noexcept = 0;
  [[nodiscard]] virtual int do_device_count() const = 0;
  [[nodiscard]] virtual int do_current_device() const = 0;
  [[nodiscard]] virtual device_properties do_properties(int device) const = 0;
  [[nodiscard]] virtual mapped_buffer do_allocate_failure_buffer(int device, std::size_t bytes) = 0;
  virtual void do_free_failure_buffer(int device, const mapped_buffer& buffer) = 0;
  virtual void do_bind_failure_buffer(int device, const mapped_buffer& buffer) = 0;
  virtual void do_read_device_memory(int device, const void* source, void* destination,
                                     std::size_t bytes) const = 0;
  virtual void do_write_device_memory(int device, void* destination, const void* source,
                                      std::size_t bytes) = 0;
  virtual launch_status do_launch(const launch_request& request) = 0;
  virtual void do_synchronize(int device, stream_handle stream) = 0;
  [[nodiscard]] virtual stream_handle do_create_stream(int device) = 0;
  virtual void do_destroy_stream(int device, stream_handle stream) = 0;
};

/// Adds a back-end under its name(); a later registration with the same name replaces the
/// earlier one for new lookups (the earlier object stays alive: launches may still use it).
/// `priority` orders automatic selection: the highest-priority back-end with a device wins.
void register_backend(std::shared_ptr<backend> implementation, int priority = 0);

/// The registered back-end called `name`, or nullptr.
[[nodiscard]] std::shared_ptr<backend> find_backend(std::string_view name);

/// Names of every registered back-end, highest priority first.
[[nodiscard]] std::vector<std::string> backend_names();

/// Makes `name` the back-end that select_backend() returns; an empty name restores automatic
/// selection. Throws tdiag::error (TDIAG-CORE-010) when no back-end has that name.
void set_active_backend(std::string_view name);

/// Changes whenever a back-end is registered or the active one is set, so callers can cache
/// select_backend()'s answer.
[[nodiscard]] std::uint64_t backend_registry_generation() noexcept;

/// The back-end to launch on: the one set with set_active_backend(), else the one named by the
/// TDIAG_BACKEND environment variable, else the highest-priority one with at least one device.
/// Throws tdiag::error (TDIAG-CORE-011) when none qualifies.
[[nodiscard]] std::shared_ptr<backend> select_backend();

} // namespace tdiag
