// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// UTF-8 checks shared by the writers: every format we emit (JSON, XML, SARIF) must be valid
// UTF-8, but diagnostic strings can carry arbitrary bytes (a mangled kernel name, a path).
// Internal: not part of the API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tdiag::detail {

inline constexpr char32_t replacement_character = U'\uFFFD';

/// Decodes one code point of `text` starting at `pos` and advances `pos` past it. An invalid or
/// truncated sequence (overlong forms, surrogates, values above U+10FFFF) decodes as
/// U+FFFD and consumes exactly one byte. Precondition: pos < text.size().
[[nodiscard]] char32_t decode_utf8(std::string_view text, std::size_t& pos) noexcept;

/// Appends `cp` encoded as UTF-8. Precondition: cp is a Unicode scalar value.
void append_utf8(std::string& out, char32_t cp);

/// True when `text` is well-formed UTF-8.
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

/// `text` with every invalid byte replaced by U+FFFD.
[[nodiscard]] std::string to_valid_utf8(std::string_view text);

} // namespace tdiag::detail
