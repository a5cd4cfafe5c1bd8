// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of dtensor_checks' stable diagnostic codes, TDIAG-DT-NNN: 0NN sharding
// propagation (errors.hpp), 1NN numerical validation on a simulated mesh, 2NN runtime checks on
// real ranks, 3NN communicators and plan execution, 4NN reports on recorded programs
// (comm_report.hpp). Never renumber: CI suppressions key on them.
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::dtensor::codes {
inline constexpr std::string_view shape_mismatch = "TDIAG-DT-001";
inline constexpr std::string_view contraction_mismatch = "TDIAG-DT-002";
inline constexpr std::string_view inplace_placement = "TDIAG-DT-003";
inline constexpr std::string_view shard_to_partial = "TDIAG-DT-004";
inline constexpr std::string_view partial_kinds = "TDIAG-DT-005";
inline constexpr std::string_view flatten_sharded = "TDIAG-DT-006";
inline constexpr std::string_view flatten_uneven = "TDIAG-DT-007";
inline constexpr std::string_view view_local_mismatch = "TDIAG-DT-008";
inline constexpr std::string_view expand_sharded = "TDIAG-DT-009";
inline constexpr std::string_view no_rule = "TDIAG-DT-010";
inline constexpr std::string_view bad_arguments = "TDIAG-DT-011";
inline constexpr std::string_view no_strategy = "TDIAG-DT-012";
inline constexpr std::string_view placement_count = "TDIAG-DT-013";
inline constexpr std::string_view view_size = "TDIAG-DT-014";
inline constexpr std::string_view malformed_case = "TDIAG-DT-020";
inline constexpr std::string_view reference_failed = "TDIAG-DT-101";
inline constexpr std::string_view wrong_values = "TDIAG-DT-102";
inline constexpr std::string_view replica_mismatch = "TDIAG-DT-103";
inline constexpr std::string_view wrong_local_shape = "TDIAG-DT-104";
inline constexpr std::string_view local_op_failed = "TDIAG-DT-105";
inline constexpr std::string_view no_reference = "TDIAG-DT-106";
inline constexpr std::string_view tensor_misuse = "TDIAG-DT-110";
inline constexpr std::string_view replica_divergence = "TDIAG-DT-201";
inline constexpr std::string_view local_shape = "TDIAG-DT-202";
inline constexpr std::string_view non_finite = "TDIAG-DT-203";
inline constexpr std::string_view partial_non_finite = "TDIAG-DT-204";
inline constexpr std::string_view partial_mismatch = "TDIAG-DT-205";
inline constexpr std::string_view comm_failed = "TDIAG-DT-301";
inline constexpr std::string_view nccl_failed = "TDIAG-DT-302";
inline constexpr std::string_view id_exchange = "TDIAG-DT-303";
inline constexpr std::string_view plan_execution = "TDIAG-DT-304";
inline constexpr std::string_view recorded_redistribution = "TDIAG-DT-401";
inline constexpr std::string_view recorded_outputs = "TDIAG-DT-402";
inline constexpr std::string_view recorded_comms = "TDIAG-DT-403";
inline constexpr std::string_view recorded_rejection = "TDIAG-DT-404";

/// Every code of dtensor_checks.
inline constexpr code_entry table[] = {
    {shape_mismatch, "operands do not broadcast"},
    {contraction_mismatch, "mm/bmm inner dims differ"},
    {inplace_placement, "in-place op would reshard self"},
    {shard_to_partial, "S(d) cannot become P(op)"},
    {partial_kinds, "P(a) cannot become P(b)"},
    {flatten_sharded, "strict view merges a later sharded dim"},
    {flatten_uneven, "strict view merges an uneven shard"},
    {view_local_mismatch, "local view sizes disagree"},
    {expand_sharded, "expand of a sharded size-1 dim"},
    {no_rule, "no sharding rule for the op"},
    {bad_arguments, "wrong arity, kind or dim"},
    {no_strategy, "every candidate was filtered out"},
    {placement_count, "placements do not fit the mesh"},
    {view_size, "view/expand size is invalid"},
    {malformed_case, "a corpus line cannot be read"},
    {reference_failed, "the reference op rejected its args"},
    {wrong_values, "assembled output differs from reference"},
    {replica_mismatch, "a claimed Replicate differs across ranks"},
    {wrong_local_shape, "a rank's local output has the wrong shape"},
    {local_op_failed, "the op raised on a rank's local pieces"},
    {no_reference, "no reference implementation for the op"},
    {tensor_misuse, "bad index, dtype or view of a dense_tensor"},
    {replica_divergence, "replicated data differs across ranks"},
    {local_shape, "local shape/offset does not fit the spec"},
    {non_finite, "NaN or Inf in a rank's local tensor"},
    {partial_non_finite, "a Partial reduces to NaN/Inf"},
    {partial_mismatch, "a Partial reduces to the wrong value"},
    {comm_failed, "a collective failed or a peer rank failed"},
    {nccl_failed, "an NCCL call returned an error"},
    {id_exchange, "the NCCL unique id could not be exchanged"},
    {plan_execution, "a plan step cannot be executed"},
    {recorded_redistribution, "a source line made PyTorch redistribute"},
    {recorded_outputs, "PyTorch's output placements differ from ours"},
    {recorded_comms, "PyTorch's collectives differ from ours"},
    {recorded_rejection, "PyTorch and tensordiag disagree on rejecting"},
};
} // namespace tdiag::dtensor::codes
