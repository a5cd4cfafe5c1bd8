// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Streaming over a Chrome trace's `traceEvents` array in windows of a few MiB, so that memory
// is bounded by the window (and the model), never by the JSON text (private to the importer).
#pragma once

#include <tensordiag/trace/kineto_import.hpp>

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace tdiag::trace::detail {

/// Where the JSON text comes from (a gzip stream, a file, bytes in memory).
class byte_source {
public:
  virtual ~byte_source() = default;
  /// Up to `n` bytes into `dst`; 0 at the end. Throws tdiag::input_error on a damaged input.
  virtual std::size_t read(char* dst, std::size_t n) = 0;
  /// The share of the input that `parsed` bytes of its text are, in [0, 1] (for a gzip stream,
  /// of its compressed bytes): what an import extrapolates its memory from.
  [[nodiscard]] virtual double share_read(std::uint64_t parsed) const noexcept = 0;
};

/// A simdjson error raised inside a callback; the stream turns it into a diagnostic with the
/// byte offset.
struct json_failure {
  simdjson::error_code code;
};
inline void json_check(simdjson::error_code e) {
  if (e != simdjson::SUCCESS)
    throw json_failure{e};
}

struct stream_callbacks {
  /// Called for every element of traceEvents, in order, with the bytes of JSON text before it.
  std::function<void(simdjson::ondemand::object&, std::uint64_t)> on_event;
  /// Called once with the top-level object, its traceEvents replaced by an empty array (not
  /// called for the bare-array form).
  std::function<void(simdjson::ondemand::object&)> on_top_level;
};

/// Streams the trace; returns the number of JSON bytes read. Throws tdiag::input_error
/// (TDIAG-TR-121..123) naming the byte offset in the JSON text, also for anything but white
/// space after the top-level value. `window` is the initial window size; it grows to hold one
/// huge event if need be, within the memory budget (TDIAG-CORE-006 past it).
std::size_t stream_trace_events(byte_source& src, std::string_view source_name,
                                const stream_callbacks& callbacks,
                                std::size_t window = kineto_window_bytes);

} // namespace tdiag::trace::detail
