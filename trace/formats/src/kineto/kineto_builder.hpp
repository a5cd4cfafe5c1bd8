// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Kineto event loop (private to the importer): each traceEvents element, by phase and
// category, into the trace's stores; lanes, flows and thread names as they come.
#pragma once

#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kineto_fields.hpp"
#include "kineto_stream.hpp"

namespace tdiag::trace::detail {

class kineto_builder {
public:
  /// `input`: the text being read, whose share read sizes the memory the whole will need.
  kineto_builder(trace& t, kineto_stats& stats, const byte_source& input);

  /// One traceEvents element, `parsed` bytes of JSON text into the input. Throws
  /// tdiag::input_error (fail_field) for a known field of the wrong type, and TDIAG-TR-126 when
  /// the model the whole input needs, extrapolated from the share parsed, exceeds the budget.
  void event(od::object& obj, std::uint64_t parsed);

  /// One line naming the file and the field: "x.json: traceEvents[7].args.Bytes: expected a JSON
  /// integer, got \"123\"" (TDIAG-TR-125).
  [[noreturn]] void fail_field(const std::string& path, const bad_field& f) const;

  void set_base(std::int64_t base_ns) { base_ns_ = base_ns; }
  /// Where numbers written as strings are counted (the top-level fields' too).
  [[nodiscard]] text_numbers& numbers() noexcept { return numbers_; }

  /// After the last event: thread names onto their lanes, the time origin, flows left open.
  void finish();

private:
  void read_event(od::object& obj);
  std::optional<std::int64_t> on_axis(const time_value& t);
  void move_placed_onto_axis();
  std::int64_t track_number(const track_key& k);
  lane_id host_lane(const track_key& pid, const track_key& tid);
  lane_id gpu_lane(std::int64_t device, std::uint64_t stream);
  /// A GPU track's stream from its tid ("stream 7" as Kineto 2021 wrote it, or the number).
  std::uint64_t gpu_stream(const track_key& tid);
  string_id intern(std::string_view s) { return t_.strings.intern(s); }
  /// A device number as the model holds it; empty (the event skipped and counted) when it does
  /// not fit 32 bits.
  std::optional<std::int32_t> device_number(std::int64_t device);
  /// A GPU row's device, stream and lane: its args' device and stream, else its pid and tid;
  /// empty when the device does not fit (device_number).
  std::optional<std::tuple<std::int32_t, std::uint64_t, lane_id>>
  gpu_place(const event_args& a, const track_key& pid, const track_key& tid);

  void complete(std::string_view cat, std::string_view name, std::int64_t start, std::int64_t end,
                const track_key& pid, const track_key& tid, const event_args& a);
  void instant(std::string_view cat, std::string_view name, std::int64_t time, const track_key& pid,
               const track_key& tid, const event_args& a);
  void flow(char ph, std::string_view cat, std::uint64_t id, std::int64_t time,
            const track_key& pid, const track_key& tid);
  void metadata(std::string_view name, const track_key& pid, const track_key& tid,
                const event_args& a);
  void counter(std::string_view name, std::int64_t time, const track_key& pid, const track_key& tid,
               const event_args& a);
  void reparse_args(std::string_view raw, bool counter_args, event_args& a);
  /// Counts a skipped event under `reason` (a count of kineto_stats).
  void skip(std::size_t& reason);
  /// Counts an event of a phase the model has no place for.
  void skip_phase(std::string_view ph);

  struct pending_flow {
    flow_event flow;
    bool has_start = false, has_end = false;
  };

  trace& t_;
  kineto_stats& stats_;
  const byte_source& input_;
  std::unordered_map<std::uint64_t, pending_flow> pending_flows_;
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, string_id>> thread_names_;
  std::pair<std::int64_t, std::int64_t> last_host_{INT64_MIN, INT64_MIN};
  lane_id last_host_lane_ = 0;
  std::pair<std::int64_t, std::uint64_t> last_gpu_{INT64_MIN, 0};
  lane_id last_gpu_lane_ = 0;
  bool fractional_ts_ = false;
  bool rebased_ = false;
  bool placed_ = false; ///< an event was placed on the axis (before a rebase: from 0)
  std::int64_t rebase_us_ = 0, base_ns_ = 0;
  od::parser side_parser_;
  text_numbers numbers_;
  std::set<std::string> known_phases_;
};

} // namespace tdiag::trace::detail
