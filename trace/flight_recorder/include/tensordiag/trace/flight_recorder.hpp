// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// PyTorch Flight Recorder forensics: why is a distributed job stuck, and which rank holds it.
// load_dumps() reads one dump per rank (pickle protocols 2-5 through the safe pickle reader, or
// the JSON form; dump versions 2.x; any back-end); analyze() matches every process group's
// collectives across its member ranks and names the culprits, each with the cause the evidence
// supports and no stronger; to_json() (schema tensordiag.fr/v1), to_text() and to_report()
// (tdiag::report, so every report format follows) render the verdict. docs/flight-recorder.md
// documents the model, the causes and the codes (fr_codes.hpp).
// Every function is reentrant and keeps no state: a binding calls them from any thread.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace::fr {

/// An entry's state as the dump states it. Without timing (TORCH_NCCL_ENABLE_TIMING) every
/// entry stays `scheduled`; analyze() then reads completion from pg_status where it can.
enum class entry_state : std::uint8_t { scheduled, started, completed };

/// "scheduled", "started", "completed".
[[nodiscard]] std::string_view to_string(entry_state state) noexcept;

struct frame {
  std::string name;
  std::string file;
  std::int64_t line = 0;
};

/// Tensor sizes and dtypes of one call (interned per dump: most calls share a few).
struct tensor_shapes {
  std::vector<std::vector<std::int64_t>> input_sizes;
  std::vector<std::vector<std::int64_t>> output_sizes;
  std::vector<std::string> input_dtypes;
  std::vector<std::string> output_dtypes;
};

/// One ring entry, compact (a job may hold tens of millions): strings, shapes and stacks are
/// indices into the tables of its dump.
struct entry {
  std::int64_t record_id = 0;
  std::int64_t collective_seq_id = 0;
  std::int64_t p2p_seq_id = 0;
  std::int64_t time_created_ns = 0;
  std::int64_t time_started_ns = -1;   ///< -1: not discovered
  std::int64_t time_completed_ns = -1; ///< -1: not discovered
  std::uint32_t group = 0;             ///< index into dump::groups
  std::uint32_t op = 0;                ///< index into dump::ops (the profiling name)
  std::uint32_t shapes = 0;            ///< index into dump::shapes
  std::uint32_t stack = 0;             ///< index into dump::stacks (0: no frames)
  std::int32_t pg_id = -1;             ///< the group's id in this rank's own numbering
  float duration_ms = -1;              ///< -1: absent
  entry_state state = entry_state::scheduled;
  bool is_p2p = false;
  bool retired = false;
};

/// A process group as one dump knows it (pg_config, or only its entries' process_group).
struct group_config {
  std::string name; ///< the key groups are matched by across ranks
  std::string desc;
  std::vector<int> ranks; ///< global ranks; empty when the dump states none
};

/// pg_status of one group: how far it got, -1 when unknown or not tracked.
struct group_status {
  std::int64_t pg_id = -1;
  std::int64_t last_enqueued = -1;
  std::int64_t last_started = -1;
  std::int64_t last_completed = -1;
};

enum class dump_status : std::uint8_t {
  ok,         ///< a dump with a ring
  empty_file, ///< a file of zero bytes: the rank could not write its dump
  empty_ring, ///< a dump without entries
  unreadable, ///< a file cut short or corrupt (a rank dying as it wrote): `dump::problem` says why
};

/// One rank's dump.
struct dump {
  int rank = -1;
  std::string source; ///< the file, as messages name it
  dump_status status = dump_status::ok;
  std::string problem;     ///< unreadable: the reader's one line
  std::string version;     ///< "2.4" ... ; empty for an empty file
  int pickle_protocol = 0; ///< 0 for JSON or an empty file
  std::string comm_lib_version;
  std::vector<group_config> groups;
  std::vector<group_status> status_by_pg;
  std::vector<entry> entries; ///< the ring, oldest first
  std::vector<std::string> ops;
  std::vector<tensor_shapes> shapes;
  std::vector<std::vector<frame>> stacks{{}}; ///< stacks[0] is the empty stack
};

/// Bounds for reading dumps.
struct load_options {
  pickle_limits limits; ///< per pickle; max_bytes defaults to the memory budget
  unsigned threads = 0; ///< 0: hardware concurrency
};

/// Files, folders (their files whose name ends in a rank number, e.g. `_dump_3`, `rank3.json`)
/// and glob patterns, expanded in order. Throws tdiag::input_error TDIAG-FR-001 when nothing
/// matches.
[[nodiscard]] std::vector<std::string> expand_inputs(std::span<const std::string> inputs);

/// True when the inputs are Flight Recorder dumps rather than traces: some file they name (a
/// folder's or a glob's as expand_inputs() gives them) opens like a dump (a pickle or a JSON
/// object with a ring's keys: `entries`, `pg_config`, `pg_status`; not a Kineto trace or a
/// memory snapshot). Reads at most 64 KiB of each file; never throws. The viewer asks this to
/// tell a folder of dumps from a folder of traces.
[[nodiscard]] bool looks_like_dumps(std::span<const std::string> inputs) noexcept;

/// Parses one dump held in memory (pickle or JSON, told apart by content; zero bytes is an
/// empty dump). `rank` is used when the dump has no `rank` key; -1 means none. Throws
/// tdiag::input_error with a one-line message naming `source` (TDIAG-FR-00N, or the pickle
/// reader's TDIAG-TR-1NN) on anything malformed or over a limit. `limits.max_depth` does not
/// apply: the reader walks a dump's fixed shape and never recurses, so nesting and cycles are
/// not checked.
[[nodiscard]] dump parse_dump(std::string_view bytes, std::string_view source, int rank = -1,
                              const pickle_limits& limits = {});

/// Reads one dump file; the rank from the dump, else the file name's trailing number.
[[nodiscard]] dump read_dump(const std::string& path, const load_options& options = {});

/// expand_inputs() then read_dump() on each, in parallel; sorted by rank. A dump whose content
/// is damaged (cut short or corrupt: TDIAG-TR-101..103, TDIAG-FR-003) but whose name tells its
/// rank becomes an `unreadable` dump of that rank, as a rank that died while it wrote leaves.
/// Any other failure is thrown (a file that is no dump or cannot be opened, an unsupported
/// version, an unsafe pickle, a limit or the memory budget), as is the first damaged one when
/// no file reads. TDIAG-FR-005 for a rank claimed twice.
[[nodiscard]] std::vector<dump> load_dumps(std::span<const std::string> inputs,
                                           const load_options& options = {});

/// Why a rank holds the job. Each is the strongest claim its evidence supports.
enum class cause : std::uint8_t {
  not_reached,   ///< never issued the collective the others wait in (host side)
  not_completed, ///< issued it, its work never completed (device or network side)
  desync,        ///< issued a different collective, or other sizes or dtypes
  no_dump,       ///< left no readable dump (none, empty, or unreadable); inferred from the others
};

/// "not_reached", "not_completed", "desync", "no_dump".
[[nodiscard]] std::string_view to_string(cause c) noexcept;

/// PyTorch's analyzer words (MatchState), plus missing_ranks for ranks that never issued it.
enum class match_state : std::uint8_t {
  fully_matched,
  collective_type_mismatch,
  size_or_syntax_mismatch,
  collective_state_mismatch,
  collective_dtype_mismatch,
  undecided,
  missing_ranks,
};

/// "FULLY_MATCHED", "COLLECTIVE_TYPE_MISMATCH", ... "MISSING_RANKS".
[[nodiscard]] std::string_view to_string(match_state state) noexcept;

struct culprit {
  int rank = -1;
  enum cause cause = cause::not_reached;
  std::string pg; ///< group name
  std::string pg_desc;
  std::int64_t seq = -1; ///< the collective the others wait in (or the divergent one)
  std::string op;        ///< the collective's profiling name, as the waiting ranks issued it
  std::string detail;    ///< one sentence: the evidence
  /// The rank's own entry the verdict rests on (its last entry, the stuck one or the divergent
  /// one); absent for no_dump.
  std::int64_t own_seq = -1;
  std::string own_op;
  std::string own_state;     ///< "completed", "started", "scheduled", "not completed", ...
  std::vector<frame> frames; ///< that entry's stack, innermost first as the dump has it
};

struct mismatch {
  std::string pg;
  std::int64_t seq = -1;
  match_state state = match_state::fully_matched;
  bool p2p = false;
  std::string expected;           ///< what the majority issued ("nccl:all_reduce in [[4]] float")
  std::vector<int> ranks;         ///< the ranks that differ from it (or are missing)
  std::vector<std::string> found; ///< per rank in `ranks`, what it issued (empty: nothing)
  std::string detail;
  int p2p_rank = -1; ///< p2p: the rank whose call (seq, `expected`) has no match on `ranks`
};

struct group_report {
  std::string name;
  std::string desc;
  std::vector<int> ranks;        ///< members (pg_config)
  std::vector<int> dumped;       ///< members whose dump has this group's entries
  std::vector<int> without_dump; ///< members with no readable dump, or an empty one
  std::int64_t last_seq = -1;    ///< highest collective seq any member issued
  std::string last_op;
  bool stuck = false;                          ///< some member's collective never completed
  std::vector<int> waiting;                    ///< members waiting in an incomplete collective
  std::optional<std::size_t> first_divergence; ///< index into job_report::mismatches
  std::string verdict;                         ///< one sentence
};

/// How far an entry got as analyze() reads it: its own state and, for a collective, pg_status'
/// last started and completed collective of its group (without timing every entry stays
/// `scheduled`, and pg_status may still tell completion).
enum class entry_progress : std::uint8_t {
  unknown,   ///< completion not visible (no timing, no pg_status)
  pending,   ///< not completed; whether it started is not visible
  scheduled, ///< not started (starts are visible in this dump)
  started,   ///< started, not completed
  completed,
};

/// "state unknown", "not completed", "scheduled", "started", "completed" (culprit::own_state's
/// words).
[[nodiscard]] std::string_view to_string(entry_progress p) noexcept;

struct rank_report {
  int rank = -1;
  std::string source; ///< empty: no dump file
  dump_status status = dump_status::ok;
  std::string problem; ///< an unreadable dump's reason
  bool present = false;
  bool wrapped = false; ///< the ring's oldest entry is not record 0
  bool timing = false;  ///< start or completion visible (entries or pg_status)
  std::size_t entries = 0;
  std::string last_pg; ///< its newest entry
  std::int64_t last_seq = -1;
  std::string last_op;
  std::optional<entry_state> last_state;
  /// Per entry of its dump, in ring order: how far it got as the verdict reads it (the entry's
  /// state, its group's other members and pg_status); empty without a dump. Not in to_json().
  std::vector<entry_progress> progress;
};

/// A GPU kernel of a rank's trace, on the trace's own axis.
struct trace_kernel {
  std::string name;
  std::uint64_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
};

/// A culprit's own trace in the job's traces: what its GPU ran last.
struct culprit_trace {
  int rank = -1;
  std::string source;              ///< the trace file; empty when the job has none of this rank
  std::int64_t trace_begin_ns = 0; ///< the trace's span, own axis
  std::int64_t trace_end_ns = 0;
  std::vector<trace_kernel> last_kernels; ///< the last kernels by start, oldest first
};

/// A rank that arrived last at some of the job's collectives (the trace analysis's waits).
struct trace_straggler {
  int rank = -1;
  std::size_t times_last = 0; ///< collectives where it arrived last
  double wait_us = 0;         ///< it waited on the others, in total
  double late_us = 0;         ///< its lateness where it arrived last, in total
  std::string cause;    ///< the late_cause of most of that lateness ("compute", ...); "" = none
  double cause_us = 0;  ///< the lateness of that cause
  bool culprit = false; ///< also named by the verdict
};

/// The verdict joined with the job's traces (fr_traces.hpp: join_traces()).
struct trace_context {
  std::string run;                         ///< the traces' inputs as given (a folder: RUN/)
  std::size_t ranks = 0;                   ///< traces loaded
  std::size_t collectives = 0;             ///< collectives matched across the traces
  std::vector<culprit_trace> culprits;     ///< per culprit of the verdict, in its order
  std::vector<trace_straggler> stragglers; ///< latest in total first
};

/// The verdict on a job.
struct job_report {
  std::vector<culprit> culprits;
  std::vector<group_report> groups;
  std::vector<mismatch> mismatches;
  std::vector<rank_report> ranks;
  std::vector<std::string> unknowns; ///< what the evidence cannot tell, one sentence each
  bool stuck = false;                ///< some group has a collective that never completed
  /// With the job's traces (tdiag fr analyze --traces): the culprits' last kernels and the
  /// stragglers; absent without.
  std::optional<trace_context> traces;
  /// A culprit, a stuck collective, or a divergence of op, size or dtype (a state divergence
  /// alone is a collective in flight when the dumps were taken: no finding by itself).
  [[nodiscard]] bool findings() const noexcept {
    for (const auto& m : mismatches)
      if (m.state != match_state::collective_state_mismatch)
        return true;
    return !culprits.empty() || stuck;
  }
};

struct analyze_options {
  int world_size = 0; ///< when known: ranks below it without a dump count as members
};

/// Matches every group's collectives across its members and names the culprits, and says how
/// far each entry got (rank_report::progress). Pure: no I/O, no throw on any dump content (odd
/// dumps give notes, not errors), but for a job of more ranks (options.world_size, or the
/// members the dumps' pg_config names) than the memory budget holds: TDIAG-CORE-006.
[[nodiscard]] job_report analyze(std::span<const dump> dumps, const analyze_options& options = {});

/// JSON, schema `tensordiag.fr/v1` (docs/flight-recorder.md): culprits, groups, mismatches,
/// ranks, unknowns, and `traces` when the verdict was joined with the job's traces.
[[nodiscard]] std::string to_json(const job_report& r);
/// Text for people: culprits first, then the divergence per group, then the stacks.
[[nodiscard]] std::string to_text(const job_report& r);
/// The verdict as diagnostics with TDIAG-FR codes (culprits and mismatches at error severity),
/// so every tdiag report format renders it.
[[nodiscard]] tdiag::report to_report(const job_report& r);

} // namespace tdiag::trace::fr
