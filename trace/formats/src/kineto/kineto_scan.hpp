// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Byte scans of JSON text for the windowed traceEvents stream (private to kineto_stream.cpp):
// element cuts, strings and escapes, the top-level keys before and after the events.
#pragma once

#include <tensordiag/core/printable.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace tdiag::trace::detail::json_scan {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

inline bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The last `c` in [lo, hi), or npos. A plain loop, not memrchr: sanitizers check memrchr's whole
// range on every call, so a window of many '{' or ']' and no cut became quadratic under ASan.
inline std::size_t rfind_byte(const char* b, std::size_t lo, std::size_t hi, char c) {
  for (std::size_t i = hi; i > lo; --i)
    if (b[i - 1] == c)
      return i - 1;
  return npos;
}

// The comma of the last `}` ws `,` ws `{` in [lo, hi), or npos.
inline std::size_t find_cut(const char* b, std::size_t lo, std::size_t hi) {
  std::size_t i = hi;
  while (i > lo) {
    const std::size_t k = rfind_byte(b, lo, i, '{');
    if (k == npos)
      return npos;
    std::size_t j = k;
    while (j > lo && is_ws(b[j - 1]))
      --j;
    if (j > lo && b[j - 1] == ',') {
      std::size_t m = j - 1;
      while (m > lo && is_ws(b[m - 1]))
        --m;
      if (m > lo && b[m - 1] == '}')
        return j - 1;
    }
    i = k;
  }
  return npos;
}

// What a JSON value starting with `c` is, for messages.
inline std::string value_kind(char c) {
  switch (c) {
  case '"':
    return "a string";
  case '[':
    return "an array";
  case '{':
    return "an object";
  case 't':
  case 'f':
    return "a boolean";
  case 'n':
    return "null";
  default:
    if (c == '-' || (c >= '0' && c <= '9'))
      return "a number";
    return fmt::format("not JSON (byte {})", printable(std::string_view(&c, 1)));
  }
}

// Strings and escapes of a byte scan: step() is true while `c` belongs to a string, quotes
// included.
struct string_state {
  bool in_string = false, escape = false, opened = false, closed = false;
  bool step(char c) {
    opened = closed = false;
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false, closed = true;
      return true;
    }
    if (c == '"')
      in_string = true, opened = true;
    return in_string;
  }
};

// Finds the `[` of the top-level "traceEvents" (or of a bare top-level array) by a byte scan of
// the text before it (a few KiB of metadata).
struct prefix_scanner {
  int depth = 0;
  bool bare = false;
  string_state str;
  std::size_t string_start = 0;
  std::string_view last_string, pending_key;
  std::size_t not_an_array = npos; ///< a "traceEvents" value's index

  // Returns true at the events' `[`, and at the value of a top-level "traceEvents" that is not
  // an array (not_an_array says where).
  bool step(const char* b, std::size_t i) {
    const char c = b[i];
    if (depth == 1 && pending_key == "traceEvents" && !is_ws(c) && c != '[') {
      not_an_array = i;
      return true;
    }
    if (str.step(c)) {
      if (str.opened)
        string_start = i + 1;
      else if (str.closed && depth == 1)
        last_string = {b + string_start, i - string_start};
      return false;
    }
    switch (c) {
    case ':':
      if (depth == 1)
        pending_key = last_string;
      break;
    case ',':
      pending_key = {};
      break;
    case '[':
      if (depth == 0) {
        bare = true;
        return true;
      }
      if (depth == 1 && pending_key == "traceEvents")
        return true;
      ++depth;
      break;
    case '{':
      ++depth;
      break;
    case '}':
    case ']':
      --depth;
      break;
    default:
      break;
    }
    return false;
  }
};

// The top-level keys after the events, watched for a second "traceEvents" (its value would be
// lost: the first is the one streamed). Fed the bytes of each depth-1 string and then the
// structural bytes at depth 1.
struct key_watch {
  std::string text; // the last string's bytes, up to one past "traceEvents"'s length
  bool closed = false;
  void string_byte(char c, const string_state& str) {
    if (str.opened) {
      text.clear();
      closed = false;
    } else if (str.closed) {
      closed = true;
    } else if (text.size() < 12) {
      text.push_back(c);
    }
  }
  // True at the ':' after a "traceEvents" key.
  bool separator(char c) {
    const bool hit = c == ':' && closed && text == "traceEvents";
    if (!is_ws(c))
      closed = false;
    return hit;
  }
};

} // namespace tdiag::trace::detail::json_scan
