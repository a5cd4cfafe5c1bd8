// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of capture's stable diagnostic codes, TDIAG-CAPTURE-NNN: 00N the CUPTI session,
// 01N the tracing pool, 02N `tdiag capture` (which finds the library at run time, so these
// constants are header-only and need no CUDA).
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::capture::codes {
inline constexpr std::string_view cupti_failed = "TDIAG-CAPTURE-001";
inline constexpr std::string_view pool_alloc_failed = "TDIAG-CAPTURE-010";
inline constexpr std::string_view pool_free_failed = "TDIAG-CAPTURE-011";
inline constexpr std::string_view no_driver = "TDIAG-CAPTURE-012";
inline constexpr std::string_view library_not_found = "TDIAG-CAPTURE-020";
inline constexpr std::string_view cannot_start = "TDIAG-CAPTURE-021";
inline constexpr std::string_view no_application = "TDIAG-CAPTURE-022";
inline constexpr std::string_view bad_range = "TDIAG-CAPTURE-023";

/// Every code of capture.
inline constexpr code_entry table[] = {
    {cupti_failed, "CUPTI call failed"},
    {pool_alloc_failed, "stream-ordered allocation failed"},
    {pool_free_failed, "stream-ordered free failed"},
    {no_driver, "no CUDA driver"},
    {library_not_found, "capture library not found"},
    {cannot_start, "cannot start the application"},
    {no_application, "no application to run"},
    {bad_range, "bad capture range"},
};
} // namespace tdiag::capture::codes
