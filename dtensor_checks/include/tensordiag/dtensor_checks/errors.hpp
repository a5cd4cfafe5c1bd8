// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The diagnostics of sharding propagation: the exception that carries their stable codes
// (TDIAG-DT-0NN, codes.hpp). Every message names the op, the argument (index and role), the mesh
// dim, the placements and shapes involved, why the rule forbids it, and a fix
// (docs/dtensor-errors.md).
#pragma once

#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/codes.hpp>

#include <cstdint>
#include <string_view>

namespace tdiag::dtensor {

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
