// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_locate.hpp>
#include <tensordiag/core/detail/utf8.hpp>

#include <charconv>

namespace tdiag::detail {
namespace {

class scanner {
public:
  explicit scanner(std::string_view text) : text_(text) {}

  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  void seek(std::size_t pos) noexcept { pos_ = pos; }
  [[nodiscard]] char peek() const noexcept { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void advance() noexcept { ++pos_; }

  void skip_space() noexcept {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  // Reads a string literal at pos_ and returns its decoded value.
  std::string read_string() {
    std::string value;
    ++pos_; // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] != '\\') {
        value += text_[pos_++];
        continue;
      }
      ++pos_;
      const char escape = peek();
      ++pos_;
      switch (escape) {
      case 'b':
        value += '\b';
        break;
      case 'f':
        value += '\f';
        break;
      case 'n':
        value += '\n';
        break;
      case 'r':
        value += '\r';
        break;
      case 't':
        value += '\t';
        break;
      case 'u': {
        char32_t cp = read_hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
          pos_ += 2;
          const char32_t low = read_hex4();
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(value, cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? U'\uFFFD' : cp);
        break;
      }
      default:
        value += escape;
        break; // \" \\ \/
      }
    }
    ++pos_; // closing quote
    return value;
  }

  // Skips one complete value (without recursion: depth is only counted).
  void skip_value() {
    std::size_t depth = 0;
    do {
      skip_space();
      const char c = peek();
      if (c == '"') {
        (void)read_string();
      } else if (c == '{' || c == '[') {
        ++depth, ++pos_;
      } else if (c == '}' || c == ']') {
        if (depth > 0)
          --depth;
        ++pos_;
      } else if (c == ',' || c == ':') {
        ++pos_;
        continue; // inside a container: keep going
      } else {
        while (pos_ < text_.size() &&
               std::string_view(",}] \t\r\n").find(text_[pos_]) == std::string_view::npos)
          ++pos_;
      }
    } while (depth > 0 && pos_ < text_.size());
  }

private:
  char32_t read_hex4() {
    unsigned value = 0;
    const auto digits = text_.substr(pos_, 4);
    std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    pos_ += digits.size();
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

} // namespace

text_position position_of(std::string_view text, std::size_t offset) noexcept {
  text_position p;
  p.offset = offset < text.size() ? offset : text.size();
  for (std::size_t i = 0; i < p.offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::size_t locate_json_value(std::string_view text, const std::vector<std::string>& path) {
  scanner s(text);
  s.skip_space();
  for (const auto& token : path) {
    const std::size_t container = s.pos();
    std::size_t found = std::string::npos;
    if (s.peek() == '{') {
      s.advance();
      for (;;) {
        s.skip_space();
        if (s.peek() != '"')
          break;
        const std::string name = s.read_string();
        s.skip_space();
        s.advance(); // ':'
        s.skip_space();
        if (name == token)
          found = s.pos();
        s.skip_value();
        s.skip_space();
        if (s.peek() != ',')
          break;
        s.advance();
      }
    } else if (s.peek() == '[') {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (ec != std::errc{} || end != token.data() + token.size())
        return container;
      s.advance();
      for (std::size_t i = 0;; ++i) {
        s.skip_space();
        if (s.peek() == ']' || s.peek() == '\0')
          break;
        if (i == index) {
          found = s.pos();
          break;
        }
        s.skip_value();
        s.skip_space();
        if (s.peek() != ',')
          break;
        s.advance();
      }
    }
    if (found == std::string::npos)
      return container;
    s.seek(found);
  }
  return s.pos();
}

} // namespace tdiag::detail
