// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A job as one input: several trace files, a folder or a glob, one file per rank, loaded in
// parallel through load_trace(). The rank of a file comes from Kineto's distributedInfo, from
// its name ("rank-3", "rank_3", "rank3"), or from its position.
//
// Diagnostic codes: TDIAG-TR-260 (no trace file matched), TDIAG-TR-261 (two files claim one
// rank), TDIAG-TR-262 (the chosen rank source states no rank).
#pragma once

#include <tensordiag/trace/load.hpp>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace {

enum class rank_source : std::uint8_t {
  automatic = 0,   ///< distributedInfo, else the file name, else the position
  distributed = 1, ///< distributedInfo only (a file without it is an error)
  file_name = 2,   ///< the file name only
  position = 3,    ///< the order of the expanded inputs
};

/// The --rank-from words: "auto", "distributed", "file-name", "position"; empty for others.
[[nodiscard]] std::optional<rank_source> rank_source_from_name(std::string_view name) noexcept;

struct job_load_options {
  rank_source ranks = rank_source::automatic;
  unsigned threads = 0; ///< 0 = hardware concurrency
  load_options load;    ///< for every file (a --device / --window selection applies to each rank)
};

struct job_member {
  int rank = 0;
  std::filesystem::path path;
  load_result loaded;
  /// What to add to this rank's times to put it on the job's clock: Kineto's base time
  /// (time_origin_ns) minus the earliest base time of the job; 0 when a rank has none.
  std::int64_t clock_offset_ns = 0;
};

/// Files, folders (their trace files, sorted by name) and glob patterns, expanded in order.
/// An entry a folder or a glob gives that is no file to open (a link that loops or leads
/// nowhere, a FIFO, a socket) is skipped with one warning each in `skipped` (TDIAG-TR-260).
/// Throws tdiag::input_error TDIAG-TR-260 when nothing matches.
[[nodiscard]] std::vector<std::filesystem::path>
expand_job_inputs(std::span<const std::string> inputs, std::vector<diagnostic>* skipped = nullptr);

/// The rank a file name states ("sampled_rank-1.json.gz" -> 1), or -1.
[[nodiscard]] int rank_from_file_name(const std::filesystem::path& path);
/// The same; `problem` says why a rank the name states is none (past int).
[[nodiscard]] int rank_from_file_name(const std::filesystem::path& path, std::string& problem);

/// Loads every file of the job in parallel; members sorted by rank. Throws what load_trace()
/// throws for the first unreadable file, and TDIAG-TR-261 for a rank claimed twice. With
/// rank_source::automatic, files that state no rank take the lowest ranks no file states.
/// Entries skipped while expanding the inputs are added to `skipped`.
[[nodiscard]] std::vector<job_member> load_job(std::span<const std::string> inputs,
                                               const job_load_options& options = {},
                                               std::vector<diagnostic>* skipped = nullptr);

} // namespace tdiag::trace
