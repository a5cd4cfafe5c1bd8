// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the pickle opcode table the reader consults (names for messages, and the opcodes that
// would import or call code, which the reader always refuses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tdiag::trace::detail {

/// The opcode's name in messages ("BINUNICODE", "GLOBAL"); "unknown" for bytes that are none.
[[nodiscard]] std::string_view opcode_name(std::uint8_t op) noexcept;
/// True for opcodes that import or call code (GLOBAL, REDUCE, BUILD, INST, OBJ, ...).
[[nodiscard]] bool is_code_opcode(std::uint8_t op) noexcept;
/// A LONG1/LONG4 payload (`n` little-endian two's-complement bytes, n > 8) as an unsigned 64-bit
/// value; nullopt when it is negative or wider.
[[nodiscard]] std::optional<std::uint64_t> wide_long_as_uint(const std::uint8_t* p,
                                                             std::size_t n) noexcept;

} // namespace tdiag::trace::detail
