// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The codes of numerical validation (sim/), the communicators (comm/) and the runtime checks on
// real ranks (runtime/), TDIAG-DT-1NN..3NN, under their former namespace name; they are entries
// of dtensor_checks' one registry, codes.hpp.
#pragma once

#include <tensordiag/dtensor_checks/codes.hpp>

namespace tdiag::dtensor {
/// The validation codes live in the one registry, codes.hpp.
namespace validation_codes = codes;
} // namespace tdiag::dtensor
