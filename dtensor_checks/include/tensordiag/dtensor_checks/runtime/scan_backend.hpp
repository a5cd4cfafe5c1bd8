// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Where a rank's local tensor lives and how to scan it: hashes (element_hash.hpp), NaN/Inf
// counts and copies to the host. The host back-end is here; the CUDA one is in
// tensordiag_dtensor_gpu (make_gpu_scan_backend below), with the same hash values.
#pragma once

#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tdiag::dtensor::runtime {

/// NaN and infinity counts of one buffer, with the first position (element index) of each, -1
/// when there is none.
struct nonfinite_counts {
  std::int64_t nan = 0;
  std::int64_t pos_inf = 0;
  std::int64_t neg_inf = 0;
  std::int64_t first_nan = -1;
  std::int64_t first_inf = -1;
  [[nodiscard]] bool clean() const noexcept { return nan == 0 && pos_inf == 0 && neg_inf == 0; }
};

class scan_backend {
public:
  virtual ~scan_backend() = default;
  /// The element_hash of `bytes` bytes at `data`.
  [[nodiscard]] std::uint64_t hash(const void* data, std::int64_t bytes) {
    return do_hash(data, bytes);
  }
  /// The hash of each consecutive `block_bytes` range (the last may be shorter); block_bytes is a
  /// multiple of 4. Each block hashes as if it were a buffer of its own.
  [[nodiscard]] std::vector<std::uint64_t> block_hashes(const void* data, std::int64_t bytes,
                                                        std::int64_t block_bytes) {
    return do_block_hashes(data, bytes, block_bytes);
  }
  /// NaN/Inf counts of `count` elements of `type` (integer types are always clean).
  [[nodiscard]] nonfinite_counts scan_nonfinite(const void* data, std::int64_t count, dtype type) {
    return do_scan_nonfinite(data, count, type);
  }
  /// Copies bytes [offset, offset + bytes) of `data` to `host`.
  void read(const void* data, std::int64_t offset, std::int64_t bytes, void* host) {
    do_read(data, offset, bytes, host);
  }
  [[nodiscard]] std::string name() const { return do_name(); }

private:
  virtual std::uint64_t do_hash(const void* data, std::int64_t bytes) = 0;
  virtual std::vector<std::uint64_t> do_block_hashes(const void* data, std::int64_t bytes,
                                                     std::int64_t block_bytes) = 0;
  virtual nonfinite_counts do_scan_nonfinite(const void* data, std::int64_t count, dtype type) = 0;
  virtual void do_read(const void* data, std::int64_t offset, std::int64_t bytes, void* host) = 0;
  [[nodiscard]] virtual std::string do_name() const = 0;
};

/// Scans host memory.
[[nodiscard]] std::unique_ptr<scan_backend> make_host_scan_backend();

/// The element_hash of a host buffer (what every back-end returns).
[[nodiscard]] std::uint64_t host_hash(const void* data, std::int64_t bytes) noexcept;

// The GPU back-end, defined in tensordiag_dtensor_gpu (built with CUDA, and with HIP through
// hipcc): replica hashes, block hashes and NaN/Inf scans in device kernels over plain device
// allocations, with hash values equal to host_hash() of the same bytes. Link that library to
// call these.

/// Number of usable GPUs; 0 when there is no device or no driver (never throws).
[[nodiscard]] int gpu_device_count() noexcept;

/// A back-end for device memory of the current device, launching on `stream` (a cudaStream_t or
/// hipStream_t; nullptr = the default stream). Calls synchronise the stream before returning.
/// Throws tdiag::error when no device is usable.
[[nodiscard]] std::unique_ptr<scan_backend> make_gpu_scan_backend(void* stream = nullptr);

} // namespace tdiag::dtensor::runtime
