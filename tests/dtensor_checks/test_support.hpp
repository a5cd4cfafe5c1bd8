// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Small builders shared by the dtensor_checks tests: calls written in the spec notation.
#pragma once

#include <tensordiag/dtensor_checks/explain.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tdiag::dtensor::test {

/// The hand-written recording of a 2-D tensor-parallel MLP (tests/data/dtensor).
inline std::filesystem::path mlp_recording() {
  return std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/dtensor/mlp_recording.jsonl";
}

/// `call("aten.mm.default", "2,4", {"f32[12,1] (S(0),P(sum))", "f32[1,16] (R,S(1))"})`: every
/// argument in `tdiag shard explain --arg` notation.
inline op_call call(std::string op, std::string_view mesh,
                    std::initializer_list<std::string_view> args) {
  op_call c;
  c.op = std::move(op);
  c.mesh = parse_mesh(mesh);
  for (auto a : args)
    c.args.push_back(parse_arg(a, c.mesh.ndim()));
  return c;
}

inline std::string placements_of(const propagation_result& r, std::size_t output = 0) {
  return to_string(r.outputs.at(output).placements);
}

/// Propagates and returns the sharding_error it must throw.
inline sharding_error rejection(const op_call& c) {
  try {
    (void)propagate(c);
  } catch (const sharding_error& e) {
    return e;
  }
  throw std::runtime_error("expected a sharding_error for " + c.op);
}

} // namespace tdiag::dtensor::test
