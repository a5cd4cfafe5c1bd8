// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Windowed parsing of `traceEvents`: the array is cut at element boundaries (`}` `,` `{`) into
// windows of a few MiB, and each window is parsed in place as a JSON array by simdjson On
// Demand (the separating comma is overwritten by `]` and the byte before the window by `[`).
// A cut that falls inside a string fails simdjson's first stage before any event is built, and
// a cut inside a nested value fails at the window's last element: either way the window is
// retried from the last complete element with more text. Errors in the last window (no
// artificial cut) are the input's own.
#include "kineto_stream.hpp"

#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>

namespace tdiag::trace::detail {
namespace {

namespace od = simdjson::ondemand;
constexpr std::size_t padding = simdjson::SIMDJSON_PADDING;
constexpr std::size_t npos = static_cast<std::size_t>(-1);

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

[[noreturn]] void fail(std::string_view source, std::size_t offset, int code, std::string message) {
  diagnostic d;
  d.code = fmt::format("TDIAG-TR-{:03}", code);
  d.title = "malformed Kineto trace";
  d.message = fmt::format("{}: byte offset {}: {}", source, offset, message);
  d.add_field("file", std::string(source));
  d.add_field("offset", static_cast<std::int64_t>(offset));
  d.hint = "expected the Chrome trace JSON written by torch.profiler / Kineto";
  throw input_error(std::move(d));
}

// A growable window over the text, with simdjson's padding after its capacity.
class text_window {
public:
  text_window(byte_source& src, std::size_t capacity) : src_(src) { resize(capacity); }
  [[nodiscard]] char* data() noexcept { return buf_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return len_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }
  [[nodiscard]] std::size_t base() const noexcept { return base_; }
  [[nodiscard]] bool eof() const noexcept { return eof_; }
  [[nodiscard]] std::size_t total() const noexcept { return base_ + len_; }

  void fill() {
    while (!eof_ && len_ < cap_) {
      const auto n = src_.read(buf_.get() + len_, cap_ - len_);
      if (n == 0)
        eof_ = true;
      len_ += n;
    }
  }
  void drop_front(std::size_t n) {
    std::memmove(buf_.get(), buf_.get() + n, len_ - n);
    len_ -= n;
    base_ += n;
  }
  void grow() { resize(cap_ * 2); }

private:
  void resize(std::size_t capacity) {
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity + padding);
    if (len_ != 0)
      std::memcpy(bigger.get(), buf_.get(), len_);
    std::memset(bigger.get() + capacity, 0, padding);
    buf_ = std::move(bigger);
    cap_ = capacity;
  }
  byte_source& src_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0, len_ = 0, base_ = 0;
  bool eof_ = false;
};

// The comma of the last `}` ws `,` ws `{` in [lo, hi), or npos.
std::size_t find_cut(const char* b, std::size_t lo, std::size_t hi) {
  std::size_t i = hi;
  while (i > lo) {
    const void* p = memrchr(b + lo, '{', i - lo);
    if (p == nullptr)
      return npos;
    const auto k = static_cast<std::size_t>(static_cast<const char*>(p) - b);
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

// Finds the `[` of the top-level "traceEvents" (or of a bare top-level array) by a byte scan of
// the text before it (a few KiB of metadata).
struct prefix_scanner {
  int depth = 0;
  bool in_string = false, escape = false, bare = false;
  std::size_t string_start = 0;
  std::string_view last_string, pending_key;

  // Returns true at the events' `[`.
  bool step(const char* b, std::size_t i) {
    const char c = b[i];
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"') {
        in_string = false;
        if (depth == 1)
          last_string = {b + string_start, i - string_start};
      }
      return false;
    }
    switch (c) {
    case '"':
      in_string = true;
      string_start = i + 1;
      break;
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

} // namespace

std::size_t stream_trace_events(byte_source& src, std::string_view source,
                                const stream_callbacks& callbacks, std::size_t window) {
  text_window w(src, std::max<std::size_t>(window, 4096));
  w.fill();

  // Phase 1: the metadata before the events. The scanner keeps views into the window, so the
  // window only grows (never shifts) here.
  prefix_scanner scan;
  std::size_t i = 0;
  while (true) {
    if (i == w.size()) {
      if (w.eof())
        fail(source, w.total(), 123, "no \"traceEvents\" array: not a Chrome/Kineto trace");
      const auto old = w.data();
      w.grow();
      w.fill();
      // Re-point the scanner's views after the move.
      const auto shift = [&](std::string_view v) {
        return v.empty() ? v : std::string_view(w.data() + (v.data() - old), v.size());
      };
      scan.last_string = shift(scan.last_string);
      scan.pending_key = shift(scan.pending_key);
      continue;
    }
    if (scan.step(w.data(), i))
      break;
    ++i;
  }
  std::string prefix(w.data(), i + 1); // ends with '['
  std::size_t pos = i + 1;

  // Phase 2: the events, window by window.
  od::parser parser;
  od::document doc;
  od::array events;
  std::size_t array_end = npos; // index in the window just after the closing ']'
  const std::size_t target = w.capacity() / 2;
  // Stage 1 of simdjson over b[begin, close] as a root array (b[close] is a ']').
  const auto open = [&](std::size_t begin, std::size_t close) {
    char* b = w.data();
    auto e = parser.iterate(b + begin, close + 1 - begin, w.capacity() + padding - begin).get(doc);
    return e != simdjson::SUCCESS ? e : doc.get_array().get(events);
  };
  // The same with a ']' put at `cut` for the duration of the check.
  const auto open_cut = [&](std::size_t begin, std::size_t cut) {
    char* b = w.data();
    const char saved = b[cut];
    b[cut] = ']';
    const auto e = open(begin, cut);
    b[cut] = saved;
    return e;
  };
  while (true) {
    while (pos < w.size() && (is_ws(w.data()[pos]) || w.data()[pos] == ','))
      ++pos;
    if (pos == w.size() && w.eof())
      fail(source, w.total(), 122, "the text ends inside the traceEvents array (truncated file?)");
    if (pos < w.size() && w.data()[pos] == ']') {
      array_end = pos + 1;
      break;
    }
    if (!w.eof() && w.size() - pos < target) {
      w.drop_front(pos - 1); // keep one byte before the window for its '['
      pos = 1;
      w.fill();
      continue;
    }
    char* b = w.data();
    const std::size_t begin = pos - 1;
    const char saved_open = b[begin];
    b[begin] = '[';
    bool last = w.eof();
    std::size_t end = npos;
    simdjson::error_code code = simdjson::SUCCESS;
    if (last) {
      // The last window ends at the array's own ']' (simdjson checks a root array's last
      // byte). Candidates: a ']' after a '}' and before a ',' or '}' of the top level.
      std::size_t hi = w.size();
      for (int tries = 0; tries < 8;) {
        const void* p = hi > pos ? memrchr(b + pos, ']', hi - pos) : nullptr;
        if (p == nullptr)
          break;
        const auto close = static_cast<std::size_t>(static_cast<const char*>(p) - b);
        hi = close;
        std::size_t before = close, after = close + 1;
        while (before > pos && is_ws(b[before - 1]))
          --before;
        while (after < w.size() && is_ws(b[after]))
          ++after;
        if (before == pos || b[before - 1] != '}')
          continue;
        if (after < w.size() && b[after] != ',' && b[after] != '}')
          continue;
        ++tries;
        const auto e = open(begin, close);
        if (code == simdjson::SUCCESS)
          code = e; // report the first failure
        if (e == simdjson::SUCCESS) {
          end = close;
          break;
        }
      }
      if (end == npos) {
        // The input is damaged in this window. Bisect for the longest run of elements that
        // passes, parse it, and let the next round report the first bad element's offset.
        std::size_t lo = pos, hi2 = w.size(), good_cut = npos;
        while (hi2 - lo > 16) {
          const auto mid = lo + (hi2 - lo) / 2;
          const auto cut = find_cut(b, pos, mid);
          if (cut == npos) {
            lo = mid;
            continue;
          }
          if (open_cut(begin, cut) == simdjson::SUCCESS) {
            good_cut = std::max(good_cut == npos ? 0 : good_cut, cut);
            lo = mid;
          } else {
            hi2 = mid;
          }
        }
        if (good_cut == npos) {
          b[begin] = saved_open;
          fail(source, w.base() + pos, 121,
               simdjson::error_message(
                   code == simdjson::SUCCESS ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT : code));
        }
        last = false;
        end = good_cut;
      }
    } else {
      end = find_cut(b, pos, w.size());
      if (end == npos) { // one element bigger than the window
        b[begin] = saved_open;
        w.grow();
        w.fill();
        continue;
      }
    }
    const char saved_close = b[end];
    b[end] = ']';
    std::size_t good = pos; // just after the last complete element
    bool failed = false;
    std::size_t error_at = pos;
    const auto location = [&](std::size_t fallback) {
      const char* at = nullptr;
      if (doc.current_location().get(at) == simdjson::SUCCESS && at >= b)
        return static_cast<std::size_t>(at - b);
      return fallback;
    };
    code = open(begin, end);
    if (code != simdjson::SUCCESS) {
      failed = true; // e.g. a cut inside a string
    } else {
      try {
        for (auto item : events) {
          od::object obj;
          json_check(item.get_object().get(obj));
          callbacks.on_event(obj);
          good = location(end + 1);
        }
        if (last)
          array_end = end + 1;
      } catch (const json_failure& f) {
        failed = true;
        code = f.code;
        error_at = location(good);
      }
    }
    b[begin] = saved_open;
    b[end] = saved_close;
    if (!failed) {
      if (last)
        break;
      pos = end;
      continue;
    }
    if (last)
      fail(source, w.base() + error_at, 121, simdjson::error_message(code));
    if (good > pos) {
      pos = good; // keep what parsed; the rest goes into the next window
      continue;
    }
    // No element parsed: with nothing left to read, the fault is the input's.
    if (w.eof())
      fail(source, w.base() + error_at, 121, simdjson::error_message(code));
    w.grow(); // a bad cut before any complete element: retry with more text
    w.fill();
  }

  // Phase 3: the metadata after the events; parse it together with the prefix.
  if (!scan.bare && callbacks.on_top_level) {
    std::string tail = prefix + "]";
    while (true) {
      tail.append(w.data() + array_end, w.size() - array_end);
      w.drop_front(w.size());
      array_end = 0;
      if (w.eof())
        break;
      w.fill();
    }
    simdjson::padded_string padded(tail);
    od::document top_doc;
    try {
      json_check(parser.iterate(padded).get(top_doc));
      od::object top;
      json_check(top_doc.get_object().get(top));
      callbacks.on_top_level(top);
    } catch (const json_failure& f) {
      fail(source, w.total() - (tail.size() - prefix.size() - 1), 121,
           fmt::format("{} (in the metadata around traceEvents)", simdjson::error_message(f.code)));
    }
  }
  return w.total();
}

} // namespace tdiag::trace::detail
