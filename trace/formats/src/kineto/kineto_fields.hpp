// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading the fields of Kineto trace events with simdjson On Demand (private to the importer):
// pid/tid keys, numbers of any JSON number type, and the `args` object of every event kind.
#pragma once

#include <tensordiag/trace/events.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kineto_stream.hpp"

namespace tdiag::trace::detail {

namespace od = simdjson::ondemand;

inline void check(simdjson::error_code e) {
  json_check(e);
}
template <typename T> T take(simdjson::simdjson_result<T>&& r) {
  T v{};
  check(std::move(r).get(v));
  return v;
}

/// Calls fn(key, value) for each field of `obj`, in order (key: the raw, still escaped key).
template <typename Fn> void for_each_field(od::object& obj, Fn&& fn) {
  for (auto field : obj) {
    od::field f;
    check(std::move(field).get(f));
    fn(f.key(), f.value());
  }
}

// pid/tid: usually integers, sometimes strings ("Spans", "Traces") or -1.
struct track_key {
  std::int64_t number = 0;
  std::string_view text;
  bool is_text = false;
};

/// A known field whose value is not what Kineto writes there (a string "123", NaN, Infinity,
/// true or null where a number is due). Thrown by the readers below; the importer turns it into
/// one line naming the file and the field's path (traceEvents[N].args.Bytes).
struct bad_field {
  std::string_view path; ///< the key, "args.Bytes" for an args field (a literal)
  std::string token;     ///< the value as written, copied: args re-parsed from a copy are gone
                         ///< by the time the message is built
  std::string_view expected;
};

// The args fields any event kind uses; one pass fills what is there.
struct event_args {
  std::uint64_t correlation = 0, external_id = 0, context = 0, stream = 0, cbid = 0, bytes = 0;
  double bandwidth_gbps = 0; ///< "memory bandwidth (GB/s)" of gpu_memcpy / gpu_memset
  std::int64_t device = -1, registers = 0, shared_memory = 0;
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  /// A grid or block written as a string (Inductor's cpu_ops: "grid(100,)"): the first one, as
  /// the refusal a kernel's dims get. A kernel's dims must be integers.
  std::optional<bad_field> bad_dims;
  /// Throws bad_dims where a grid or block was a string (a kernel's dims are read).
  void check_dims() const;
  bool has_stream = false, has_device = false;
  // cuda_sync: wait_on_cuda_event_record_corr_id, wait_on_stream; -1 = not given
  std::int64_t wait_record = -1, wait_stream = -1;
  // [memory]
  std::uint64_t addr = 0;
  std::int64_t mem_bytes = 0, total_allocated = -1, total_reserved = -1, device_type = -1,
               device_id = -1;
  /// Totals written below 0: no byte count, kept as -1 (unknown) and counted, never as 0.
  std::uint32_t negative_totals = 0;
  /// ph C: every numeric arg is a series ("bytes" first, as Kineto writes it); the first few
  /// (name, value) kept, and how many args were not finite numbers.
  static constexpr std::size_t max_series = 8;
  std::pair<std::string_view, double> series[max_series];
  std::uint32_t series_count = 0, series_dropped = 0, non_numeric_series = 0;
  // NCCL kernels (record_param_comms): the process group and the sequence number
  std::string_view group, group_ranks, collective;
  std::int64_t group_size = -1, seq = -1;
  // metadata events
  std::string_view name;
  std::int64_t sort_index = 0;
};

/// The value of `f` as a message shows it: the token (escaped, cut); where there is none, that
/// the parser met no value there (a trailing comma, text that is not JSON); a quoted token where
/// a string was expected, that it does not decode (a lone \u surrogate, bytes that are not UTF-8).
[[nodiscard]] std::string what_was_written(const bad_field& f);

/// Numbers written as JSON strings and read as numbers ("bytes": "128", as ROCm's runtime
/// writes memcpy sizes): counted for the file's one note.
struct text_numbers {
  std::size_t count = 0;
  std::string_view first_path; ///< the first one's path ("args.bytes", a literal)
  void seen(std::string_view path) noexcept {
    if (count++ == 0)
      first_path = path;
  }
};

/// pid/tid: a number or a string; anything else throws bad_field.
track_key read_track(od::value v, std::string_view path);
/// Integers: a JSON number (a double is truncated and saturated, a uint64 above INT64_MAX
/// saturates for read_i64), a "0x..." hex string (ROCm writes streams so), or a string whose
/// whole text is a JSON number (counted in `seen`). Anything else throws bad_field naming
/// `path`.
std::uint64_t read_u64(od::value v, std::string_view path, text_numbers& seen);
std::int64_t read_i64(od::value v, std::string_view path, text_numbers& seen);
/// A finite JSON number as a double, or a string whose whole text is one (counted in `seen`);
/// NaN, Infinity and other strings throw bad_field naming `path`.
double read_f64(od::value v, std::string_view path, text_numbers& seen);
/// `v` as written, for messages (simdjson leaves the separator after a scalar's token).
std::string_view token_text(od::value v);
/// A string field ("ph", "cat", "name"); null is absent (empty). Anything else throws bad_field
/// naming `path`.
std::string_view read_string(od::value v, std::string_view path);
/// An object or an array field; anything else throws bad_field naming `path`.
od::object read_object(od::value v, std::string_view path);
od::array read_array(od::value v, std::string_view path);

/// A JSON time in microseconds, read exactly from its text as whole us plus ns (a double
/// cannot hold epoch microseconds with a fraction: 1.7e15 us has a 0.25 us ulp). `fractional` is
/// set when the text is written as a float (a '.' or an exponent): HTA's ns-resolution test.
struct time_value {
  std::int64_t us = 0;      ///< floor of the value
  std::int32_t frac_ns = 0; ///< 0..999
  bool fractional = false;
};
/// Empty when `v` is neither a finite JSON number nor a string whose whole text is one (NaN,
/// Infinity, null, "12 us"); a string read as a number is counted in `seen` under `path`.
std::optional<time_value> read_time(od::value v, std::string_view path, text_numbers& seen);
/// Fills what `obj` holds of the known keys (correlation, grid, Bytes, name, ...). Throws
/// bad_field (path "args.KEY") for a known key with a value of the wrong type.
void read_args(od::object obj, event_args& a, text_numbers& seen);
/// The args of a counter (ph C): each finite number (or numeric string) a series, anything
/// else counted in `non_numeric_series`; never throws for a value's type.
void read_counter_args(od::object obj, event_args& a, text_numbers& seen);
/// Adds what a cuda_sync row about to be pushed onto t.ranges waited on, if `a` names it.
void keep_sync_wait(const event_args& a, trace& t);
/// Adds the process group and sequence number of a kernel, if `a` names them.
void keep_collective(const event_args& a, trace& t);
/// From an activity name: "Memcpy HtoD (Pageable -> Device)" -> htod.
copy_kind parse_copy_kind(std::string_view name, bool memset);
memory_kind parse_memory_kind(std::string_view word);

} // namespace tdiag::trace::detail
