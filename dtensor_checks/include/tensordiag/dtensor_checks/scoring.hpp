// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Scoring answers against the corpus as ../shared/README.md describes: ok cases agree when the
// outputs (shapes and placements) are equal, user_error cases when rejected; limitation cases
// (and rejections a recording could not classify) go either way; collective counts are scored apart
// over the ok cases.
#pragma once

#include <tensordiag/dtensor_checks/case_io.hpp>

#include <map>
#include <string>
#include <vector>

namespace tdiag::dtensor {

struct op_score {
  std::size_t cases = 0;
  std::size_t disagree = 0;
  std::size_t comms_disagree = 0;
};

struct corpus_score {
  std::size_t total = 0;
  std::size_t ok_cases = 0;
  std::size_t ok_agree = 0;
  std::size_t user_error_cases = 0;
  std::size_t user_error_rejected = 0;
  std::size_t limitation_cases = 0;
  std::size_t limitation_rejected = 0;
  std::size_t unknown_cases = 0;    ///< rejected by PyTorch without a `class` (a recording)
  std::size_t unknown_rejected = 0; ///< scored like limitations: either answer agrees
  std::size_t comms_agree = 0;      ///< among ok cases whose outputs agree or not
  std::map<std::string, op_score> per_op;
  std::vector<std::string> disagreements;       ///< `id op: why`
  std::vector<std::string> comms_disagreements; ///< `id op: ours vs theirs`

  /// (ok_agree + user_error_rejected + limitation_cases + unknown_cases) / total.
  [[nodiscard]] double agreement() const noexcept;
  /// comms_agree / ok_cases.
  [[nodiscard]] double comms_agreement() const noexcept;
};

/// Scores `answers[i]` against `cases[i]`; cases without `expect` are skipped.
[[nodiscard]] corpus_score score_answers(const std::vector<dtensor_case>& cases,
                                         const std::vector<case_answer>& answers);

/// `{"all_gather":1,"all_reduce":1}` in the corpus key order (zero counts omitted).
[[nodiscard]] std::string comms_to_json(const comm_counts& counts);

} // namespace tdiag::dtensor
