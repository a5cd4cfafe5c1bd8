// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The op-rule registry: the built-in rules for the aten ops tensordiag models, and rules users
// add from their own code for their own ops.
#pragma once

#include <tensordiag/dtensor_checks/sharding_rule.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tdiag::dtensor {

/// A registered rule.
struct op_rule {
  std::string name;                   ///< full overload name: `aten.mm.default`
  std::string family;                 ///< `pointwise`, `matrix`, ... (docs and explain output)
  std::vector<std::string> arg_names; ///< schema names of the positional args: `self`, `mat2`
  bool inplace = false;               ///< output must keep `self`'s placements; self never moves
  rule_function propagate;
};

/// Maps overload names to rules. Not thread-safe for concurrent add(); lookups are const.
class op_registry {
public:
  /// Adds `rule`, replacing a rule of the same name. Throws tdiag::input_error when the name is
  /// empty or the function is missing.
  void add(op_rule rule);
  /// The rule for `name`, or nullptr. Accepts the full overload name only.
  [[nodiscard]] const op_rule* find(std::string_view name) const;
  /// Resolves a user-typed name: `aten.mm.default`, `aten.mm`, `mm`, `mm.default` and `add_`
  /// all name a registered overload when exactly one fits (`.default` first, then `.Tensor`).
  [[nodiscard]] const op_rule* resolve(std::string_view typed) const;
  /// Up to `count` registered names closest to `typed` (edit distance), best first.
  [[nodiscard]] std::vector<std::string> nearest(std::string_view typed,
                                                 std::size_t count = 3) const;
  /// All names, sorted.
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] std::size_t size() const noexcept { return rules_.size(); }

  /// A registry holding every built-in rule (a copy: adding to it never changes builtin()).
  [[nodiscard]] static op_registry with_builtin_rules();
  /// The shared built-in registry.
  [[nodiscard]] static const op_registry& builtin();

private:
  // Heterogeneous lookup: find() by string_view without building a std::string.
  struct name_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, op_rule, name_hash, std::equal_to<>> rules_;
};

} // namespace tdiag::dtensor
