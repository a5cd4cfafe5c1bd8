// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Checking a whole case corpus: every case answered, the answers as JSONL in file order and the
// rejections as a report. What `tdiag shard check` prints and `tensordiag.dtensor.check_cases`
// returns.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

struct case_check {
  case_file file;
  std::vector<case_answer> answers; ///< one per file.cases, same order
  std::size_t rejected = 0;         ///< answers that are not ok
};

/// Answers every case of `file` (never throws for a rejected case).
[[nodiscard]] case_check check_cases(case_file file,
                                     const op_registry& registry = op_registry::builtin());

/// The answers in file order, one line each (newline-terminated); a malformed line gets its error
/// line in its place.
[[nodiscard]] std::string to_jsonl(const case_check& check);

/// The rejections and malformed lines as diagnostics located at `source`:line, each rejected
/// case's diagnostic with an `id` field.
[[nodiscard]] report check_report(const case_check& check, std::string_view source);

} // namespace tdiag::dtensor
