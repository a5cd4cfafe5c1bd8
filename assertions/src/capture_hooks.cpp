// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "capture_hooks.hpp"

#include <dlfcn.h>

namespace tdiag::assertions::detail {

capture_hooks& current_capture_hooks() noexcept {
  static capture_hooks hooks;
  return hooks;
}

void refresh_capture_hooks() noexcept {
  auto& hooks = current_capture_hooks();
  hooks.launch.store(
      reinterpret_cast<capture_launch_fn>(dlsym(RTLD_DEFAULT, "tdiag_capture_record_launch")),
      std::memory_order_release);
  hooks.assertion.store(
      reinterpret_cast<capture_assertion_fn>(dlsym(RTLD_DEFAULT, "tdiag_capture_record_assertion")),
      std::memory_order_release);
}

} // namespace tdiag::assertions::detail
