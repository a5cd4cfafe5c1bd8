// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the pickle opcode table the reader consults (names for messages, and the opcodes that
// would import or call code, which the reader always refuses).
#pragma once

#include <cstdint>
#include <string_view>

namespace tdiag::trace::detail {

/// The opcode's name in messages ("BINUNICODE", "GLOBAL"); "unknown" for bytes that are none.
[[nodiscard]] std::string_view opcode_name(std::uint8_t op) noexcept;
/// True for opcodes that import or call code (GLOBAL, REDUCE, BUILD, INST, OBJ, ...).
[[nodiscard]] bool is_code_opcode(std::uint8_t op) noexcept;

} // namespace tdiag::trace::detail
