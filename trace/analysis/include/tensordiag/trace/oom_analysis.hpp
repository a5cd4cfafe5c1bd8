// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace oom`: for each `oom` event, the request, what the driver reported free, reserved
// vs allocated, fragmentation (largest free block inside the reserved segments against all the
// free bytes in them), what the allocator released just before, the live allocations by site,
// and a verdict in plain words: fragmentation, a per-process memory limit (the device had room
// but the process's cap did not), or a device genuinely out of memory.
// Diagnostic codes: TDIAG-TR-220 (error, one per oom event), 221 (no oom events: note).
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tdiag::trace {

enum class oom_verdict : std::uint8_t {
  fragmentation, ///< enough free bytes in reserved segments, but no block large enough
  process_limit, ///< the device had room; the process's cap (memory fraction) was hit
  device_full,   ///< the device itself had too little free memory
  unexplained,   ///< a free block was large enough (allocator state incomplete?)
};
[[nodiscard]] std::string_view to_string(oom_verdict v) noexcept;

struct oom_site {
  frame_id site = 0;
  stack_id stack = no_stack;
  std::uint64_t bytes = 0;
  std::size_t count = 0;
};

struct oom_finding {
  std::size_t event_index = 0; ///< in the lane
  std::int64_t time = 0;
  std::int32_t device = 0;
  std::uint64_t requested = 0;
  /// The segment the caching allocator asks the driver for to serve the request
  /// (caching_segment_size): what the device's free memory is measured against.
  std::uint64_t segment = 0;
  std::uint64_t device_free = 0;
  std::uint64_t reserved = 0;  ///< at the moment of the failure
  std::uint64_t allocated = 0; ///< active_allocated block bytes
  std::uint64_t free_in_reserved = 0;
  std::uint64_t largest_free_block = 0;
  double fragmentation = 0;        ///< 1 - largest / free_in_reserved (0 when nothing free)
  std::uint64_t peak_reserved = 0; ///< before the failure, over the recorded history
  std::vector<std::uint64_t> released_before; ///< segment_free sizes since the last alloc
  /// Live allocations by site, most bytes first: the oom_sites_kept largest (a finding per oom
  /// of a dump with many ooms and many sites held them all, ooms x sites).
  std::vector<oom_site> sites;
  std::size_t site_count = 0; ///< all sites holding live allocations
  stack_id stack = no_stack;  ///< where the failed request came from
  oom_verdict verdict = oom_verdict::unexplained;
};

/// How many sites an oom_finding keeps.
inline constexpr std::size_t oom_sites_kept = 32;

[[nodiscard]] std::vector<oom_finding> find_ooms(const trace& t);
[[nodiscard]] report oom_report(const trace& t, const std::vector<oom_finding>& findings,
                                std::size_t top_sites = 5);

/// One live site as the OOM report's notes word it and every front end shows it ("1.50 GiB in 3
/// allocation(s) at forward (model.py:12)").
[[nodiscard]] std::string describe_oom_site(const trace& t, const oom_site& site);

} // namespace tdiag::trace
