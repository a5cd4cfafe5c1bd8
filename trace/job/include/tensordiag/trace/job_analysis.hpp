// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Whole-job analyses of GPU traces, one rank per trace, with the figures Holistic Trace Analysis
// (HTA) computes: temporal breakdown, idle-time breakdown per stream, kernel-type breakdown with
// overlap, top kernels, communication-computation overlap, kernel launch statistics and queue
// length. `hta_compat` reproduces HTA's semantics (whole-us rounding of ns-resolution traces,
// last-ProfilerStep filtering); without it the figures are exact over the whole trace. The
// differences are listed in docs/analysis.md.
//
// Times in results are microseconds (double), as HTA reports them.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/job_load.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace {

/// HTA's kernel classes (hta/common/types.py), tested in this order: communication, memory,
/// computation; whatever matches none is `other`.
enum class kernel_class : std::uint8_t {
  computation = 0,
  communication = 1,
  memory = 2,
  other = 3
};
[[nodiscard]] kernel_class classify_kernel(std::string_view name) noexcept;
/// "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER" (HTA's spelling).
[[nodiscard]] std::string_view to_string(kernel_class c) noexcept;

/// How the ranks' clocks are put on one job clock (docs/analysis.md, "Clocks").
enum class clock_alignment : std::uint8_t {
  automatic = 0,   ///< the collectives where ranks share matched ones, else Kineto's base time
  base_time = 1,   ///< Kineto's base time (baseTimeNanoseconds, or the epoch of absolute ts)
  collectives = 2, ///< the collectives; a rank that shares none keeps its base time
};
/// "auto", "base-time", "collectives".
[[nodiscard]] std::string_view to_string(clock_alignment a) noexcept;
/// The --align words above; empty for others.
[[nodiscard]] std::optional<clock_alignment>
clock_alignment_from_name(std::string_view name) noexcept;

struct analysis_options {
  /// HTA's semantics: ceil(ts)/floor(ts + dur) in whole us for traces with fractional ts, and,
  /// with two or more ProfilerStep#N, only CPU rows before the last step and their GPU rows.
  bool hta_compat = false;
  double launch_runtime_cutoff_us = 50;    ///< HTA runtime_cutoff
  double launch_delay_cutoff_us = 100;     ///< HTA launch_delay_cutoff
  double consecutive_kernel_delay_us = 30; ///< HTA consecutive_kernel_delay
  double top_duration_ratio = 0.8;         ///< HTA duration_ratio
  std::size_t top_num_kernels = 10;        ///< HTA num_kernels
  /// Rank clocks: by default the ends of the collectives the ranks share (solved jointly over
  /// every matched collective of every group, robust to outliers), else Kineto's base time.
  clock_alignment align = clock_alignment::automatic;
  /// false: only the whole-job analyses (clocks, stragglers and their causes, steps); each
  /// rank_analysis keeps its rank, source and steps, and no rank deviations are computed.
  bool rank_analyses = true;
  /// The critical path's window: the `critical_path_instance`-th range (by start) whose name
  /// contains this annotation; "" = the whole trace. Unset: HTA's rule, "ProfilerStep" when
  /// the trace has one (instance 1 with two or more steps left, else 0), else the whole trace.
  std::optional<std::string> critical_path_annotation;
  int critical_path_instance = -1; ///< -1 = HTA's rule above
  /// HTA's data_load_events: host rows whose name contains one of these are graph nodes (user
  /// annotations included) and their time on the path is `data_loading`, not `cpu_bound`.
  std::vector<std::string> critical_path_data_load;
};

/// pandas describe() of a series: sample std (ddof 1), linear-interpolated quartiles. Empty
/// series give count 0 and no values.
struct describe_stats {
  std::size_t count = 0;
  double sum = 0;
  std::optional<double> mean, std, min, p25, p50, p75, max;
};
[[nodiscard]] describe_stats describe(std::vector<double> values);

struct temporal_breakdown {
  double idle_us = 0, compute_us = 0, non_compute_us = 0;
  double kernel_us = 0; ///< span: end of the last GPU row minus start of the first
  [[nodiscard]] double pct(double part) const noexcept {
    return kernel_us > 0 ? 100.0 * part / kernel_us : 0.0;
  }
};

enum class idle_category : std::uint8_t { host_wait = 0, kernel_wait = 1, other = 2 };
[[nodiscard]] std::string_view to_string(idle_category c) noexcept;

struct idle_share {
  bool present = false; ///< some gap of the stream fell in this category (HTA's groupby)
  double time_us = 0;
  std::optional<double> ratio; ///< of the stream's idle time; empty for 0/0
  describe_stats gaps;         ///< the gaps themselves (us)
};
struct stream_idle {
  std::uint64_t stream = 0;
  idle_share by_category[3]; ///< indexed by idle_category
};

struct kernel_type_time {
  std::string type; ///< "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ...
  double sum_us = 0;
  double pct = 0; ///< of the rank's (or the job's) total
};

struct kernel_summary {
  std::string name; ///< a kernel name, or "others"
  kernel_class type = kernel_class::other;
  std::size_t count = 0;
  double sum_us = 0, max_us = 0, min_us = 0, mean_us = 0, std_us = 0;
};

struct launch_statistics {
  std::size_t num_launches = 0;
  std::size_t short_kernels = 0;         ///< cpu <= runtime cutoff and gpu < cpu
  std::size_t runtime_outliers = 0;      ///< cpu > runtime cutoff
  std::size_t launch_delay_outliers = 0; ///< delay > launch delay cutoff
  /// Launches whose correlation id other launches share: each was paired with the GPU row of
  /// its own place among them, not with every row of the id (HTA's merge).
  std::size_t shared_correlation_launches = 0;
  describe_stats cpu_duration, gpu_duration, launch_delay;
};

struct stream_queue {
  std::uint64_t stream = 0;
  describe_stats length; ///< over the change points of the queue-length step series
};

/// HTA's memory bandwidth summary of one kind of memory operation ("Memcpy HtoD", "Memcpy
/// DtoH", "Memcpy DtoD", "Memset", "Memcpy Unknown" for other names).
struct memory_bandwidth {
  std::string name;
  /// Over the positive points of the summed bandwidth series: +GB/s at each operation's start,
  /// -GB/s at its end, summed over time across the rank's streams.
  describe_stats gbps;
};

/// What bounds the critical path (HTA's CPGraph.summary() categories).
enum class path_bound : std::uint8_t {
  cpu = 0,                    ///< "cpu_bound": host operators and runtime calls
  gpu_compute = 1,            ///< "gpu_compute_bound"
  gpu_communication = 2,      ///< "gpu_communication_bound": NCCL and other collectives
  kernel_kernel_overhead = 3, ///< "gpu_kernel_kernel_overhead": gaps between kernels of a stream
  kernel_launch_overhead = 4, ///< "gpu_kernel_launch_overhead": launch call to kernel start
  data_loading = 5, ///< "data_loading": host rows named like analysis_options' data-load events
  none = 6,         ///< dependency and sync edges (weigh 0)
};
inline constexpr std::size_t path_bound_count = 7;

/// The kinds of critical-path edges (HTA's CPEdgeType).
enum class path_edge_kind : std::uint8_t {
  operator_kernel = 0, ///< "critical_path_operator": an operator's or kernel's own time
  dependency = 1,      ///< "critical_path_dependency": nesting and runtime-lock order
  launch_delay = 2,    ///< "critical_path_kernel_launch_delay"
  kernel_kernel = 3,   ///< "critical_path_kernel_kernel_delay"
  sync = 4,            ///< "critical_path_sync_dependency"
};
inline constexpr std::size_t path_edge_kind_count = 5;
/// HTA's names: "critical_path_operator", ...
[[nodiscard]] std::string_view to_string(path_edge_kind k) noexcept;
/// HTA's names: "cpu_bound", "gpu_compute_bound", ..., "none".
[[nodiscard]] std::string_view to_string(path_bound b) noexcept;

/// HTA's critical path analysis of one iteration: a graph whose nodes are the starts and ends
/// of host operators, runtime calls and GPU rows, and whose edges are their durations, nesting,
/// the CUDA runtime lock, kernel launches, kernel-to-kernel order on a stream and stream/context
/// syncs; its longest path, and what the path's time is spent on.
struct critical_path_result {
  bool computed = false; ///< false: `reason` says why (no such annotation, invalid graph)
  std::string reason;
  std::string annotation; ///< "" = the whole trace
  int instance = 0;
  std::string instance_name;                     ///< the range chosen
  double window_start_us = 0, window_end_us = 0; ///< on the rank's own axis
  std::size_t graph_nodes = 0, graph_edges = 0;  ///< the graph built
  std::size_t path_edges = 0;                    ///< edges on the path
  double total_us = 0;                           ///< the path's length
  double path_start_us = 0, path_end_us = 0;     ///< its first and last node
  double bound_by_us[path_bound_count] = {};     ///< by path_bound
  std::size_t edges_by_bound[path_bound_count] = {};
  double edge_type_us[path_edge_kind_count] = {}; ///< path edges by path_edge_kind
  std::size_t edges_by_type[path_edge_kind_count] = {};
};

struct rank_analysis {
  int rank = 0;
  std::string source;     ///< the file it came from
  std::vector<int> steps; ///< ProfilerStep numbers left after filtering
  std::size_t gpu_rows = 0;
  std::vector<std::uint64_t> streams;
  temporal_breakdown temporal;
  std::vector<stream_idle> idle;
  std::vector<kernel_type_time> kernel_types;  ///< by sum, largest first
  std::vector<kernel_summary> kernels;         ///< every kernel by type and name, largest first
  std::vector<kernel_summary> top_kernels;     ///< HTA's default grouping into "others"
  std::optional<double> comp_comm_overlap_pct; ///< empty without communication
  launch_statistics launches;
  std::vector<stream_queue> queues;
  std::vector<memory_bandwidth> memory_bw; ///< by name; empty without memcpy/memset
  critical_path_result critical_path;
};

/// What made the last rank of a collective late, from its own timeline since its previous
/// collective of the same group (docs/analysis.md, "Stragglers and their causes").
enum class late_cause : std::uint8_t {
  none = 0,       ///< not later than the median member, or nothing on its timeline says why
  compute = 1,    ///< its GPU computed longer (which kernels: straggler_cause::kernels)
  host_gap = 2,   ///< its GPU sat idle: no launches (CPU work, data loading, Python)
  collective = 3, ///< it waited on an earlier collective (another group's, or its previous one)
  copy = 4,       ///< it waited on a memcpy / memset
};
inline constexpr std::size_t late_cause_count = 5;
/// "none", "compute", "host_gap", "collective", "copy".
[[nodiscard]] std::string_view to_string(late_cause c) noexcept;

/// A kernel whose time on the last rank, within its window, exceeds the median member's.
struct late_kernel {
  std::string name;
  double us = 0;                         ///< on the last rank, in its window
  double median_us = 0;                  ///< the median over the members, each in its own window
  std::int64_t start_ns = 0, end_ns = 0; ///< its longest instance, on the last rank's own axis
  [[nodiscard]] double excess_us() const noexcept { return us - median_us; }
};

/// Why one collective's last rank arrived last. Every member's window runs from the end of its
/// previous collective of the group (else the start of its trace's GPU work) to its arrival;
/// on the GPU of each, the window's time is compute (COMPUTATION kernels), else an earlier
/// collective (another communication kernel), else a copy, else a host gap (nothing ran). The
/// excess of a kind is the last rank's time minus the median member's; the cause is the kind
/// of the largest excess.
struct straggler_cause {
  late_cause cause = late_cause::none;
  double late_us = 0; ///< the last arrival minus the median member's arrival (job clock)
  /// By late_cause: the last rank's time minus the median member's (compute, host_gap, copy),
  /// and for `collective`, also how much later its previous collective ended (job clock).
  double excess_us[late_cause_count] = {};
  std::int64_t window_start_ns = 0, window_end_ns = 0; ///< the last rank's window, own axis
  std::vector<late_kernel> kernels; ///< the kernels that grew most, largest excess first (<= 3)
  /// The longest stretch with nothing on the last rank's GPU, its own axis; 0, 0 = none.
  std::int64_t gap_start_ns = 0, gap_end_ns = 0;
  /// host_gap: the innermost host operator or annotation over that gap; "" = none or another cause
  std::string gap_host;
  std::string waited_on; ///< collective / copy cause: the longest such kernel in the window
  /// What to show for the cause on the last rank's own axis: the top kernel's longest
  /// instance, the gap, the collective or copy waited on, else the window.
  std::int64_t focus_start_ns = 0, focus_end_ns = 0;
};

/// One collective: a communication kernel on every rank of its process group (every rank of
/// the job when the trace names no group), launched by the same c10d / nccl operator in the same
/// ProfilerStep, with the same sequence number where the trace has one, else the kernels
/// overlapping on the job clock; who came last.
struct collective_wait {
  std::string name;           ///< the kernel name
  std::string operation;      ///< the launching operator (`c10d::allreduce_`); empty = none
  std::string group;          ///< "Process Group Name"; empty = the whole job
  std::int64_t seq = -1;      ///< "Seq" in its group; -1 = the trace has none
  std::size_t occurrence = 0; ///< n: the n-th collective of (group, operation, name, step)
  int step = -1;              ///< the ProfilerStep the last rank launched it in; -1 = none
  int last_rank = 0;          ///< the rank whose kernel started last (on the job's clock)
  double spread_us = 0;       ///< last start minus first start
  /// The job's ranks in its group: their places in the job's input order (the order of
  /// clock_offsets_ns) and their rank numbers. The vectors below have one entry per member.
  std::vector<std::size_t> members;
  std::vector<int> ranks;
  std::vector<double> wait_us; ///< per member: last start minus this rank's start
  /// Per member: its kernel's start and end on its own trace's axis (ns).
  std::vector<std::int64_t> start_ns, end_ns;
  straggler_cause cause; ///< what made last_rank late
};

/// A communication kernel on one rank with no partner on some other rank of its process group
/// (a sampled or truncated trace, or a collective some member never joined): a finding, never
/// paired.
struct unmatched_collective {
  int rank = 0;
  std::string name, operation;           ///< kernel name and launching operator, as collective_wait
  std::string group;                     ///< "Process Group Name"; empty = the whole job
  std::int64_t seq = -1;                 ///< "Seq" in its group; -1 = none
  int step = -1;                         ///< the ProfilerStep of its launch; -1 = none
  std::int64_t start_ns = 0, end_ns = 0; ///< on the rank's own axis
};

struct rank_wait {
  int rank = 0;
  double wait_us = 0;         ///< summed over collectives: time spent waiting for others
  std::size_t times_last = 0; ///< collectives where this rank arrived last
  std::vector<std::pair<int, double>> wait_by_step; ///< (step, wait us)
  /// Where it arrived last: its lateness (straggler_cause::late_us) summed, and the positive
  /// excesses summed by late_cause; the same per ProfilerStep.
  double late_us = 0;
  double late_by_cause_us[late_cause_count] = {};
  struct step_lateness {
    int step = -1;
    std::size_t times_last = 0;
    double late_us = 0;
    double by_cause_us[late_cause_count] = {};
  };
  std::vector<step_lateness> late_by_step; ///< by step
};

/// One rank's clock on the job's (job_clocks).
struct rank_clock {
  int rank = 0;
  std::int64_t offset_ns = 0;           ///< what the analyses used (clock_offsets_ns)
  std::int64_t base_time_offset_ns = 0; ///< from Kineto's base time, against the reference
  /// From the collectives, against the reference; set when the rank shares matched collectives
  /// (directly or through other ranks) with the reference.
  std::optional<std::int64_t> collective_offset_ns;
  std::size_t collectives = 0; ///< matched collectives the solve used on this rank
  /// |its collective's end + offset - the median of the other members'|, over those
  /// collectives (us): how well one offset explains them all.
  double median_abs_residual_us = 0, max_abs_residual_us = 0;
  /// |collective_offset_ns - base_time_offset_ns| (us); 0 without a collective offset.
  double disagreement_us = 0;
};

/// How the ranks' clocks were aligned, and how well.
struct job_clocks {
  clock_alignment requested = clock_alignment::automatic;
  clock_alignment used = clock_alignment::base_time; ///< base_time or collectives
  int reference_rank = 0;        ///< its offset is 0: the job clock is its own axis
  std::vector<rank_clock> ranks; ///< in input order
  /// TDIAG-TR-263: base time and the collectives disagree by more than the residual.
  std::vector<diagnostic> warnings;
};

/// One ProfilerStep on one rank: how its wall time splits on the GPU.
struct step_time {
  int rank = 0;
  int step = 0;
  std::int64_t start_ns = 0, end_ns = 0; ///< the ProfilerStep range on the rank's own axis
  double step_us = 0;                    ///< the host ProfilerStep range
  double gpu_busy_us = 0;                ///< union of GPU rows within the step
  double compute_us = 0, communication_us = 0, memory_us = 0; ///< unions per class, clipped
  [[nodiscard]] double gpu_idle_us() const noexcept { return step_us - gpu_busy_us; }
};

/// A kernel whose total time on one rank deviates from the median over ranks.
struct rank_deviation {
  int rank = 0;
  std::string name;
  kernel_class type = kernel_class::other;
  double sum_us = 0, median_us = 0;
  [[nodiscard]] double delta_us() const noexcept { return sum_us - median_us; }
};

struct job_analysis_result {
  analysis_options options;
  std::vector<rank_analysis> ranks;           ///< in rank order
  std::vector<kernel_type_time> kernel_types; ///< summed over ranks, largest first
  std::vector<std::int64_t> clock_offsets_ns; ///< per rank (input order), added to its times
  job_clocks clocks;                          ///< how clock_offsets_ns were found
  std::vector<collective_wait> collectives;   ///< matched on every member, in time order
  std::vector<unmatched_collective> unmatched_collectives; ///< by rank, then start
  std::vector<rank_wait> waits;                            ///< per rank
  std::vector<step_time> steps;                            ///< per rank and step
  std::vector<rank_deviation> deviations;                  ///< largest |delta| first (at most 20)
};

/// One rank of a job: a finalized trace, its rank number, and what to add to its times to put
/// it on the job's clock (job_member::clock_offset_ns).
struct rank_trace {
  int rank = 0;
  const trace* t = nullptr;
  std::int64_t clock_offset_ns = 0;
};

/// The ranks of a loaded job with their clock offsets, in its order; they point into `job`.
[[nodiscard]] std::vector<rank_trace> rank_traces(std::span<const job_member> job);

/// Analyses one rank. `t` must be finalized. Thread-safe for distinct or const traces.
[[nodiscard]] rank_analysis analyze_rank(const trace& t, int rank,
                                         const analysis_options& options = {});
/// Analyses every rank (in parallel over up to `threads` threads; 0 = hardware concurrency)
/// and sums the kernel-type breakdown over ranks.
[[nodiscard]] job_analysis_result analyze_job(std::span<const rank_trace> ranks,
                                              const analysis_options& options = {},
                                              unsigned threads = 0);

/// The result as JSON, schema `tensordiag.analysis/v1` (docs/analysis.md): per rank, fields
/// named like HTA's (idle_time_us, comp_comm_overlap_pct, num_launches, ...).
[[nodiscard]] std::string analysis_json(const job_analysis_result& result);

} // namespace tdiag::trace
