// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA scan back-end: plain device allocations (cudaMalloc, no managed memory), the kernels
// of gpu_scan_kernels.cu, one synchronisation per call.
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/runtime/element_hash.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "gpu_kernels.hpp"

namespace tdiag::dtensor::runtime {
namespace {

using gpu_kernels::threads_per_block;

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess)
    return;
  diagnostic d;
  d.code = std::string(validation_codes::comm_failed);
  d.title = "CUDA call failed";
  d.message = fmt::format("{} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e));
  throw tdiag::error(std::move(d));
}

void check_launch(int e, const char* what) {
  check(static_cast<cudaError_t>(e), what);
}

class cuda_scan_backend final : public scan_backend {
public:
  explicit cuda_scan_backend(void* stream) : stream_(static_cast<cudaStream_t>(stream)) {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev),
          "querying the SM count");
    check(cudaMalloc(reinterpret_cast<void**>(&scratch_), 8 * sizeof(unsigned long long)),
          "allocating the scan scratch");
  }
  ~cuda_scan_backend() override { (void)cudaFree(scratch_); }
  cuda_scan_backend(const cuda_scan_backend&) = delete;
  cuda_scan_backend& operator=(const cuda_scan_backend&) = delete;

private:
  [[nodiscard]] unsigned grid_for(std::uint64_t work) const {
    const std::uint64_t wanted = (work + threads_per_block - 1) / threads_per_block;
    const std::uint64_t cap = static_cast<std::uint64_t>(sms_) * 8;
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(wanted, cap)));
  }

  std::uint64_t do_hash(const void* data, std::int64_t bytes) override {
    const auto n = static_cast<std::uint64_t>(bytes);
    const auto* p = static_cast<const unsigned char*>(data);
    const std::uint64_t words = n / 4;
    check(cudaMemsetAsync(scratch_, 0, sizeof(unsigned long long), stream_), "clearing the hash");
    if (words > 0) {
      const bool aligned = reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
      check_launch(gpu_kernels::launch_hash_words(p, words, aligned, scratch_,
                                                  grid_for(aligned ? words / 4 : words), stream_),
                   "launching the hash kernel");
    }
    unsigned long long h = 0;
    check(cudaMemcpyAsync(&h, scratch_, sizeof(h), cudaMemcpyDeviceToHost, stream_),
          "reading the hash");
    std::uint32_t tail = 0;
    if (n % 4 != 0) {
      check(cudaMemcpyAsync(&tail, p + words * 4, n % 4, cudaMemcpyDeviceToHost, stream_),
            "reading the tail bytes");
    }
    check(cudaStreamSynchronize(stream_), "synchronising the hash");
    std::uint64_t out = h + length_hash(n);
    if (n % 4 != 0)
      out += word_hash(tail, words);
    return out;
  }

  std::vector<std::uint64_t> do_block_hashes(const void* data, std::int64_t bytes,
                                             std::int64_t block_bytes) override {
    const auto n = static_cast<std::uint64_t>(bytes);
    const auto bb = static_cast<std::uint64_t>(block_bytes);
    const std::uint64_t blocks = n == 0 ? 0 : (n + bb - 1) / bb;
    std::vector<std::uint64_t> out(blocks, 0);
    if (blocks == 0)
      return out;
    unsigned long long* sums = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&sums), blocks * sizeof(unsigned long long)),
          "allocating block hashes");
    const auto release = [&] { (void)cudaFree(sums); };
    try {
      check(cudaMemsetAsync(sums, 0, blocks * sizeof(unsigned long long), stream_),
            "clearing block hashes");
      check_launch(gpu_kernels::launch_hash_blocks(data, n, bb, blocks, sums,
                                                   std::min(64u, grid_for(bb / 4)), stream_),
                   "launching the block hash kernel");
      check(cudaMemcpyAsync(out.data(), sums, blocks * sizeof(unsigned long long),
                            cudaMemcpyDeviceToHost, stream_),
            "reading block hashes");
      check(cudaStreamSynchronize(stream_), "synchronising block hashes");
    } catch (...) {
      release();
      throw;
    }
    release();
    return out;
  }

  nonfinite_counts do_scan_nonfinite(const void* data, std::int64_t count, dtype type) override {
    nonfinite_counts c;
    gpu_kernels::element_kind kind{};
    switch (type) {
    case dtype::float32:
      kind = gpu_kernels::element_kind::float32;
      break;
    case dtype::float64:
      kind = gpu_kernels::element_kind::float64;
      break;
    case dtype::float16:
      kind = gpu_kernels::element_kind::float16;
      break;
    case dtype::bfloat16:
      kind = gpu_kernels::element_kind::bfloat16;
      break;
    default:
      return c;
    }
    if (count <= 0)
      return c;
    check(cudaMemsetAsync(scratch_, 0, 3 * sizeof(unsigned long long), stream_), "clearing counts");
    check(cudaMemsetAsync(scratch_ + 3, 0xff, 2 * sizeof(unsigned long long), stream_),
          "clearing first indices");
    check_launch(
        gpu_kernels::launch_scan_nonfinite(data, static_cast<std::uint64_t>(count), kind, scratch_,
                                           grid_for(static_cast<std::uint64_t>(count)), stream_),
        "launching the NaN/Inf scan");
    unsigned long long r[5] = {};
    check(cudaMemcpyAsync(r, scratch_, sizeof(r), cudaMemcpyDeviceToHost, stream_),
          "reading counts");
    check(cudaStreamSynchronize(stream_), "synchronising the scan");
    c.nan = static_cast<std::int64_t>(r[0]);
    c.pos_inf = static_cast<std::int64_t>(r[1]);
    c.neg_inf = static_cast<std::int64_t>(r[2]);
    c.first_nan = r[3] == ~0ull ? -1 : static_cast<std::int64_t>(r[3]);
    c.first_inf = r[4] == ~0ull ? -1 : static_cast<std::int64_t>(r[4]);
    return c;
  }

  void do_read(const void* data, std::int64_t offset, std::int64_t bytes, void* host) override {
    if (bytes <= 0)
      return;
    check(cudaMemcpyAsync(host, static_cast<const char*>(data) + offset,
                          static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost, stream_),
          "copying to the host");
    check(cudaStreamSynchronize(stream_), "synchronising the copy");
  }

  [[nodiscard]] std::string do_name() const override { return "cuda"; }

  cudaStream_t stream_;
  int sms_ = 1;
  unsigned long long* scratch_ = nullptr;
};

} // namespace

int gpu_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<scan_backend> make_gpu_scan_backend(void* stream) {
  if (gpu_device_count() == 0) {
    diagnostic d;
    d.code = std::string(validation_codes::comm_failed);
    d.title = "no GPU";
    d.message = "make_gpu_scan_backend: no usable CUDA device (no device or no driver)";
    throw tdiag::error(std::move(d));
  }
  return std::make_unique<cuda_scan_backend>(stream);
}

} // namespace tdiag::dtensor::runtime
