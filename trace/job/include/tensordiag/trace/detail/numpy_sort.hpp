// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// NumPy's unstable argsort, for reproducing the tie order of figures HTA computes with pandas'
// sort_values (internal to the job analyses; not API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tdiag::trace::detail {

/// The permutation NumPy 1.24's np.argsort(values, kind="quicksort") gives: median-of-3
/// introsort, insertion sort below 17 elements, heapsort past 2*log2(n) levels.
[[nodiscard]] std::vector<std::size_t> numpy_argsort(std::span<const std::int64_t> values);

} // namespace tdiag::trace::detail
