// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Deterministic synthetic traces shaped like a CUPTI capture of a training loop: kernels with
// long templated names on several streams, the runtime calls that launched them (with flows),
// copies, caching-allocator traffic with stacks, annotations, counters and an assertion. For
// tests, benchmarks and demos that need a trace of a given size without a GPU.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>

namespace tdiag::trace {

struct synthetic_options {
  std::size_t kernels = 10'000;
  std::uint32_t devices = 1;
  std::uint32_t streams_per_device = 4;
  std::uint32_t host_threads = 2;
  std::uint32_t kernel_names = 36; ///< distinct kernel names
  std::size_t copies_per_100_kernels = 5;
  std::size_t allocations_per_100_kernels = 20;
  std::uint64_t seed = 1;
  bool with_flows = true; ///< link launches to kernels (trace::link_flows_by_correlation)
  bool with_allocator_state = true;
};

/// A finalized synthetic trace. Same options, same trace.
[[nodiscard]] trace make_synthetic_trace(const synthetic_options& options = {});

} // namespace tdiag::trace
