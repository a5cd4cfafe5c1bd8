// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One .tdtrace per process of a job: which rank a process is (RANK as torchrun, torch.distributed
// and most launchers set it; MPI's and Slurm's own variables; LOCAL_RANK; else none) and the file
// it writes in the job's output folder. Plain C++, no CUDA: `tdiag capture -o run/` sets
// TDIAG_CAPTURE_OUTPUT_DIR and every process the launcher starts claims its own file there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tdiag::capture {

struct process_identity {
  int rank = -1;           ///< -1: no launcher stated one
  int local_rank = -1;     ///< -1: unknown
  int world_size = -1;     ///< -1: unknown
  std::string rank_source; ///< the variable the rank came from ("RANK", ...), "pid" when none
  std::int64_t pid = 0;
};

/// Looks a variable up; empty or missing -> nullptr. The default reads the process environment.
using environment_lookup = std::function<const char*(const char* name)>;

/// The identity of this process from its environment: rank from RANK, OMPI_COMM_WORLD_RANK,
/// PMI_RANK, SLURM_PROCID, then LOCAL_RANK (the first that holds a non-negative integer);
/// local rank from LOCAL_RANK (or OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID); world size from
/// WORLD_SIZE (or OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS).
[[nodiscard]] process_identity identify_process(std::int64_t pid,
                                                const environment_lookup& lookup = {});

/// The file name a process writes in a job folder: "rank<R>.tdtrace", or "pid<P>.tdtrace" for a
/// process without a rank. trace::load_job reads the rank back from either the name or the
/// trace's "distributed.rank" property.
[[nodiscard]] std::string process_file_name(const process_identity& who);

/// Claims `folder`/process_file_name(who) (created exclusively). A second process of the same
/// rank (a worker of that rank initialising CUDA) gets "<folder>/others/rank<R>.<pid>.tdtrace"
/// instead, outside the folder the job loader reads. Creates the folders as needed.
[[nodiscard]] std::filesystem::path claim_process_file(const std::filesystem::path& folder,
                                                       const process_identity& who);

/// The trace properties that tag a process's file: distributed.rank (when known),
/// distributed.local_rank, distributed.world_size, capture.rank_source.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
identity_properties(const process_identity& who);

} // namespace tdiag::capture
