// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Opening part of a trace: one device (`--device N`) and/or one time window (`--window A:B`).
// load_trace() applies a selection once, after the import and before anything else sees the
// trace, so every analysis, export and view answers for the same part. What is kept:
//   - device N: the GPU stream and allocator lanes of device N, and every host lane (host work
//     is not attributed to one device); the allocator state's segments of device N; flows whose
//     two ends are kept. The other lanes are removed from the lane table.
//   - window [A, B]: ranged records overlapping it, instants inside it. Memory events are what a
//     replay needs: with a final allocator state (a snapshot) that state is moved to B (the
//     whole trace's replay state at B) and the events before A are dropped (replay derives the
//     state at A backwards from B, as it does from a dump); without one (Kineto, CUPTI) the
//     events before A stay, since replay builds forward from an empty allocator.
// Side tables follow their rows (sync_waits re-indexed, collectives of kept kernels).
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag::trace {

/// `--window A:B`: each side a time since the trace's start ("250ms", units.hpp) or a share of
/// its span ("40%"); an empty side is the trace's start or end.
struct time_window {
  std::string begin; ///< as written; empty = the trace's start
  std::string end;   ///< as written; empty = the trace's end
  friend bool operator==(const time_window&, const time_window&) = default;
};

/// Parses "A:B" (either side may be empty, not both missing the colon). Nullopt when malformed.
[[nodiscard]] std::optional<time_window> parse_time_window(std::string_view text);
/// What is wrong with `text` as a window, for the one line a command prints.
[[nodiscard]] std::string bad_window_message(std::string_view text);

/// The help texts of --device and --window, the same in the CLI and the viewer.
inline constexpr std::string_view device_option_help =
    "Open only GPU device N: its streams and allocator, and the host threads";
inline constexpr std::string_view window_option_help =
    "Open only the events of the time window A:B, each side a time since the trace's start or a "
    "share of its span (2s:2.5s, 40%:60%, :100ms); memory replays exactly to both ends";
/// What an over-budget import tells the user to do (the end of its one line): a .tdtrace maps its
/// rows, so opening one costs anonymous memory only for the rows a part keeps (docs/analysis.md).
inline constexpr std::string_view over_budget_advice =
    "convert it once where it fits (tdiag trace export FILE --tdtrace OUT.tdtrace) and open "
    "OUT.tdtrace, whole or in part (--device N, --window A:B), or raise TDIAG_MEMORY_LIMIT if "
    "that memory is free";
/// The window on the trace's axis, for a trace spanning `span`: [begin, end], clamped to span
/// (a side before the start or past the end is cut there). Nullopt, with what is wrong in `why`,
/// when a side does not parse, the start is after the end, or the window misses the span.
[[nodiscard]] std::optional<time_span> resolve_window(const time_window& w, time_span span,
                                                      std::string* why = nullptr);

/// The instant an offset into `span` names (`text` as parse_time_offset() reads it: "1.5s",
/// "40%"; or ns) when it lies within the trace, as --window's sides must; nullopt with `why`
/// ("'soon' is not a time like ...", "+150 ms lies outside the trace, which spans 100 ms").
/// `tdiag trace timeline --at` and Trace.timeline(at=) read it alike.
[[nodiscard]] std::optional<std::int64_t> resolve_instant(std::string_view text, time_span span,
                                                          std::string* why = nullptr);
[[nodiscard]] std::optional<std::int64_t> resolve_instant(std::int64_t offset_ns, time_span span,
                                                          std::string* why = nullptr);

struct trace_selection {
  std::optional<std::int32_t> device;
  std::optional<time_window> window;
  [[nodiscard]] bool empty() const noexcept { return !device && !window; }
  /// "device 1, window 10ms:20ms": what a report says was opened.
  [[nodiscard]] std::string describe() const;
  friend bool operator==(const trace_selection&, const trace_selection&) = default;
};

/// The metadata property select_part() leaves on the part: describe() of the selection, so a
/// report on the part says which part it is.
inline constexpr std::string_view selection_property = "tensordiag.selection";

struct selection_result {
  std::uint64_t events_before = 0;
  std::uint64_t events_kept = 0;
  time_span window{}; ///< the resolved window (the whole span when none was given)
  /// Memory events after the window that did not match the allocator state while undone.
  std::size_t undo_mismatches = 0;
};

/// Keeps only the selected part of `t` (finalized or not; left finalized). Throws
/// tdiag::input_error TDIAG-TR-004 when the trace has no device `s.device` (the message lists the
/// devices it has) and TDIAG-TR-005 when the window does not resolve. `source` names the file.
selection_result select_part(trace& t, const trace_selection& s, std::string_view source);

} // namespace tdiag::trace
