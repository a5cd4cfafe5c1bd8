// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Two streams run the same kernel; only the second stream's data has a zero divisor. The report
// names that launch and its stream; the first stream's results are intact.
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cstdio>

#include "../gather_index_check/sample_array.h"
#include "scale_kernel.h"

int main() {
  if (!sample_device_available("multi_stream"))
    return 0;
  constexpr int n = 4096;
  auto backend = tdiag::select_backend();
  tdiag::stream_handle streams[2] = {backend->create_stream(0), backend->create_stream(0)};
  sample_array<float> x(n, 6.f), good(n, 2.f), bad(n, 2.f), y0(n), y1(n);
  bad[1234] = 0.f;
  std::printf("stream A = %p, stream B = %p\n", streams[0], streams[1]);
  int status = 0;
  TDIAG_LAUNCH(divide_kernel, n / 128, 128, 0, streams[0], x.data(), good.data(), y0.data(), n);
  TDIAG_LAUNCH(divide_kernel, n / 128, 128, 0, streams[1], x.data(), bad.data(), y1.data(), n);
  try {
    tdiag::synchronize_and_check(streams[0]);
  } catch (const tdiag::device_assertion_error& e) {
    std::printf("caught on stream B's launch: %s\n", e.what());
    status = 1;
  }
  bool a_ok = true;
  for (float v : y0)
    a_ok = a_ok && v == 3.f;
  std::printf("stream A results %s\n", a_ok ? "correct" : "WRONG");
  for (auto s : streams)
    backend->destroy_stream(0, s);
  return a_ok ? status : 2;
}
