// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The rows of the timeline. One track per lane: GPU streams (kernels, copies, GPU annotations)
// ordered by (device, stream), then one memory track per device with memory events (the view
// draws its allocated/reserved curve there), then host threads (runtime calls, CPU ops,
// annotations) ordered by (process, thread). Nested events go one row deeper than their parent, so
// every row holds events that do not overlap, sorted by start: the level-of-detail and hit-test
// code can binary-search a row by start or by end.
#pragma once

#include <tensordiag/trace/trace.hpp>
#include <tensordiag/viewer/event_ref.hpp>
#include <tensordiag/viewer/sampled_index.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tdiag::view {

/// One row of a track: events at one nesting depth, sorted by start, not overlapping.
struct row_index {
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> end;
  std::vector<event_ref> refs;
  /// busy_prefix[i] = sum of durations of events [0, i); size() + 1 entries.
  std::vector<std::int64_t> busy_prefix{0};
  std::int64_t max_duration = 0;
  sampled_index start_index; ///< over `start`, kept by push_back
  /// The level of detail's summary (lod.hpp, build_lod_summary): level l groups the events by
  /// start into buckets of 2^(lod_shift + l) ns, each with its events' index range, first
  /// start, last end and longest duration. Empty for short rows.
  struct lod_bucket {
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    std::int64_t max_duration = 0;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
  };
  std::vector<std::vector<lod_bucket>> lod_levels;
  int lod_shift = 0;

  [[nodiscard]] std::size_t size() const noexcept { return start.size(); }
  /// First index in [from, size()) whose start is >= t (size() when none).
  [[nodiscard]] std::size_t first_start_at_or_after(std::size_t from,
                                                    std::int64_t t) const noexcept {
    return start_index.lower_bound(start, from, t);
  }
  void push_back(std::int64_t b, std::int64_t e, event_ref ref);
  /// Busy nanoseconds of events [first, first + count).
  [[nodiscard]] std::int64_t busy(std::size_t first, std::size_t count) const noexcept {
    return busy_prefix[first + count] - busy_prefix[first];
  }
};

enum class track_kind : std::uint8_t { gpu_stream, memory, host_thread };

struct track {
  trace::lane_id lane = 0;
  track_kind kind = track_kind::gpu_stream;
  std::string title;    ///< "GPU 0 · stream 7", "thread 1234"
  std::string subtitle; ///< lane name, event count
  std::vector<row_index> rows;
  std::size_t event_count = 0;
  std::int32_t device = 0; ///< for gpu_stream and memory tracks
  /// Rows of height the track takes when it has no event rows (memory tracks draw a plot).
  std::size_t plot_rows = 0;
  // Geometry, filled by lane_layout::set_metrics().
  float y = 0.0f;
  float height = 0.0f;
};

/// Where a vertical coordinate falls.
struct row_hit {
  std::size_t track = 0;
  std::size_t row = 0;
  friend bool operator==(const row_hit&, const row_hit&) = default;
};

class lane_layout {
public:
  /// Deepest nesting shown; deeper events share the last row (which may then overlap).
  static constexpr std::size_t max_depth = 48;

  /// Builds the tracks of a finalized trace.
  [[nodiscard]] static lane_layout build(const trace::trace& t);

  [[nodiscard]] const std::vector<track>& tracks() const noexcept { return tracks_; }
  [[nodiscard]] std::vector<track>& tracks() noexcept { return tracks_; }

  /// Lays tracks out top to bottom: a header of `header_height`, then `row_height` per row,
  /// then `gap`. Returns the total height.
  float set_metrics(float header_height, float row_height, float gap) noexcept;
  [[nodiscard]] float total_height() const noexcept { return total_height_; }
  [[nodiscard]] float row_height() const noexcept { return row_height_; }
  [[nodiscard]] float header_height() const noexcept { return header_height_; }
  /// Top of row `row` of track `track` (content coordinates).
  [[nodiscard]] float row_y(std::size_t track, std::size_t row) const noexcept;
  /// The row under content coordinate `y`, if any (headers, gaps and plots are not rows).
  [[nodiscard]] std::optional<row_hit> row_at(float y) const noexcept;
  /// The track and row holding `e`, if it is shown.
  [[nodiscard]] std::optional<row_hit> find(event_ref e, const trace::trace& t) const noexcept;

private:
  std::vector<track> tracks_;
  float header_height_ = 0.0f;
  float row_height_ = 1.0f;
  float gap_ = 0.0f;
  float total_height_ = 0.0f;
};

} // namespace tdiag::view
