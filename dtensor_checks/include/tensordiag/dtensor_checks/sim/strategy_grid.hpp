// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Validates every strategy a rule set can produce: for each op, a grid of argument shapes
// (uneven ones included) and meshes, with the input placements enumerated (or sampled when
// there are too many combinations); every distinct candidate the rule returns is validated
// numerically (strategy_validator.hpp).
#pragma once

#include <tensordiag/dtensor_checks/op_registry.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_validator.hpp>

#include <map>
#include <string>
#include <vector>

namespace tdiag::dtensor::sim {

/// The arguments of one call without placements (tensor specs carry shape and dtype only).
using call_template = std::vector<op_arg>;

/// The built-in argument grid for one of the 37 corpus ops (empty for other ops).
[[nodiscard]] std::vector<call_template> builtin_call_templates(std::string_view op);

/// The meshes of the issue: [4], [8], [2,2], [2,4], [4,2], [2,2,2].
[[nodiscard]] std::vector<device_mesh> default_meshes();

struct grid_options {
  std::vector<device_mesh> meshes = default_meshes();
  std::vector<std::string> ops; ///< overload names (resolved); empty = every op with a reference
  /// Extra or replacement argument grids per op (a user op needs one).
  std::map<std::string, std::vector<call_template>> templates;
  /// Input placement combinations tried per (op, template, mesh): all when there are at most
  /// this many, else this many sampled at random (seeded).
  std::size_t max_placement_combos = 256;
  std::size_t max_failures_kept = 8; ///< per op
  validation_options validation;
};

struct op_grid_summary {
  std::string op;
  std::size_t calls = 0;      ///< (template, mesh, input placements) tried
  std::size_t rejected = 0;   ///< calls the rule rejected (in-place, shapes, ...)
  std::size_t strategies = 0; ///< distinct candidate strategies validated
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t not_applicable = 0;
  std::vector<diagnostic> failures; ///< the first max_failures_kept
};

struct grid_result {
  std::vector<op_grid_summary> ops;
  [[nodiscard]] std::size_t strategies() const noexcept;
  [[nodiscard]] std::size_t failed() const noexcept;
  [[nodiscard]] bool ok() const noexcept { return failed() == 0; }
};

/// Runs the grid. Throws tdiag::input_error when a requested op has no rule, no reference or no
/// argument grid (naming it).
[[nodiscard]] grid_result validate_rule_set(const op_registry& rules,
                                            const reference_registry& references,
                                            const grid_options& options = {});

} // namespace tdiag::dtensor::sim
