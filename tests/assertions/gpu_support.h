// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What every GPU test file shares: a device array and the `Gpu` fixture, which skips with a reason
// when the machine has no CUDA device and otherwise runs the test on the CUDA back-end.
#pragma once

#include <tensordiag/assertions/cuda_backend.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace tdiag::test {

/// True when a CUDA device can be used; `why` says why not.
inline bool cuda_device_present(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("no CUDA device on this machine (cudaGetDeviceCount: ") +
          cudaGetErrorName(e) + ")";
    (void)cudaGetLastError();
    return false;
  }
  if (n == 0) {
    why = "no CUDA device on this machine (cudaGetDeviceCount = 0)";
    return false;
  }
  return true;
}

template <typename T> struct device_array {
  explicit device_array(std::size_t n, T fill = T{}) : size(n) {
    cudaMalloc(&data, n * sizeof(T));
    std::vector<T> host(n, fill);
    cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~device_array() { cudaFree(data); }
  std::vector<T> get() const {
    std::vector<T> host(size);
    cudaMemcpy(host.data(), data, size * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }
  T* data = nullptr;
  std::size_t size;
};

class Gpu : public AssertionsFixture {
protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_present(why))
      GTEST_SKIP() << why;
    AssertionsFixture::SetUp();
    set_active_backend("cuda");
  }
  void TearDown() override {
    set_active_backend("");
    AssertionsFixture::TearDown();
  }
};

} // namespace tdiag::test
