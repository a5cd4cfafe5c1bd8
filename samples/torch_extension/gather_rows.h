// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The launcher of gather_rows.cu, called from the op's binding (gather_rows_op.cpp).
#pragma once

#include <cstdint>

namespace tdiag_sample {

struct gather_args {
  const float* src = nullptr;
  const std::int64_t* index = nullptr;
  float* out = nullptr;
  std::int64_t rows = 0, cols = 0, count = 0;
  void* stream = nullptr; // PyTorch's current CUDA stream
};

/// Launches the gather on `stream`: with <<<>>>, or through TDIAG_LAUNCH (registered: the report
/// then names the grid, stream and this launch site).
void launch_gather_rows(const gather_args& args, bool through_tensordiag);

} // namespace tdiag_sample
