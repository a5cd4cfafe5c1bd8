// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Finds where a value sits in JSON text, so that an error found after parsing (a wrong type, a
// wrong schema version) can still name a line and column. nlohmann-json 3.11 keeps no source
// positions, so the reader re-scans the text, which only happens on the error path. Internal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::detail {

struct text_position {
  std::size_t offset = 0; ///< 0-based byte offset
  std::size_t line = 1;   ///< 1-based
  std::size_t column = 1; ///< 1-based, in bytes
};

/// The line and column of byte `offset` (clamped to the text's size).
[[nodiscard]] text_position position_of(std::string_view text, std::size_t offset) noexcept;

/// The byte offset of the value at `path` (object member names and decimal array indices) in
/// the JSON document `text`. Where the path leaves the document, the offset of the deepest value
/// that exists; with duplicate member names, the last one (as the parser keeps the last).
/// Precondition: `text` is well-formed JSON.
[[nodiscard]] std::size_t locate_json_value(std::string_view text,
                                            const std::vector<std::string>& path);

} // namespace tdiag::detail
