// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The diagnostics of sharding propagation: stable codes TDIAG-DT-NNN and the exception that
// carries them. Every message names the op, the argument (index and role), the mesh dim, the
// placements and shapes involved, why the rule forbids it, and a fix (docs/dtensor-errors.md).
#pragma once

#include <tensordiag/core/error.hpp>

#include <cstdint>
#include <string_view>

namespace tdiag::dtensor {

/// Stable codes. Never renumber: CI suppressions key on them.
namespace codes {
inline constexpr std::string_view shape_mismatch = "TDIAG-DT-001"; ///< operands do not broadcast
inline constexpr std::string_view contraction_mismatch =
    "TDIAG-DT-002"; ///< mm/bmm inner dims differ
inline constexpr std::string_view inplace_placement =
    "TDIAG-DT-003"; ///< in-place op would reshard self
inline constexpr std::string_view shard_to_partial = "TDIAG-DT-004"; ///< S(d) cannot become P(op)
inline constexpr std::string_view partial_kinds = "TDIAG-DT-005";    ///< P(a) cannot become P(b)
inline constexpr std::string_view flatten_sharded =
    "TDIAG-DT-006"; ///< strict view merges a later sharded dim
inline constexpr std::string_view flatten_uneven =
    "TDIAG-DT-007"; ///< strict view merges an uneven shard
inline constexpr std::string_view view_local_mismatch =
    "TDIAG-DT-008"; ///< local view sizes disagree
inline constexpr std::string_view expand_sharded =
    "TDIAG-DT-009";                                         ///< expand of a sharded size-1 dim
inline constexpr std::string_view no_rule = "TDIAG-DT-010"; ///< no sharding rule for the op
inline constexpr std::string_view bad_arguments = "TDIAG-DT-011"; ///< wrong arity, kind or dim
inline constexpr std::string_view no_strategy =
    "TDIAG-DT-012"; ///< every candidate was filtered out
inline constexpr std::string_view placement_count =
    "TDIAG-DT-013";                                           ///< placements do not fit the mesh
inline constexpr std::string_view view_size = "TDIAG-DT-014"; ///< view/expand size is invalid
inline constexpr std::string_view malformed_case = "TDIAG-DT-020"; ///< a corpus line cannot be read
} // namespace codes

/// Why a call was rejected: the program is wrong (`user_error`), PyTorch declines a transform
/// that is possible in principle (`limitation`), or tensordiag does not know the op.
enum class error_class : std::uint8_t { user_error, limitation, unknown_op };

[[nodiscard]] std::string_view to_string(error_class c) noexcept;

/// Thrown by propagation. The diagnostic carries fields `op`, `class`, and where they apply
/// `arg_index`, `arg`, `mesh_dim`, `placements`, `shape`.
class sharding_error : public tdiag::error {
public:
  sharding_error(error_class cls, diagnostic d) : tdiag::error(std::move(d)), class_(cls) {}
  [[nodiscard]] error_class error_kind() const noexcept { return class_; }
  [[nodiscard]] const diagnostic& diag() const { return report().diagnostics.front(); }

private:
  error_class class_;
};

/// A diagnostic with code, title, message and hint set and the `op` and `class` fields added.
[[nodiscard]] diagnostic make_diagnostic(std::string_view code, std::string_view op,
                                         error_class cls, std::string title, std::string message,
                                         std::string hint);

} // namespace tdiag::dtensor
