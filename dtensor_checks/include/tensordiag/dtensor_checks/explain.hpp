// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Human-readable explanations of a propagation: the inputs, every candidate strategy with its
// cost per input, the chosen one and why, the outputs and the redistribution plan.
#pragma once

#include <tensordiag/dtensor_checks/propagate.hpp>

#include <string>
#include <string_view>

namespace tdiag::dtensor {

/// The explanation of `result` for `call` as text (several lines, trailing newline). Candidates
/// of infinite cost (an impossible move) are summarised in one line unless `all_candidates`.
[[nodiscard]] std::string explain_text(const op_call& call, const propagation_result& result,
                                       bool all_candidates = false);
/// The same as one JSON object.
[[nodiscard]] std::string explain_json(const op_call& call, const propagation_result& result);

/// Parses one `tdiag shard explain --arg` value: a spec `f32[12,1] (S(0),P(sum))`, a tensor list
/// `[f32[4] (R); f32[2] (S(0))]`, an int `1`, ints `[1, 2]`, a float `2.0`, a bool `true`, or
/// `None`. Throws tdiag::input_error on anything else.
[[nodiscard]] op_arg parse_arg(std::string_view text, std::size_t mesh_ndim);

} // namespace tdiag::dtensor
