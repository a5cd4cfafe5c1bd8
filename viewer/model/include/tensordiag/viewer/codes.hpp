// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of the viewer's stable diagnostic codes, TDIAG-VIEW-NNN.
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::view::codes {
inline constexpr std::string_view no_window = "TDIAG-VIEW-001";
inline constexpr std::string_view one_trace = "TDIAG-VIEW-002";
inline constexpr std::string_view cannot_open = "TDIAG-VIEW-003";

/// Every code of the viewer.
inline constexpr code_entry table[] = {
    {no_window, "cannot open a window"},
    {one_trace, "one trace at a time"},
    {cannot_open, "cannot open the file"},
};
} // namespace tdiag::view::codes
