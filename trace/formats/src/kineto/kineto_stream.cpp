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
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "kineto_scan.hpp"

namespace tdiag::trace::detail {
namespace {

using namespace json_scan;
namespace od = simdjson::ondemand;
constexpr std::size_t padding = simdjson::SIMDJSON_PADDING;

[[noreturn]] void fail(std::string_view source, std::size_t offset, int code, std::string message) {
  throw_input_error(fmt::format("TDIAG-TR-{:03}", code), "malformed Kineto trace",
                    fmt::format("{}: byte offset {}: {}", source, offset, message),
                    "expected the Chrome trace JSON written by torch.profiler / Kineto",
                    {{"file", std::string(source)}, {"offset", static_cast<std::int64_t>(offset)}});
}

// A growable window over the text, with simdjson's padding after its capacity. Growing is
// checked against the memory budget: one huge string must end in one line, not bad_alloc.
class text_window {
public:
  text_window(byte_source& src, std::string_view source, std::size_t capacity)
      : src_(src), source_(source) {
    resize(capacity);
  }
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
  /// Doubles the window and fills it. Throws TDIAG-CORE-006 past the memory budget.
  void grow() {
    if (cap_ > std::numeric_limits<std::size_t>::max() / 4)
      check_memory_budget(source_, "a JSON value without end",
                          std::numeric_limits<std::uint64_t>::max());
    check_memory_budget(
        source_,
        fmt::format("a JSON value of more than {} (byte offset {})", format_bytes(cap_), base_),
        std::uint64_t{cap_} * 2 + padding);
    resize(cap_ * 2);
    fill();
  }

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
  std::string_view source_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0, len_ = 0, base_ = 0;
  bool eof_ = false;
};

// The three phases of a stream: the metadata before traceEvents, the events window by window,
// the metadata after them (and nothing but white space after the top-level value).
class event_stream {
public:
  event_stream(byte_source& src, std::string_view source, const stream_callbacks& callbacks,
               std::size_t window)
      : source_(source), callbacks_(callbacks), w_(src, source, window) {
    w_.fill();
    // A UTF-8 byte order mark (editors on Windows write one) is not JSON: passed over, the byte
    // offsets stay the file's.
    if (w_.size() >= 3 && std::memcmp(w_.data(), "\xEF\xBB\xBF", 3) == 0)
      w_.drop_front(3);
  }

  std::size_t run() {
    const std::size_t events_at = find_events();
    read_events(events_at);
    read_suffix();
    return w_.total();
  }

private:
  // Phase 1. The scanner keeps views into the window, so the window only grows (never shifts)
  // here. Returns the index just after the events' '['; keeps the text up to it in prefix_.
  std::size_t find_events() {
    std::size_t i = 0;
    while (true) {
      if (i == w_.size()) {
        if (w_.eof())
          fail(source_, w_.total(), 123, "no \"traceEvents\" array: not a Chrome/Kineto trace");
        const auto old = w_.data();
        w_.grow();
        // Re-point the scanner's views after the move.
        const auto shift = [&](std::string_view v) {
          return v.empty() ? v : std::string_view(w_.data() + (v.data() - old), v.size());
        };
        scan_.last_string = shift(scan_.last_string);
        scan_.pending_key = shift(scan_.pending_key);
        continue;
      }
      if (scan_.step(w_.data(), i))
        break;
      ++i;
    }
    if (scan_.not_an_array == i)
      fail(source_, w_.base() + i, 123,
           fmt::format("\"traceEvents\" is {}, not an array of events", value_kind(w_.data()[i])));
    prefix_.assign(w_.data(), i + 1); // ends with '['
    target_ = w_.capacity() / 2;
    return i + 1;
  }

  // Stage 1 of simdjson over b[begin, close] as a root array (b[close] is a ']').
  simdjson::error_code open(std::size_t begin, std::size_t close) {
    char* b = w_.data();
    auto e =
        parser_.iterate(b + begin, close + 1 - begin, w_.capacity() + padding - begin).get(doc_);
    return e != simdjson::SUCCESS ? e : doc_.get_array().get(events_);
  }
  // The same with a ']' put at `cut` for the duration of the check.
  simdjson::error_code open_cut(std::size_t begin, std::size_t cut) {
    char* b = w_.data();
    const char saved = b[cut];
    b[cut] = ']';
    const auto e = open(begin, cut);
    b[cut] = saved;
    return e;
  }

  // The last window ends at the array's own ']' (simdjson checks a root array's last byte).
  // Candidates: a ']' after a '}' and, in an object, before a ',' or '}' of the top level.
  // Returns npos when none of the last few parses; `code` is then the first failure.
  std::size_t last_close(std::size_t pos, std::size_t begin, simdjson::error_code& code) {
    const char* b = w_.data();
    std::size_t hi = w_.size();
    for (int tries = 0; tries < 8;) {
      const std::size_t close = rfind_byte(b, pos, hi, ']');
      if (close == npos)
        break;
      hi = close;
      std::size_t before = close, after = close + 1;
      while (before > pos && is_ws(b[before - 1]))
        --before;
      while (after < w_.size() && is_ws(b[after]))
        ++after;
      if (before == pos || b[before - 1] != '}')
        continue;
      // After a bare array anything may follow here: read_suffix() refuses it by name.
      if (!scan_.bare && after < w_.size() && b[after] != ',' && b[after] != '}')
        continue;
      ++tries;
      const auto e = open(begin, close);
      if (code == simdjson::SUCCESS)
        code = e; // report the first failure
      if (e == simdjson::SUCCESS)
        return close;
    }
    return npos;
  }

  // The input is damaged in the last window. Bisects for the longest run of elements that
  // passes (so the next round reports the first bad element's offset); npos when none does.
  std::size_t longest_good_run(std::size_t pos, std::size_t begin) {
    const char* b = w_.data();
    std::size_t lo = pos, hi = w_.size(), good_cut = npos;
    while (hi - lo > 16) {
      const auto mid = lo + (hi - lo) / 2;
      const auto cut = find_cut(b, pos, mid);
      if (cut == npos) {
        lo = mid;
        continue;
      }
      if (open_cut(begin, cut) == simdjson::SUCCESS) {
        good_cut = std::max(good_cut == npos ? 0 : good_cut, cut);
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return good_cut;
  }

  // No run of whole elements parses and the last one is not followed by the array's ']': the
  // comma after the first element, so that it is parsed alone (and what follows it is named
  // next round). Fails with what is after it when that is neither ',' nor ']'.
  template <typename Restore>
  std::size_t after_first_element(std::size_t pos, simdjson::error_code code,
                                  const Restore& restore) {
    const char* b = w_.data();
    string_state str;
    std::string open; // the brackets the element has open
    std::size_t i = pos;
    for (; i < w_.size(); ++i) {
      const char c = b[i];
      if (str.step(c))
        continue;
      if (c == '{' || c == '[') {
        open.push_back(c);
      } else if (c == '}' || c == ']') {
        if (open.back() != (c == '}' ? '{' : '[')) {
          restore();
          fail(source_, w_.base() + i, 121,
               fmt::format("'{}' closes a '{}' in traceEvents[{}]", c, open.back(), handed_));
        }
        open.pop_back();
        if (open.empty())
          break;
      }
    }
    std::size_t k = i + 1;
    while (k < w_.size() && is_ws(b[k]))
      ++k;
    if (i < w_.size() && k < w_.size() && b[k] == ',')
      return k;
    restore();
    if (i < w_.size() && k < w_.size() && b[k] != ']')
      fail(source_, w_.base() + k, 121,
           fmt::format("{} after traceEvents[{}] where ',' or ']' belongs",
                       printable(std::string_view(b + k, 1)), handed_));
    fail(source_, w_.base() + pos, 121,
         simdjson::error_message(code == simdjson::SUCCESS ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT
                                                           : code));
  }

  struct window_result {
    bool failed = false;
    simdjson::error_code code = simdjson::SUCCESS;
    std::size_t good = 0;     ///< just after the last complete element
    std::size_t error_at = 0; ///< where the failure is, in the window
    /// Just after the array's own ']' when it closed before the window's end (a second
    /// document or more top-level keys follow); npos otherwise.
    std::size_t closed_at = npos;
  };

  // Hands every element of b[begin + 1, end) to on_event, b[end] standing in for a ']'.
  window_result parse_window(std::size_t pos, std::size_t begin, std::size_t end) {
    char* b = w_.data();
    const char saved_close = b[end];
    b[end] = ']';
    window_result r;
    r.good = r.error_at = pos;
    const auto location = [&](std::size_t fallback) {
      const char* at = nullptr;
      if (doc_.current_location().get(at) == simdjson::SUCCESS && at >= b)
        return static_cast<std::size_t>(at - b);
      return fallback;
    };
    r.code = open(begin, end);
    if (r.code != simdjson::SUCCESS) {
      r.failed = true; // e.g. a cut inside a string
    } else {
      try {
        for (auto item : events_) {
          od::object obj;
          json_check(item.get_object().get(obj));
          callbacks_.on_event(obj, w_.base() + r.good);
          ++handed_;
          r.good = location(end + 1);
        }
        // simdjson stops at the array's own ']': anything after it in the window is not an
        // event, and must reach read_suffix (never be skipped as the rest of the window).
        if (const char* at = nullptr; doc_.current_location().get(at) == simdjson::SUCCESS &&
                                      at >= b && static_cast<std::size_t>(at - b) < end) {
          std::size_t k = static_cast<std::size_t>(at - b);
          while (k > pos && b[k - 1] != ']')
            --k;
          r.closed_at = k;
        }
      } catch (const json_failure& f) {
        r.failed = true;
        r.code = f.code;
        r.error_at = location(r.good);
      }
    }
    b[end] = saved_close;
    return r;
  }

  // Phase 2: the events, window by window, from `pos` (just after the '['). Leaves
  // array_end_ just after the closing ']'.
  void read_events(std::size_t pos) {
    while (true) {
      while (pos < w_.size() && (is_ws(w_.data()[pos]) || w_.data()[pos] == ','))
        ++pos;
      if (pos == w_.size() && w_.eof())
        fail(source_, w_.total(), 122,
             "the text ends inside the traceEvents array (truncated file?)");
      if (pos < w_.size() && w_.data()[pos] == ']') {
        array_end_ = pos + 1;
        return;
      }
      if (pos < w_.size() && w_.data()[pos] != '{')
        fail(source_, w_.base() + pos, 121,
             fmt::format("traceEvents[{}] is {}, not an event object", handed_,
                         value_kind(w_.data()[pos])));
      if (!w_.eof() && w_.size() - pos < target_) {
        w_.drop_front(pos - 1); // keep one byte before the window for its '['
        pos = 1;
        w_.fill();
        continue;
      }
      char* b = w_.data();
      const std::size_t begin = pos - 1;
      const char saved_open = b[begin];
      b[begin] = '[';
      const auto restore = [&] { w_.data()[begin] = saved_open; };
      bool last = w_.eof();
      std::size_t end = npos;
      simdjson::error_code code = simdjson::SUCCESS;
      if (last) {
        end = last_close(pos, begin, code);
        if (end == npos) {
          end = longest_good_run(pos, begin);
          if (end == npos)
            end = after_first_element(pos, code, restore);
          last = false;
        }
      } else {
        end = find_cut(b, pos, w_.size());
        if (end == npos) { // one element bigger than the window
          restore();
          w_.grow();
          continue;
        }
      }
      const auto r = parse_window(pos, begin, end);
      restore();
      if (!r.failed && r.closed_at != npos) {
        array_end_ = r.closed_at;
        return;
      }
      if (!r.failed) {
        if (last) {
          array_end_ = end + 1;
          return;
        }
        pos = end;
        continue;
      }
      if (last)
        fail(source_, w_.base() + r.error_at, 121, simdjson::error_message(r.code));
      if (r.good > pos) {
        pos = r.good; // keep what parsed; the rest goes into the next window
        continue;
      }
      // No element parsed: with nothing left to read, the fault is the input's.
      if (w_.eof())
        fail(source_, w_.base() + r.error_at, 121, simdjson::error_message(r.code));
      w_.grow(); // a bad cut before any complete element: retry with more text
    }
  }

  // Anything but white space after the top-level value: a second JSON document (two traces
  // concatenated: only the first would be read) or trailing bytes.
  [[noreturn]] void fail_trailing(std::size_t i) {
    const char c = w_.data()[i];
    if (c == '{' || c == '[')
      fail(source_, w_.base() + i, 121,
           "trailing content after the top-level JSON value: a second JSON document begins "
           "here (two traces concatenated? which one to read is ambiguous)");
    fail(source_, w_.base() + i, 121,
         fmt::format(
             "trailing content after the top-level JSON value (starting {})",
             printable(std::string_view(w_.data() + i, std::min<std::size_t>(16, w_.size() - i)))));
  }

  // Phase 3: after the events' ']', the rest of the top-level object (kept, within the memory
  // budget, and parsed with the prefix) and then only white space to the end of the input: a
  // second document or trailing bytes are refused, never ignored.
  void read_suffix() {
    std::string tail = prefix_ + "]";
    const std::size_t kept_from = tail.size();
    int depth = scan_.bare ? 0 : 1; // the events' '[' was never counted
    string_state str;
    key_watch key;
    std::size_t i = array_end_;
    while (true) {
      for (; i < w_.size(); ++i) {
        const char c = w_.data()[i];
        if (depth == 0) {
          if (!is_ws(c))
            fail_trailing(i);
          continue;
        }
        tail.push_back(c);
        if (str.step(c)) {
          if (depth == 1)
            key.string_byte(c, str);
          continue;
        }
        if (depth == 1 && key.separator(c))
          fail(source_, w_.base() + i, 121,
               "\"traceEvents\" appears twice in the top-level object: which one holds the "
               "events is ambiguous");
        if (c == '{' || c == '[')
          ++depth;
        else if (c == '}' || c == ']')
          --depth;
      }
      if (w_.eof())
        break;
      if (depth != 0)
        check_memory_budget(source_, "the metadata after traceEvents", tail.size());
      w_.drop_front(w_.size());
      i = 0;
      w_.fill();
    }
    if (depth != 0)
      fail(source_, w_.total(), 122, "the text ends inside the top-level object (truncated file?)");
    if (scan_.bare || !callbacks_.on_top_level)
      return;
    simdjson::padded_string padded(tail);
    od::document top_doc;
    try {
      json_check(parser_.iterate(padded).get(top_doc));
      od::object top;
      json_check(top_doc.get_object().get(top));
      callbacks_.on_top_level(top);
    } catch (const json_failure& f) {
      fail(source_, w_.total() - (tail.size() - kept_from), 121,
           fmt::format("{} (in the metadata around traceEvents)", simdjson::error_message(f.code)));
    }
  }

  std::string_view source_;
  const stream_callbacks& callbacks_;
  text_window w_;
  prefix_scanner scan_;
  std::string prefix_;
  std::size_t target_ = 0;
  std::size_t array_end_ = npos; // index in the window just after the closing ']'
  std::size_t handed_ = 0;       // events passed to on_event so far
  od::parser parser_;
  od::document doc_;
  od::array events_;
};

} // namespace

std::size_t stream_trace_events(byte_source& src, std::string_view source,
                                const stream_callbacks& callbacks, std::size_t window) {
  return event_stream(src, source, callbacks, std::max<std::size_t>(window, 4096)).run();
}

} // namespace tdiag::trace::detail
