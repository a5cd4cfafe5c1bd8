// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/case_check.hpp>

#include <fmt/format.h>

#include <utility>

namespace tdiag::dtensor {

case_check check_cases(case_file file, const op_registry& registry) {
  case_check check;
  check.answers.reserve(file.cases.size());
  for (const auto& c : file.cases) {
    check.answers.push_back(answer_case(c, registry));
    check.rejected += check.answers.back().ok ? 0 : 1;
  }
  check.file = std::move(file);
  return check;
}

std::string to_jsonl(const case_check& check) {
  const auto& cases = check.file.cases;
  const auto& errors = check.file.errors;
  std::string text;
  std::size_t ci = 0;
  std::size_t ei = 0;
  while (ci < cases.size() || ei < errors.size()) {
    const bool take_error =
        ei < errors.size() && (ci >= cases.size() || errors[ei].line < cases[ci].line);
    text += take_error ? to_jsonl(errors[ei++]) : to_jsonl(check.answers[ci++]);
    text += '\n';
  }
  return text;
}

report check_report(const case_check& check, std::string_view source) {
  report r;
  r.metadata = make_report_metadata("tdiag shard check");
  for (const auto& e : check.file.errors) {
    diagnostic d;
    d.code = std::string(codes::malformed_case);
    d.title = "malformed case";
    d.message = fmt::format("line {}: {}", e.line, e.message);
    d.location.file = std::string(source);
    d.location.line = static_cast<std::uint32_t>(e.line);
    d.hint = "each line must be one JSON case object as described in shared/README.md";
    r.diagnostics.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < check.answers.size(); ++i) {
    const auto& answer = check.answers[i];
    if (answer.ok || !answer.diag)
      continue;
    auto d = *answer.diag;
    d.location.file = std::string(source);
    d.location.line = static_cast<std::uint32_t>(check.file.cases[i].line);
    d.add_field("id", check.file.cases[i].id);
    r.diagnostics.push_back(std::move(d));
  }
  return r;
}

} // namespace tdiag::dtensor
