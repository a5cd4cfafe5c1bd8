// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What the viewer shows: one loaded trace with every view-model derived from it (lanes, memory
// curves, allocation bands, allocator timelines, tables, markers), built on a background thread
// so the window stays responsive, plus the tensordiag JSON reports opened beside it.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/trace.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/viewer/allocation_bands.hpp>
#include <tensordiag/viewer/lane_layout.hpp>
#include <tensordiag/viewer/memory_curve.hpp>
#include <tensordiag/viewer/state_seeker.hpp>
#include <tensordiag/viewer/table_model.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tdiag::view {

/// Per-device memory models.
struct device_memory {
  std::int32_t device = 0;
  memory_curve curve;
  std::vector<allocation> allocations;
  allocation_bands bands;
  /// trace's allocator replay of this device's memory lane (keyframes within a memory budget)
  /// and the allocator view's seeker over it (declared after it: stopped before it goes).
  std::unique_ptr<trace::allocator_replay> replay;
  std::unique_ptr<state_seeker> seeker;
  /// Where most of this device's allocator events are (the scrub strip's range).
  std::pair<std::int64_t, std::int64_t> window{0, 0};
};

enum class marker_kind : std::uint8_t { assertion, oom, diagnostic };

/// Something the timeline flags with a marker.
struct timeline_marker {
  std::int64_t time = 0;
  marker_kind kind = marker_kind::assertion;
  std::string label;
  event_ref event; ///< selected on click (none for report diagnostics)
  std::size_t report = static_cast<std::size_t>(-1);
  std::size_t diagnostic = static_cast<std::size_t>(-1);
};

struct job_document; // view_job.hpp
struct fr_document;  // view_fr.hpp

struct document {
  std::filesystem::path path;
  trace::trace trace;
  /// trace.span(), computed once: the trace recomputes it from every event.
  trace::time_span span;
  std::vector<diagnostic> warnings;
  lane_layout layout;
  std::vector<device_memory> memory;
  table_model kernels;
  table_model sites;
  table_model leaks;
  table_model ooms;
  trace::leak_result leak_result;             ///< trace::find_leaks(), what the leaks table shows
  std::vector<timeline_marker> trace_markers; ///< assertion and oom events
  /// The first view: where 97% of the events are (see dense_window()).
  std::pair<std::int64_t, std::int64_t> view_window{0, 0};
  double load_seconds = 0.0;
  double model_seconds = 0.0;
  std::uintmax_t file_bytes = 0;
  /// A job of several ranks (merged into `trace`): its analysis, for the Job tab; else null.
  std::shared_ptr<const job_document> job;
  /// Flight Recorder dumps (one per rank; `trace` is empty): the verdict and its rings, for the
  /// Flight Recorder tab; else null.
  std::shared_ptr<const fr_document> fr;
};

/// A report opened beside the trace.
struct loaded_report {
  std::filesystem::path path;
  report content;
};

/// What a background load reports to the progress bar.
class load_progress {
public:
  void set(std::string phase, float fraction);
  /// Phase text and fraction in [0, 1], or a negative fraction when unknown.
  [[nodiscard]] std::pair<std::string, float> get() const;

private:
  mutable std::mutex mutex_;
  std::string phase_ = "starting";
  float fraction_ = -1.0f;
};

/// True when the file starts like a tensordiag JSON report (schema tensordiag.report/...).
[[nodiscard]] bool looks_like_report(const std::filesystem::path& path);

/// Loads a trace file (or the selected part of it) with trace::load_trace and builds every
/// view-model. Throws what the importer throws (tdiag::input_error with its diagnostic).
[[nodiscard]] std::unique_ptr<document> load_document(const std::filesystem::path& path,
                                                      load_progress& progress,
                                                      const trace::trace_selection& select = {});

/// Builds the view-models of an already loaded trace (tests, synthetic traces).
[[nodiscard]] std::unique_ptr<document> make_document(trace::trace t, load_progress& progress);

} // namespace tdiag::view
