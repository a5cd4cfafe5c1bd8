// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Where a recorded DTensor program communicates, and why (`tdiag shard report`,
// tensordiag.dtensor.report): the user's source lines ranked by the bytes PyTorch redistributed
// before their ops, the modules ranked (forward and backward apart) by the bytes of the
// collectives they issued, the op and argument that forced each redistribution, the placement
// change that would avoid it where propagation knows one, and every recorded op on which our
// propagation disagrees with PyTorch's. The text, the JSON (schema tensordiag.shard_report/v1,
// docs/dtensor.md) and the core report are renderings of one comm_report.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// How byte counts print in the report's sentences (front ends pass trace::format_bytes, the
/// one units module); empty: `16,384 bytes`.
using bytes_formatter = std::function<std::string(std::int64_t)>;

/// A placement change of the redistributed argument under which the op needs no communication,
/// verified by propagating the call with it.
struct placement_fix {
  placement_list placements; ///< the argument's proposed placements, every mesh dim
  placement_list output;     ///< the op's first output under them
  /// The output equals what PyTorch produced; otherwise it converts to that without
  /// communication (a local chunk or partition), or, for a fix on another argument, with
  /// `output_bytes` of communication.
  bool same_output = true;
  /// The fix changes another argument (index into the op's args), not the redistributed one:
  /// placed as `placements`, it lets the op run without the redistribution (Megatron's
  /// row-parallel weight, for a gather of column-sharded activations).
  std::optional<std::size_t> other_arg;
  std::string other_arg_name;
  placement_list other_was;      ///< that argument's recorded placements
  std::int64_t output_bytes = 0; ///< per rank per call, to bring the output to the recorded one
  collective output_comm = collective::none;
  placement_list recorded_output; ///< what PyTorch produced (for a fix on another argument)
  /// A fix on the redistributed argument that is PyTorch's own target: the op needs no
  /// redistribution, but whatever produces the argument would have to communicate instead.
  bool moves_communication = false;
};

/// The redistributions of one argument of one op on one source line, merged over records.
struct comm_cause {
  std::string op;
  device_mesh mesh;
  std::size_t arg = 0;             ///< index into the op's args
  std::optional<std::size_t> item; ///< the element of a `tensors` argument
  std::string arg_name;            ///< the schema's name (`self`, `mat2`); empty when unknown
  placement_list arrived;          ///< the argument's placements as the op received it
  std::vector<recorded_redistribution> steps; ///< of one call
  comm_counts comms;                          ///< of one call
  std::int64_t bytes_per_call = 0;            ///< Σ bytes_per_rank of one call's steps
  std::int64_t calls = 0;
  std::int64_t bytes = 0; ///< bytes_per_call × calls
  std::vector<std::string> ids;
  std::optional<placement_fix> fix;
  std::string suggestion; ///< the fix as a sentence, or why none is known
};

/// One user source line that redistributed.
struct comm_line {
  source_frame source;            ///< file empty: records without a source
  std::int64_t bytes = 0;         ///< Σ bytes_per_rank × calls
  std::int64_t count = 0;         ///< Σ redistributions × calls
  comm_counts comms;              ///< collectives × calls
  std::vector<comm_cause> causes; ///< most bytes first
};

/// The ranking's name for collectives issued outside every module.
inline constexpr std::string_view top_level_module = "<top level>";

/// One module in one phase that communicated, over every record the recorder placed in it.
/// A record counts once per call: a standalone collective (FSDP2's all-gathers and
/// reduce-scatters, torch.distributed's) by itself, a DTensor op by the collectives it issued,
/// or by its redistributions where none were recorded.
struct comm_module {
  std::string module;     ///< ModTracker's name; top_level_module outside every module
  std::string phase;      ///< `forward`, `backward`; empty when not recorded
  std::int64_t bytes = 0; ///< Σ bytes_per_rank × calls of the collectives issued
  std::int64_t count = 0; ///< collectives × calls
  std::map<std::string, std::int64_t> collectives; ///< kind → collectives × calls
  std::map<std::string, std::int64_t> ops;         ///< op → calls
  std::map<std::string, std::int64_t> lines;       ///< `file:line` → bytes (recorded sources)
};

/// Every module and phase of `cases` that issued a collective, most bytes first, then most
/// collectives, then module, then phase. Empty when no record carries `module` or `phase`
/// (a recording made without collectives, or the golden corpus).
[[nodiscard]] std::vector<comm_module> rank_modules(const std::vector<dtensor_case>& cases);

struct comm_report {
  std::string source;               ///< the recording's path, as given
  std::vector<comm_line> lines;     ///< most bytes first, then most redistributions, then file:line
  std::vector<comm_module> modules; ///< rank_modules() of the records
  std::size_t records = 0;          ///< records read
  std::int64_t calls = 0;           ///< op calls they stand for
  std::int64_t bytes = 0;           ///< Σ over lines
  std::int64_t count = 0;           ///< Σ over lines
  std::size_t checked = 0;          ///< records with an `expect` whose op our rules cover
  std::size_t agree = 0;            ///< of those, records on which we agree with PyTorch
  std::map<std::string, std::size_t> not_covered; ///< op → records without a rule
  std::vector<diagnostic> findings; ///< disagreements (TDIAG-DT-402..404), at the user's line
  bytes_formatter format_bytes;     ///< how the sentences and the text print bytes
};

/// Ranks the redistributions of a recording, proposes fixes and compares every recorded op with
/// our propagation. `source` names the recording in the report. Never throws for a record that
/// propagation rejects or does not cover. `format_bytes` is kept in the report for to_text().
[[nodiscard]] comm_report build_comm_report(const case_file& file, std::string source,
                                            const bytes_formatter& format_bytes = {},
                                            const op_registry& registry = op_registry::builtin());

/// The ranked table (the first `top` lines; 0 = all), the modules table (the first `top`
/// module phases) when the recording has modules, then each shown line's causes and fixes, then
/// the agreement with PyTorch and its findings. Several lines, trailing newline.
[[nodiscard]] std::string to_text(const comm_report& r, std::size_t top = 10);
/// The modules table alone (`N module phases moved ...`, the first `top` rows; 0 = all);
/// empty when the report has no modules.
[[nodiscard]] std::string modules_text(const comm_report& r, std::size_t top = 10);
/// The report as JSON, schema `tensordiag.shard_report/v1` (docs/dtensor.md); every line and
/// module when `top` is 0.
[[nodiscard]] std::string to_json(const comm_report& r, std::size_t top = 0);
/// The core report: one warning (TDIAG-DT-401) per redistributing line, located at it, with the
/// causes and fixes in its message and fields; then the findings.
[[nodiscard]] report to_report(const comm_report& r, std::size_t top = 0);

} // namespace tdiag::dtensor
