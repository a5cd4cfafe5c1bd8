// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A NaN hidden in the input of a shared-memory reduction: the failing thread stops, the block's
// other threads still get through their barriers, and the report names the element.
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cmath>
#include <cstdio>
#include <limits>

#include "../gather_index_check/sample_array.h"
#include "reduce_kernel.h"

int main() {
  if (!sample_device_available("reduction_nan_check"))
    return 0;
  constexpr int n = 64 * reduce_block;
  sample_array<float> x(n, 1.f), sums(64, 0.f);
  x[5000] = std::numeric_limits<float>::quiet_NaN();
  int status = 0;
  try {
    TDIAG_LAUNCH(block_sum_kernel, 64, reduce_block, 0, nullptr, x.data(), n, sums.data());
    tdiag::synchronize_and_check();
  } catch (const tdiag::device_assertion_error& e) {
    std::printf("caught tdiag::device_assertion_error: %s\n", e.what());
    status = 1;
  }
  int finite = 0;
  for (float s : sums)
    finite += std::isfinite(s) ? 1 : 0;
  std::printf("%d of 64 block sums are finite (the NaN's block summed without it)\n", finite);
  return status;
}
