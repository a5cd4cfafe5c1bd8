// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor {

double corpus_score::agreement() const noexcept {
  if (total == 0)
    return 1.0;
  return static_cast<double>(ok_agree + user_error_rejected + limitation_cases + unknown_cases) /
         static_cast<double>(total);
}

double corpus_score::comms_agreement() const noexcept {
  if (ok_cases == 0)
    return 1.0;
  return static_cast<double>(comms_agree) / static_cast<double>(ok_cases);
}

std::string comms_to_json(const comm_counts& counts) {
  detail::json_out out(detail::json_style::compact);
  out.begin_object();
  for (auto c : {collective::all_gather, collective::all_reduce, collective::reduce_scatter,
                 collective::all_to_all}) {
    if (counts[c] != 0)
      out.member(to_string(c), static_cast<std::int64_t>(counts[c]));
  }
  out.end_object();
  return out.take();
}

namespace {
std::string outputs_text(const std::vector<output_record>& outs) {
  std::vector<std::string> parts;
  for (const auto& o : outs)
    parts.push_back(fmt::format("{} {}", to_string(o.shape), to_string(o.placements)));
  return fmt::format("{}", fmt::join(parts, "; "));
}
} // namespace

corpus_score score_answers(const std::vector<dtensor_case>& cases,
                           const std::vector<case_answer>& answers) {
  corpus_score s;
  for (std::size_t i = 0; i < cases.size() && i < answers.size(); ++i) {
    const auto& c = cases[i];
    if (!c.expect)
      continue;
    const auto& e = *c.expect;
    const auto& a = answers[i];
    auto& op = s.per_op[c.call.op];
    ++s.total;
    ++op.cases;
    if (e.ok) {
      ++s.ok_cases;
      const bool agree = a.ok && a.outputs == e.outputs;
      if (agree) {
        ++s.ok_agree;
      } else {
        ++op.disagree;
        s.disagreements.push_back(
            fmt::format("{} {}: expected {}, got {}", c.id, c.call.op, outputs_text(e.outputs),
                        a.ok ? outputs_text(a.outputs) : "rejected: " + a.error));
      }
      if (a.ok && a.comms == e.comms) {
        ++s.comms_agree;
      } else {
        ++op.comms_disagree;
        s.comms_disagreements.push_back(fmt::format("{} {}: expected {}, got {}", c.id, c.call.op,
                                                    comms_to_json(e.comms),
                                                    a.ok ? comms_to_json(a.comms) : "rejected"));
      }
    } else if (e.error_class == "limitation") {
      ++s.limitation_cases;
      if (!a.ok)
        ++s.limitation_rejected;
    } else if (e.error_class.empty()) {
      ++s.unknown_cases;
      if (!a.ok)
        ++s.unknown_rejected;
    } else {
      ++s.user_error_cases;
      if (!a.ok) {
        ++s.user_error_rejected;
      } else {
        ++op.disagree;
        s.disagreements.push_back(fmt::format("{} {}: PyTorch rejects ({}), we accept with {}",
                                              c.id, c.call.op, e.error.substr(0, 120),
                                              outputs_text(a.outputs)));
      }
    }
  }
  return s;
}

} // namespace tdiag::dtensor
