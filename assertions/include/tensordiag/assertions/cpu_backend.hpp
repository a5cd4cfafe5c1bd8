// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CPU back-end: runs CUDA-style kernels (compiled as C++ with cpu_kernel.hpp) on host
// threads, so assertion-using kernels run, fail and report on machines without a GPU.
//
// Execution model: a launch runs synchronously on the launching host thread (like
// CUDA_LAUNCH_BLOCKING=1). Blocks run one after another; the threads of a block are fibers
// (ucontext) switched only at __syncthreads() and at exit, so barriers, block-shared storage and
// a thread stopped by a failed assertion behave as on sm_70+ GPUs. Several host threads may
// launch at the same time; each runs its own launches.
#pragma once

#include <tensordiag/core/backend.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tdiag::assertions {

/// Options of a CPU back-end instance (a custom back-end may build on one with other limits).
struct cpu_backend_options {
  std::string name = "cpu";
  int device_count = 1;
  device_properties properties = default_properties();
  std::size_t fiber_stack_bytes = 0; ///< 0: 64 KiB, 256 KiB under sanitizers, or TDIAG_CPU_STACK_KB

  [[nodiscard]] static device_properties default_properties();
};

class cpu_backend final : public backend {
public:
  explicit cpu_backend(cpu_backend_options options = {});
  ~cpu_backend() override;

  /// The process-wide CPU back-end, registered under "cpu" with priority -100 (GPUs win).
  [[nodiscard]] static std::shared_ptr<cpu_backend> shared();

private:
  [[nodiscard]] std::string_view do_name() const noexcept override { return options_.name; }
  [[nodiscard]] int do_device_count() const override { return options_.device_count; }
  [[nodiscard]] int do_current_device() const override { return 0; }
  [[nodiscard]] device_properties do_properties(int device) const override;
  [[nodiscard]] mapped_buffer do_allocate_failure_buffer(int device, std::size_t bytes) override;
  void do_free_failure_buffer(int device, const mapped_buffer& buffer) override;
  void do_bind_failure_buffer(int device, const mapped_buffer& buffer) override;
  void do_read_device_memory(int device, const void* source, void* destination,
                             std::size_t bytes) const override;
  void do_write_device_memory(int device, void* destination, const void* source,
                              std::size_t bytes) override;
  launch_status do_launch(const launch_request& request) override;
  void do_synchronize(int device, stream_handle stream) override;
  [[nodiscard]] stream_handle do_create_stream(int device) override;
  void do_destroy_stream(int device, stream_handle stream) override;

  void check_device(int device) const;

  cpu_backend_options options_;
  std::vector<std::atomic<void*>> bound_; // failure buffer per device
  std::mutex streams_mutex_;
  std::vector<std::unique_ptr<char>> streams_;
};

} // namespace tdiag::assertions
