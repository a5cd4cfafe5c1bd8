// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// When two ranks' entries of one collective agree: the rules of PyTorch's analyzer
// (torch/distributed/flight_recorder/components/types.py), written from their description, so
// that a verdict reads with the same words: the op type first, then sizes (all_to_all, scatter
// and gather exchange per-rank sizes), the gather/scatter element counts against the group
// size, then dtypes; all_to_all stays undecided.
#include <tensordiag/trace/detail/saturate.hpp>

#include <algorithm>
#include <set>

#include "job_index.hpp"

namespace tdiag::trace::fr::detail {
namespace {

bool one_of(std::string_view type, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), type) != names.end();
}

// Element counts in 128 bits, held within +-2^100: a dump's dims (2^32 x 2^32, say) do not
// overflow, and a count times the group size (below 2^31) does not either; no tensor has 2^100
// elements, so the clamp never equates two real counts.
using count = tdiag::trace::detail::wide_int;

constexpr count limit = count{1} << 100;

count clamp(count n) {
  return n > limit ? limit : n < -limit ? -limit : n;
}

count numel(const std::vector<std::int64_t>& dims) {
  count n = 1;
  for (const auto d : dims) {
    const count magnitude = d < 0 ? -count{d} : count{d}, so_far = n < 0 ? -n : n;
    if (magnitude != 0 && so_far > limit / magnitude) // the product would pass the limit
      return (n < 0) != (d < 0) ? -limit : limit;
    n *= d;
  }
  return n;
}

// The elements of every tensor listed: an all_gather's output is one flattened tensor (NCCL)
// or a tensor per rank (a list), the group size times the input either way.
count total_numel(const std::vector<std::vector<std::int64_t>>& sizes) {
  count n = 0;
  for (const auto& dims : sizes)
    n = clamp(n + numel(dims));
  return n;
}

std::set<std::string> as_set(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

// Dtypes as the analyzer compares them: sets, and only where both sides carry tensors.
bool dtypes_differ(std::string_view type, const tensor_shapes& a, const tensor_shapes& b) {
  const bool a_in = !a.input_sizes.empty() && !a.input_sizes.front().empty();
  const bool a_out = !a.output_sizes.empty() && !a.output_sizes.front().empty();
  const bool b_in = !b.input_sizes.empty() && !b.input_sizes.front().empty();
  const bool b_out = !b.output_sizes.empty() && !b.output_sizes.front().empty();
  if (!one_of(type, {"scatter", "gather", "broadcast"}) && a_in && a_out &&
      as_set(a.input_dtypes) != as_set(a.output_dtypes))
    return true;
  if (!one_of(type, {"scatter", "broadcast"}) && a_in && b_in &&
      as_set(a.input_dtypes) != as_set(b.input_dtypes))
    return true;
  return type != "gather" && a_out && b_out && as_set(a.output_dtypes) != as_set(b.output_dtypes);
}

} // namespace

match_state compare_calls(std::string_view ref_type, const tensor_shapes& ref,
                          std::string_view other_type, const tensor_shapes& other,
                          std::size_t group_size) {
  if (ref_type != other_type)
    return match_state::collective_type_mismatch;
  const auto& type = ref_type;
  if (one_of(type, {"coalesced", "ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced"}))
    return match_state::fully_matched;
  // Per-rank sizes: the all_to_all family, the _v variants, and the root-only side of scatter
  // and gather.
  const bool per_rank = one_of(type, {"all_to_all", "all_to_all_single", "all_to_all_v_single"});
  if (!per_rank && !one_of(type, {"scatter", "all_gather_v"}) &&
      ref.input_sizes != other.input_sizes)
    return match_state::size_or_syntax_mismatch;
  if (!per_rank && !one_of(type, {"gather", "reduce_scatter_v"}) &&
      ref.output_sizes != other.output_sizes)
    return match_state::size_or_syntax_mismatch;
  if (one_of(type, {"all_reduce", "allreduce_coalesced"}) && ref.input_sizes != other.output_sizes)
    return match_state::size_or_syntax_mismatch;
  const auto n = static_cast<count>(group_size);
  if (one_of(type, {"all_gather", "_all_gather_base", "all_gather_into_tensor_coalesced"}) &&
      n > 0 && !other.output_sizes.empty() && !ref.input_sizes.empty() &&
      total_numel(other.output_sizes) != numel(ref.input_sizes.front()) * n)
    return match_state::size_or_syntax_mismatch;
  if (one_of(type, {"reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced"}) &&
      n > 0 && !other.input_sizes.empty() && !ref.output_sizes.empty() &&
      total_numel(other.input_sizes) != numel(ref.output_sizes.front()) * n)
    return match_state::size_or_syntax_mismatch;
  if (dtypes_differ(type, ref, other))
    return match_state::collective_dtype_mismatch;
  if (per_rank)
    return match_state::undecided;
  return match_state::fully_matched;
}

} // namespace tdiag::trace::fr::detail
