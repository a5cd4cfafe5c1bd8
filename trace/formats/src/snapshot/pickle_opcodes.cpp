// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "pickle_opcodes.hpp"

namespace tdiag::trace::detail {

namespace {

struct opcode_entry {
  std::uint8_t op;
  std::string_view name;
};

// Every opcode of pickle protocols 0-5, the ones we accept and the ones we refuse alike.
constexpr opcode_entry opcode_names[] = {
    {0x80, "PROTO"},
    {0x95, "FRAME"},
    {'.', "STOP"},
    {'N', "NONE"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {'J', "BININT"},
    {'K', "BININT1"},
    {'M', "BININT2"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {'G', "BINFLOAT"},
    {0x8c, "SHORT_BINUNICODE"},
    {'X', "BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {'U', "SHORT_BINSTRING"},
    {'T', "BINSTRING"},
    {'C', "SHORT_BINBYTES"},
    {'B', "BINBYTES"},
    {0x8e, "BINBYTES8"},
    {0x96, "BYTEARRAY8"},
    {'}', "EMPTY_DICT"},
    {']', "EMPTY_LIST"},
    {')', "EMPTY_TUPLE"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {'(', "MARK"},
    {'0', "POP"},
    {'1', "POP_MARK"},
    {'2', "DUP"},
    {'a', "APPEND"},
    {'e', "APPENDS"},
    {'l', "LIST"},
    {'d', "DICT"},
    {'s', "SETITEM"},
    {'u', "SETITEMS"},
    {'t', "TUPLE"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {'p', "PUT"},
    {'q', "BINPUT"},
    {'r', "LONG_BINPUT"},
    {'g', "GET"},
    {'h', "BINGET"},
    {'j', "LONG_BINGET"},
    {0x94, "MEMOIZE"},
    {'c', "GLOBAL"},
    {0x93, "STACK_GLOBAL"},
    {'R', "REDUCE"},
    {'b', "BUILD"},
    {'i', "INST"},
    {'o', "OBJ"},
    {0x81, "NEWOBJ"},
    {0x92, "NEWOBJ_EX"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {'P', "PERSID"},
    {'Q', "BINPERSID"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
    {'I', "INT"},
    {'L', "LONG"},
    {'F', "FLOAT"},
    {'S', "STRING"},
    {'V', "UNICODE"},
};

} // namespace

// Opcode names for messages ("" for a byte that is no opcode).
std::string_view opcode_name(std::uint8_t op) noexcept {
  for (const auto& e : opcode_names)
    if (e.op == op)
      return e.name;
  return "";
}

bool is_code_opcode(std::uint8_t op) noexcept {
  switch (op) {
  case 'c':
  case 0x93:
  case 'R':
  case 'b':
  case 'i':
  case 'o':
  case 0x81:
  case 0x92:
  case 0x82:
  case 0x83:
  case 0x84:
  case 'P':
  case 'Q':
  case 0x97:
  case 0x98:
    return true;
  default:
    return false;
  }
}

std::optional<std::uint64_t> wide_long_as_uint(const std::uint8_t* p, std::size_t n) noexcept {
  if ((p[n - 1] & 0x80) != 0)
    return std::nullopt; // negative
  for (std::size_t i = 8; i < n; ++i)
    if (p[i] != 0)
      return std::nullopt; // wider than 64 bits
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

} // namespace tdiag::trace::detail
