// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "pickle_opcodes.hpp"

namespace tdiag::trace::detail {

// Opcode names for messages; the ones we accept and the ones we refuse alike.
std::string_view opcode_name(std::uint8_t op) noexcept {
  switch (op) {
  case 0x80:
    return "PROTO";
  case 0x95:
    return "FRAME";
  case '.':
    return "STOP";
  case 'N':
    return "NONE";
  case 0x88:
    return "NEWTRUE";
  case 0x89:
    return "NEWFALSE";
  case 'J':
    return "BININT";
  case 'K':
    return "BININT1";
  case 'M':
    return "BININT2";
  case 0x8a:
    return "LONG1";
  case 0x8b:
    return "LONG4";
  case 'G':
    return "BINFLOAT";
  case 0x8c:
    return "SHORT_BINUNICODE";
  case 'X':
    return "BINUNICODE";
  case 0x8d:
    return "BINUNICODE8";
  case 'U':
    return "SHORT_BINSTRING";
  case 'T':
    return "BINSTRING";
  case 'C':
    return "SHORT_BINBYTES";
  case 'B':
    return "BINBYTES";
  case 0x8e:
    return "BINBYTES8";
  case 0x96:
    return "BYTEARRAY8";
  case '}':
    return "EMPTY_DICT";
  case ']':
    return "EMPTY_LIST";
  case ')':
    return "EMPTY_TUPLE";
  case 0x8f:
    return "EMPTY_SET";
  case 0x90:
    return "ADDITEMS";
  case 0x91:
    return "FROZENSET";
  case '(':
    return "MARK";
  case '0':
    return "POP";
  case '1':
    return "POP_MARK";
  case '2':
    return "DUP";
  case 'a':
    return "APPEND";
  case 'e':
    return "APPENDS";
  case 'l':
    return "LIST";
  case 'd':
    return "DICT";
  case 's':
    return "SETITEM";
  case 'u':
    return "SETITEMS";
  case 't':
    return "TUPLE";
  case 0x85:
    return "TUPLE1";
  case 0x86:
    return "TUPLE2";
  case 0x87:
    return "TUPLE3";
  case 'p':
    return "PUT";
  case 'q':
    return "BINPUT";
  case 'r':
    return "LONG_BINPUT";
  case 'g':
    return "GET";
  case 'h':
    return "BINGET";
  case 'j':
    return "LONG_BINGET";
  case 0x94:
    return "MEMOIZE";
  case 'c':
    return "GLOBAL";
  case 0x93:
    return "STACK_GLOBAL";
  case 'R':
    return "REDUCE";
  case 'b':
    return "BUILD";
  case 'i':
    return "INST";
  case 'o':
    return "OBJ";
  case 0x81:
    return "NEWOBJ";
  case 0x92:
    return "NEWOBJ_EX";
  case 0x82:
    return "EXT1";
  case 0x83:
    return "EXT2";
  case 0x84:
    return "EXT4";
  case 'P':
    return "PERSID";
  case 'Q':
    return "BINPERSID";
  case 0x97:
    return "NEXT_BUFFER";
  case 0x98:
    return "READONLY_BUFFER";
  case 'I':
    return "INT";
  case 'L':
    return "LONG";
  case 'F':
    return "FLOAT";
  case 'S':
    return "STRING";
  case 'V':
    return "UNICODE";
  default:
    return "";
  }
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

} // namespace tdiag::trace::detail
