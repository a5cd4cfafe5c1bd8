// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A fixed-size array that kernels can read on every back-end: plain host memory for the CPU
// back-end, CUDA managed memory when the sample is compiled by nvcc. Shared by the assertion
// samples (gather_index_check, reduction_nan_check, multi_stream).
#pragma once

#include <cstddef>
#include <cstdio>
#include <new>

#if defined(__CUDACC__)
#  include <cuda_runtime.h>
#endif

/// False, after saying so on stderr, when this is the CUDA build of a sample and the machine has
/// no usable CUDA device (the sample then exits 0: nothing to show here). Always true otherwise.
inline bool sample_device_available(const char* program) {
#if defined(__CUDACC__)
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "%s: no CUDA device on this machine (%s); skipping. The CPU build of this sample "
                 "runs anywhere.\n",
                 program, e != cudaSuccess ? cudaGetErrorName(e) : "cudaGetDeviceCount = 0");
    return false;
  }
#else
  (void)program;
#endif
  return true;
}

template <typename T> class sample_array {
public:
  explicit sample_array(std::size_t n, T fill = T{}) : size_(n) {
#if defined(__CUDACC__)
    if (cudaMallocManaged(&data_, n * sizeof(T)) != cudaSuccess)
      throw std::bad_alloc();
#else
    data_ = new T[n];
#endif
    for (std::size_t i = 0; i < n; ++i)
      data_[i] = fill;
  }
  ~sample_array() {
#if defined(__CUDACC__)
    cudaFree(data_);
#else
    delete[] data_;
#endif
  }
  sample_array(const sample_array&) = delete;
  sample_array& operator=(const sample_array&) = delete;

  T* data() noexcept {
    return data_;
  }
  std::size_t size() const noexcept {
    return size_;
  }
  T& operator[](std::size_t i) noexcept {
    return data_[i];
  }
  T* begin() noexcept {
    return data_;
  }
  T* end() noexcept {
    return data_ + size_;
  }

private:
  T* data_ = nullptr;
  std::size_t size_;
};
