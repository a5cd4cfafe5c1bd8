// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A gather with out-of-range indices, caught by TDIAG_CHECK_INDEX on the CPU back-end. The report
// goes to stderr (and to TDIAG_REPORT as JSON); the program then shows that the device is still
// usable by running the corrected gather. Exit status 1 when a failure was reported.
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cstdio>
#include <string>

#include "gather_kernel.h"
#include "sample_array.h"

int main() {
  if (!sample_device_available("gather_index_check"))
    return 0;
  constexpr int table_size = 16, blocks = 132, threads = 256, n = blocks * threads;
  sample_array<float> table(table_size), y(n, 0.f);
  for (int k = 0; k < table_size; ++k)
    table[k] = static_cast<float>(k) * 0.5f;
  // A classic off-by-one: indices meant for a table of 17 entries.
  sample_array<int> idx(n);
  for (int i = 0; i < n; ++i)
    idx[i] = (i * 7 + 3) % (table_size + 1);

  int status = 0;
  try {
    TDIAG_LAUNCH(gather_kernel<float>, blocks, threads, 0, nullptr, table.data(), table_size,
                 idx.data(), y.data(), n);
    tdiag::synchronize_and_check();
    std::printf("no failure?\n");
  } catch (const tdiag::device_assertion_error& e) {
    std::printf("caught tdiag::device_assertion_error (%zu failing site(s)); the device is still "
                "usable\n",
                e.report().diagnostics.size());
    status = 1;
  }

  for (int i = 0; i < n; ++i)
    idx[i] %= table_size; // the fix
  TDIAG_LAUNCH(gather_kernel<float>, blocks, threads, 0, nullptr, table.data(), table_size,
               idx.data(), y.data(), n);
  tdiag::synchronize_and_check();
  double sum = 0;
  for (float v : y)
    sum += v;
  const std::string backend(tdiag::select_backend()->name());
  std::printf("corrected gather on back-end '%s': sum = %g\n", backend.c_str(), sum);
  return status;
}
