// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Importer for PyTorch profiler / Kineto Chrome-trace JSON, plain or gzip-compressed, parsed
// in one pass with simdjson On Demand: kernels, memcpy/memset, CUDA runtime and driver calls,
// CPU ops, python functions, annotations (ProfilerStep#N as steps), `[memory]` instant events,
// counters, and `ac2g` flows (launch -> kernel). Times: the trace axis is Kineto's `ts` in ns;
// time_origin_ns = baseTimeNanoseconds.
//
// Diagnostic codes: TDIAG-TR-120 (gzip), TDIAG-TR-121..129 (JSON).
#pragma once

#include <tensordiag/trace/load.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace tdiag::trace {

/// What an import read and how long each phase took (the benchmark prints these).
struct kineto_stats {
  std::size_t compressed_bytes = 0; ///< 0 for plain JSON
  std::size_t json_bytes = 0;
  std::size_t events = 0;          ///< entries of traceEvents, every phase included
  std::size_t metadata_events = 0; ///< ph M
  std::size_t skipped_events = 0;  ///< all skipped: the counts by reason below
  /// Skipped by reason. A flow end without its other end carries nothing (no note); an event
  /// of a phase the model has no place for ('b', 'e', 'B', 'E', 'P', 'O', ...) is lost (a
  /// warning naming the phases).
  std::size_t unpaired_flows = 0;
  std::size_t unknown_phase_events = 0;
  std::string unknown_phases; ///< the distinct phases skipped, as written ("b, e")
  /// Skipped rather than placed at a time or device they do not have: events (other than
  /// ph M) without a `ts`; with a `ts` more than 2^60 ns from the first epoch-like one (the
  /// model's range); GPU rows and `[memory]` events whose device number does not fit 32 bits.
  std::size_t missing_ts_events = 0, ts_out_of_range_events = 0, bad_device_events = 0;
  /// Values kept as unknown, never as 0: counter (ph C) args that are not finite numbers, and
  /// `[memory]` totals below 0 (`Total Allocated`, `Total Reserved`).
  std::size_t unreadable_counter_values = 0, unreadable_memory_values = 0;
  /// Complete events (ph X) without a `dur`, or with a negative one: kept with duration 0.
  std::size_t missing_durations = 0, negative_durations = 0;
  /// Numbers written as JSON strings ("bytes": "128"), read as the number the whole string is.
  std::size_t text_numbers = 0;
  std::string first_text_number; ///< its path, traceEvents[N].args.bytes
  double inflate_seconds = 0;
  double parse_seconds = 0;    ///< parse and build, interleaved (one pass)
  double finalize_seconds = 0; ///< sorting the stores
};

/// True when `head` is a Kineto/Chrome trace: a JSON object whose first bytes show a trace
/// key, or the gzip of one (decompressed on the fly; head need not hold the whole member).
[[nodiscard]] bool sniff_kineto(std::span<const std::byte> head) noexcept;

/// The JSON text parsed at a time (grown when one event is larger).
inline constexpr std::size_t kineto_window_bytes = std::size_t{4} << 20;

/// Imports JSON text or gzip bytes (detected by magic). Throws tdiag::input_error with the byte
/// offset (of the JSON text, or of the compressed stream for gzip errors). The text is parsed
/// in windows of `window_bytes` (grown when one event is larger), so memory stays bounded by
/// the window and the model, not by the text.
[[nodiscard]] load_result import_kineto(std::span<const std::byte> bytes,
                                        std::string_view source_name,
                                        const load_options& options = {},
                                        kineto_stats* stats = nullptr,
                                        std::size_t window_bytes = kineto_window_bytes);
/// The same from a file: a regular JSON file is read window by window (its text is never whole
/// in memory); a gzip or a stream is read whole first. The import stops, before it outgrows the
/// memory budget, with one line naming the file, the events counted and estimated from the
/// share read, the memory needed and the budget (TDIAG-TR-126).
[[nodiscard]] load_result import_kineto_file(const std::filesystem::path& path,
                                             const load_options& options = {},
                                             kineto_stats* stats = nullptr);

/// The importer entry for load_trace() ("kineto-json").
[[nodiscard]] importer kineto_importer();

} // namespace tdiag::trace
