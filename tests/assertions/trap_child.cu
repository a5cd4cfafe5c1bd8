// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag_assert_trap_child: runs one failing kernel under the `trap` policy and lets the runtime
// print its report to stderr. A trap kills the CUDA context, so gpu_trap_test.cu runs this in a
// child process. Exit status: 3 after a device_assertion_error, 4 after another tdiag::error,
// 0 when nothing failed (a bug), 77 when there is no CUDA device.
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>
#include <tensordiag/core/error.hpp>

#include <cstdio>
#include <cstdlib>

__global__ void trap_child_kernel(int i, int n) {
  TDIAG_CHECK_INDEX(i, n);
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "trap child: no CUDA device\n");
    return 77;
  }
  tdiag::assertions::runtime_config config;
  config.failure_policy = tdiag::assertions::policy::trap;
  config.print = true;
  tdiag::assertions::configure(config);
  int status = 0;
  try {
    TDIAG_LAUNCH(trap_child_kernel, 1, 1, 0, nullptr, 17, 16);
    tdiag::synchronize_and_check();
    std::fprintf(stderr, "trap child: no failure reported\n");
  } catch (const tdiag::device_assertion_error& e) {
    std::fprintf(stderr, "trap child: caught tdiag::device_assertion_error: %s\n", e.what());
    status = 3;
  } catch (const tdiag::error& e) {
    std::fprintf(stderr, "trap child: caught tdiag::error: %s\n", e.what());
    status = 4;
  }
  std::fflush(stderr);
  std::fflush(stdout);
  // The context is dead after the trap: skip static destructors that would free CUDA memory.
  std::_Exit(status);
}
