// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Lets the calling thread make the runtime calls that set up a device (allocation, symbol copies,
// a kernel's attributes) while a stream capture is in progress: a first launch or check inside a
// global-mode capture must not invalidate it (PyTorch's allocator does the same around
// cudaMalloc). Shared by the CUDA and HIP back-ends; `Api` (cuda/cuda_backend.cpp,
// hip/hip_backend.cpp) supplies capture_mode_type, the constant `relaxed` and
// exchange_capture_mode(capture_mode_type*). Not API.
#pragma once

namespace tdiag::assertions::detail {

template <typename Api> class relaxed_capture_mode {
public:
  relaxed_capture_mode() { (void)Api::exchange_capture_mode(&mode_); }
  ~relaxed_capture_mode() { (void)Api::exchange_capture_mode(&mode_); }
  relaxed_capture_mode(const relaxed_capture_mode&) = delete;
  relaxed_capture_mode& operator=(const relaxed_capture_mode&) = delete;

private:
  typename Api::capture_mode_type mode_ = Api::relaxed;
};

} // namespace tdiag::assertions::detail
