// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The HIP runtime calls behind the launch-slot pool and the capture-mode guard (gpu/). Not API.
#pragma once

#include <hip/hip_runtime_api.h>

#include "../gpu/launch_slot_pool.hpp"
#include "../gpu/relaxed_capture_mode.hpp"

namespace tdiag::assertions::detail {

struct hip_slot_api {
  using event_type = hipEvent_t;
  using stream_type = hipStream_t;
  using status_type = hipError_t;
  static constexpr status_type success = hipSuccess;
  static constexpr status_type not_ready = hipErrorNotReady;

  static status_type create_event(event_type* event) {
    // Timing would make every record and query slower; only completion is asked.
    return hipEventCreateWithFlags(event, hipEventDisableTiming);
  }
  static status_type record_event(event_type event, stream_type stream) {
    return hipEventRecord(event, stream);
  }
  static status_type query_event(event_type event) { return hipEventQuery(event); }
  static void destroy_event(event_type event) { (void)hipEventDestroy(event); }

  // gpu/relaxed_capture_mode.hpp
  using capture_mode_type = hipStreamCaptureMode;
  static constexpr capture_mode_type relaxed = hipStreamCaptureModeRelaxed;
  static status_type exchange_capture_mode(capture_mode_type* mode) {
    return hipThreadExchangeStreamCaptureMode(mode);
  }
};

} // namespace tdiag::assertions::detail
