// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/op_registry.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "rules/builtin_rules.hpp"

namespace tdiag::dtensor {

void op_registry::add(op_rule rule) {
  if (rule.name.empty() || !rule.propagate) {
    diagnostic d;
    d.code = std::string(codes::no_rule);
    d.title = "invalid op rule";
    d.message = fmt::format("cannot register rule '{}': it needs a name and a propagate function",
                            rule.name);
    throw input_error(std::move(d));
  }
  auto name = rule.name;
  rules_.insert_or_assign(std::move(name), std::move(rule));
}

const op_rule* op_registry::find(std::string_view name) const {
  auto it = rules_.find(name);
  return it == rules_.end() ? nullptr : &it->second;
}

const op_rule* op_registry::resolve(std::string_view typed) const {
  std::string base(typed);
  if (base.rfind("torch.ops.", 0) == 0)
    base = base.substr(10);
  if (base.rfind("aten.", 0) != 0)
    base = "aten." + base;
  if (const auto* r = find(base))
    return r;
  for (std::string_view overload : {".default", ".Tensor", ".dim", ".int"}) {
    if (const auto* r = find(base + std::string(overload)))
      return r;
  }
  return nullptr;
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

// `aten.mm.default` → `mm`, the part a user types.
std::string_view core_name(std::string_view s) {
  if (s.rfind("aten.", 0) == 0)
    s.remove_prefix(5);
  if (auto dot = s.find('.'); dot != std::string_view::npos)
    s = s.substr(0, dot);
  return s;
}
} // namespace

std::vector<std::string> op_registry::nearest(std::string_view typed, std::size_t count) const {
  const auto want = core_name(typed);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& [name, rule] : rules_) {
    const auto have = core_name(name);
    std::size_t d = edit_distance(want, have);
    // A shared prefix (`relu` for `relu6`) is a stronger hint than the raw distance says.
    if (!want.empty() && !have.empty() && (have.rfind(want, 0) == 0 || want.rfind(have, 0) == 0))
      d = d / 2;
    scored.emplace_back(d, name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < count; ++i)
    out.push_back(scored[i].second);
  return out;
}

std::vector<std::string> op_registry::names() const {
  std::vector<std::string> out;
  out.reserve(rules_.size());
  for (const auto& [name, rule] : rules_)
    out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

op_registry op_registry::with_builtin_rules() {
  op_registry r;
  detail::add_pointwise_rules(r);
  detail::add_matrix_rules(r);
  detail::add_reduction_rules(r);
  detail::add_softmax_norm_rules(r);
  detail::add_view_rules(r);
  detail::add_tensor_op_rules(r);
  return r;
}

const op_registry& op_registry::builtin() {
  static const op_registry registry = with_builtin_rules();
  return registry;
}

} // namespace tdiag::dtensor
