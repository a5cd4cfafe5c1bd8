// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The case corpus (../shared/README.md): JSONL cases in, JSONL answers out. A recording of a
// PyTorch program (tensordiag.torch.record_dtensor) is a case file whose lines also carry the
// user's source line, the redistributions PyTorch ran and a call count (docs/dtensor.md). Reading
// uses simdjson's on-demand parser; a malformed line is reported with its line number and the
// field that is wrong, and the rest still read.
#pragma once

#include <tensordiag/dtensor_checks/errors.hpp>
#include <tensordiag/dtensor_checks/op_registry.hpp>
#include <tensordiag/dtensor_checks/op_schema.hpp>
#include <tensordiag/dtensor_checks/redistribute.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// An output as the corpus records it.
struct output_record {
  shape_t shape;
  placement_list placements;
  friend bool operator==(const output_record&, const output_record&) = default;
};

/// What PyTorch did (`expect` in the corpus).
struct case_expectation {
  bool ok = true;
  std::vector<output_record> outputs;
  comm_counts comms;
  std::string error_class; ///< `user_error` or `limitation` when !ok; empty = unknown
  std::string error_type;  ///< `RuntimeError`, `AssertionError`, ...
  std::string error;       ///< PyTorch's message
};

/// The user's frame that issued a recorded op (the first frame outside torch and tensordiag).
struct source_frame {
  std::string file;
  std::int64_t line = 0; ///< 1-based; 0 when unknown
  std::string function;
  std::string code; ///< the source text of the line
  friend bool operator==(const source_frame&, const source_frame&) = default;
};

/// One mesh-dim transform PyTorch ran on an input of a recorded op before the op.
struct recorded_redistribution {
  std::size_t arg = 0;             ///< index into op_call::args
  std::optional<std::size_t> item; ///< the element of a `tensors` argument
  std::size_t mesh_dim = 0;
  placement from;
  placement to;
  collective comm = collective::none;
  std::int64_t bytes_per_rank = 0; ///< as redistribute_step::bytes_per_rank
  friend bool operator==(const recorded_redistribution&, const recorded_redistribution&) = default;
};

/// A collective the recorder saw issued (`collective` of a standalone record, `collectives` of a
/// DTensor op's): its kind in the recorder's spelling (`all_gather`, `broadcast`, `send`, ...)
/// and the larger of what one rank sends and receives.
struct issued_collective {
  std::string op; ///< the dispatcher op, e.g. `c10d._allgather_base_.default`; may be empty
  std::string kind;
  std::int64_t bytes_per_rank = 0;
  friend bool operator==(const issued_collective&, const issued_collective&) = default;
};

struct dtensor_case {
  std::string id;
  op_call call; ///< the mesh carries `mesh_dim_names` when the line has them
  std::optional<case_expectation> expect;
  std::size_t line = 0; ///< 1-based line in the file
  // A recording's extra fields (absent in the golden corpus).
  std::optional<source_frame> source;
  std::vector<recorded_redistribution> redistributions; ///< for one call
  std::int64_t calls = 1; ///< identical records merged by the recorder
  /// The module that ran the op (ModTracker's name); empty: outside every module, or not
  /// recorded. `phase`: `forward` or `backward`; empty when not recorded.
  std::string module;
  std::string phase;
  bool has_module = false; ///< the record carries `module` or `phase` (even null)
  /// The collectives one call issued: a standalone record's `collective`, else a DTensor op's
  /// `collectives`.
  std::vector<issued_collective> collectives;
  bool standalone = false; ///< a record of one collective issued outside DTensor
};

/// A line that could not be read.
struct case_read_error {
  std::size_t line = 0;
  std::string id; ///< when the id could still be read
  std::string message;
};

struct case_file {
  std::vector<dtensor_case> cases;
  std::vector<case_read_error> errors;
};

/// Parses a whole JSONL text; blank lines are skipped. Never throws for bad lines.
[[nodiscard]] case_file parse_cases(std::string_view jsonl);
/// Reads (tdiag::read_input_file: "-" is standard input, within the memory budget) and parses a
/// file; throws tdiag::input_error when it cannot be read.
[[nodiscard]] case_file read_case_file(const std::filesystem::path& path);
/// read_case_file() that also throws tdiag::input_error (TDIAG-DT-020) for the first malformed
/// line, as one line `PATH:LINE: malformed case 'ID': what is wrong`.
[[nodiscard]] case_file read_case_file_strict(const std::filesystem::path& path);
/// parse_cases() that throws as read_case_file_strict() does, naming the text `name`.
[[nodiscard]] case_file parse_cases_strict(std::string_view jsonl, const std::string& name);
/// Parses one case line; throws tdiag::input_error with a message on malformed input.
[[nodiscard]] dtensor_case parse_case_line(std::string_view line);

/// A checker's answer for one case (the README's answer format).
struct case_answer {
  std::string id;
  bool ok = false;
  std::vector<output_record> outputs;
  comm_counts comms;
  std::string error; ///< the first line of the diagnostic message when !ok
  std::string code;  ///< TDIAG-DT-NNN when !ok
  error_class kind = error_class::user_error;
  std::optional<diagnostic> diag; ///< the full diagnostic when !ok
};

/// Propagates one case and records the answer (never throws for a rejected call).
[[nodiscard]] case_answer answer_case(const dtensor_case& c,
                                      const op_registry& registry = op_registry::builtin());
/// One JSON line (no trailing newline): `{"id":..,"ok":true,"outputs":[..],"comms":{..}}`.
[[nodiscard]] std::string to_jsonl(const case_answer& answer);
/// The answer for an unreadable line.
[[nodiscard]] std::string to_jsonl(const case_read_error& error);

} // namespace tdiag::dtensor
