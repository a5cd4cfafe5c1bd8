// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA runtime calls behind the launch-slot pool and the capture-mode guard (gpu/). Not API.
#pragma once

#include <cuda_runtime.h>

#include "../gpu/launch_slot_pool.hpp"
#include "../gpu/relaxed_capture_mode.hpp"

namespace tdiag::assertions::detail {

struct cuda_slot_api {
  using event_type = cudaEvent_t;
  using stream_type = cudaStream_t;
  using status_type = cudaError_t;
  static constexpr status_type success = cudaSuccess;
  static constexpr status_type not_ready = cudaErrorNotReady;

  static status_type create_event(event_type* event) {
    // Timing would make every record and query slower; only completion is asked.
    return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
  }
  static status_type record_event(event_type event, stream_type stream) {
    return cudaEventRecord(event, stream);
  }
  static status_type query_event(event_type event) { return cudaEventQuery(event); }
  static void destroy_event(event_type event) { (void)cudaEventDestroy(event); }

  // gpu/relaxed_capture_mode.hpp
  using capture_mode_type = cudaStreamCaptureMode;
  static constexpr capture_mode_type relaxed = cudaStreamCaptureModeRelaxed;
  static status_type exchange_capture_mode(capture_mode_type* mode) {
    return cudaThreadExchangeStreamCaptureMode(mode);
  }
};

} // namespace tdiag::assertions::detail
