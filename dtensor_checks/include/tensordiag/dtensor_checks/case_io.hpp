// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The case corpus (../shared/README.md): JSONL cases in, JSONL answers out. Reading uses
// simdjson's on-demand parser; a malformed line is reported with its line number and the rest
// still read.
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
  std::string error_class; ///< `user_error` or `limitation` when !ok
  std::string error_type;  ///< `RuntimeError`, `AssertionError`, ...
  std::string error;       ///< PyTorch's message
};

struct dtensor_case {
  std::string id;
  op_call call;
  std::optional<case_expectation> expect;
  std::size_t line = 0; ///< 1-based line in the file
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
