// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What a capture range is, in text: `tdiag capture --range ...` and TDIAG_CAPTURE_RANGES (';'
// between ranges). Header-only and CUDA-free: the CLI checks a range before it starts the
// application, the injected library parses the same text; range_gate (capture_range.hpp) runs it.
//
//   cuda-profiler-api      between cudaProfilerStart/cuProfilerStart and the matching Stop
//   nvtx:NAME              inside NVTX ranges called NAME (push/pop and start/end, any domain)
//   launches:A:B           kernel launches A to B-1 of the process, counted from 0 (B empty: on)
//   time:DELAY:DURATION    from DELAY seconds after capture starts, for DURATION (empty: on)
#pragma once

#include <tensordiag/capture/codes.hpp>
#include <tensordiag/core/error.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::capture {

enum class range_kind : std::uint8_t { profiler_api, nvtx, launches, time };

struct range_spec {
  range_kind kind = range_kind::profiler_api;
  std::string nvtx_name;          ///< nvtx
  std::uint64_t first_launch = 0; ///< launches: [first, end)
  std::uint64_t end_launch = std::numeric_limits<std::uint64_t>::max();
  std::int64_t delay_ns = 0; ///< time: [delay, delay + duration)
  std::int64_t duration_ns = std::numeric_limits<std::int64_t>::max();
};

namespace detail {

[[noreturn]] inline void bad_range(std::string_view text, std::string_view why) {
  throw_input_error(codes::bad_range, "bad capture range",
                    "capture range '" + std::string(text) + "': " + std::string(why),
                    "Use cuda-profiler-api, nvtx:NAME, launches:A:B or time:DELAY:DURATION "
                    "(seconds); --launches A:B and --delay S --duration S say the same.");
}

inline bool parse_count(std::string_view s, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
}

// Seconds, decimal ("2", "0.5"), as nanoseconds.
inline bool parse_seconds(std::string_view s, std::int64_t& ns) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !(v >= 0) || v > 1e9)
    return false;
  ns = static_cast<std::int64_t>(v * 1e9);
  return true;
}

} // namespace detail

/// One range from its text; throws tdiag::input_error TDIAG-CAPTURE-023 naming what is wrong.
[[nodiscard]] inline range_spec parse_range(std::string_view text) {
  range_spec r;
  const auto colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (head == "cuda-profiler-api" && colon == std::string_view::npos) {
    r.kind = range_kind::profiler_api;
  } else if (head == "nvtx") {
    if (rest.empty())
      detail::bad_range(text, "no NVTX range name after 'nvtx:'");
    r.kind = range_kind::nvtx;
    r.nvtx_name = std::string(rest);
  } else if (head == "launches" || head == "time") {
    const auto sep = rest.find(':');
    if (colon == std::string_view::npos || sep == std::string_view::npos)
      detail::bad_range(text, "expected two numbers, like " +
                                  std::string(head == "time" ? "time:5:2" : "launches:100:200"));
    const auto a = rest.substr(0, sep), b = rest.substr(sep + 1);
    if (head == "launches") {
      r.kind = range_kind::launches;
      if (!detail::parse_count(a, r.first_launch) ||
          (!b.empty() && !detail::parse_count(b, r.end_launch)))
        detail::bad_range(text, "launch numbers are whole numbers (A:B, B may be empty)");
      if (r.end_launch <= r.first_launch)
        detail::bad_range(text, "the range is empty (B must be greater than A)");
    } else {
      r.kind = range_kind::time;
      if (!detail::parse_seconds(a, r.delay_ns) ||
          (!b.empty() && !detail::parse_seconds(b, r.duration_ns)))
        detail::bad_range(text, "delay and duration are seconds (DURATION may be empty)");
      if (r.duration_ns == 0)
        detail::bad_range(text, "the duration is 0");
    }
  } else {
    detail::bad_range(text, "unknown kind of range");
  }
  return r;
}

/// Ranges separated by ';' (empty items ignored).
[[nodiscard]] inline std::vector<range_spec> parse_ranges(std::string_view list) {
  std::vector<range_spec> out;
  while (!list.empty()) {
    const auto semi = list.find(';');
    if (const auto item = list.substr(0, semi); !item.empty())
      out.push_back(parse_range(item));
    list = semi == std::string_view::npos ? std::string_view() : list.substr(semi + 1);
  }
  return out;
}

} // namespace tdiag::capture
