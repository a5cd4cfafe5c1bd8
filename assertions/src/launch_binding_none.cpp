// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// launch_binding.hpp in a build without CUDA and CUPTI: binding is never available.
#include "launch_binding.hpp"

namespace tdiag::assertions::detail {

std::string set_cupti_binding(bool on) {
  return on ? "this tensordiag was built without CUDA and CUPTI (TDIAG_WITH_CUPTI=OFF)"
            : std::string();
}

bool cupti_binding_active() noexcept {
  return false;
}

std::optional<bound_launch> find_bound_launch(int /*device*/, std::uint64_t /*grid_id*/) {
  return std::nullopt;
}

} // namespace tdiag::assertions::detail
