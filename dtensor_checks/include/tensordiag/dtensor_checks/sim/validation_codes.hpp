// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Stable diagnostic codes of numerical validation (sim/), the communicators (comm/) and the
// runtime checks on real ranks (runtime/). Propagation's own codes are TDIAG-DT-0NN (errors.hpp).
#pragma once

#include <string_view>

namespace tdiag::dtensor::validation_codes {
// Simulated mesh (strategy validation).
inline constexpr std::string_view reference_failed =
    "TDIAG-DT-101"; ///< the reference op rejected its args
inline constexpr std::string_view wrong_values =
    "TDIAG-DT-102"; ///< assembled output differs from reference
inline constexpr std::string_view replica_mismatch =
    "TDIAG-DT-103"; ///< a claimed Replicate differs across ranks
inline constexpr std::string_view wrong_local_shape =
    "TDIAG-DT-104"; ///< a rank's local output has the wrong shape
inline constexpr std::string_view local_op_failed =
    "TDIAG-DT-105"; ///< the op raised on a rank's local pieces
inline constexpr std::string_view no_reference =
    "TDIAG-DT-106"; ///< no reference implementation for the op
inline constexpr std::string_view tensor_misuse =
    "TDIAG-DT-110"; ///< bad index, dtype or view of a dense_tensor
// Runtime checks.
inline constexpr std::string_view replica_divergence =
    "TDIAG-DT-201"; ///< replicated data differs across ranks
inline constexpr std::string_view local_shape =
    "TDIAG-DT-202"; ///< local shape/offset does not fit the spec
inline constexpr std::string_view non_finite =
    "TDIAG-DT-203"; ///< NaN or Inf in a rank's local tensor
inline constexpr std::string_view partial_non_finite =
    "TDIAG-DT-204"; ///< a Partial reduces to NaN/Inf
inline constexpr std::string_view partial_mismatch =
    "TDIAG-DT-205"; ///< a Partial reduces to the wrong value
// Communicators and plan execution.
inline constexpr std::string_view comm_failed =
    "TDIAG-DT-301"; ///< a collective failed or a peer rank failed
inline constexpr std::string_view nccl_failed = "TDIAG-DT-302"; ///< an NCCL call returned an error
inline constexpr std::string_view id_exchange =
    "TDIAG-DT-303"; ///< the NCCL unique id could not be exchanged
inline constexpr std::string_view plan_execution =
    "TDIAG-DT-304"; ///< a plan step cannot be executed
} // namespace tdiag::dtensor::validation_codes
