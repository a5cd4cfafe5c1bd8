// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/printable.hpp>

#include <fmt/format.h>

#include <iterator>

namespace tdiag {
namespace {

bool is_control(unsigned char byte) noexcept {
  return byte < 0x20 || byte == 0x7F;
}

bool is_continuation(char c) noexcept {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

void append_escaped(std::string& out, std::string_view text, bool keep_lines) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_control(byte) && !(keep_lines && (c == '\n' || c == '\t')))
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
    else
      out += c;
  }
}

} // namespace

std::string escape_controls(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  append_escaped(out, text, keep_lines);
  return out;
}

namespace {

std::string cut_escaped(std::string_view text, std::size_t max_bytes, bool keep_lines) {
  std::string out;
  if (text.size() <= max_bytes) {
    append_escaped(out, text, keep_lines);
    return out;
  }
  // Two thirds of the room for the start (the file or value), one third for the end (what is
  // wrong with it); both cuts fall on UTF-8 character boundaries.
  std::size_t head = max_bytes * 2 / 3;
  std::size_t tail = text.size() - (max_bytes - head);
  while (head > 0 && is_continuation(text[head]))
    --head;
  while (tail < text.size() && is_continuation(text[tail]))
    ++tail;
  append_escaped(out, text.substr(0, head), keep_lines);
  fmt::format_to(std::back_inserter(out), "...[{} bytes cut]...", tail - head);
  append_escaped(out, text.substr(tail), keep_lines);
  return out;
}

} // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  return cut_escaped(text, max_bytes, false);
}

std::string printable_lines(std::string_view text, std::size_t max_bytes) {
  return cut_escaped(text, max_bytes, true);
}

} // namespace tdiag
