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

// The length of the well-formed UTF-8 character at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const auto b0 = at(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF; // the second byte's range
  if (b0 < 0x80)
    return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF)
    n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    lo = b0 == 0xE0 ? 0xA0 : 0x80;
    hi = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    lo = b0 == 0xF0 ? 0x90 : 0x80;
    hi = b0 == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + n > text.size() || at(1) < lo || at(1) > hi)
    return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (!is_continuation(text[i + k]))
      return 0;
  return n;
}

// Control characters, and bytes that are not well-formed UTF-8 (a lone surrogate Python's
// pickle writes, Latin-1 text), become \xNN: a terminal, a CI log or a GitHub annotation gets
// valid UTF-8.
void append_escaped(std::string& out, std::string_view text, bool keep_lines) {
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    const auto n = utf8_length(text, i);
    if (n == 0 || (is_control(byte) && !(keep_lines && (c == '\n' || c == '\t')))) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
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
