// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_validator.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <gtest/gtest.h>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::sim;

const auto R = placement::replicate();
const auto S0 = placement::shard(0);
const auto S1 = placement::shard(1);
const auto Psum = placement::partial(reduce_op::sum);

op_arg spec(shape_t shape) {
  tensor_spec s;
  s.meta.shape = std::move(shape);
  s.meta.stride = contiguous_strides(s.meta.shape);
  return op_arg::of(std::move(s));
}

tensor_meta meta(shape_t shape) {
  return tensor_meta{shape, contiguous_strides(shape), dtype::float32};
}

const reference_op& ref(std::string_view op) {
  return *reference_registry::builtin().find(op);
}

TEST(StrategyValidator, ContractionShardsGivePartialSum) {
  const op_call call{"aten.mm.default", device_mesh({4}), {spec({6, 5}), spec({5, 4})}};
  const strategy_claim claim{{meta({6, 4})}, {{{Psum}}, {{S1}, {S0}}}, {}};
  EXPECT_TRUE(validate_strategy(call, claim, ref("aten.mm.default")).passed());
}

TEST(StrategyValidator, PartialThroughExpNamesRankIndexAndMeshDim) {
  const op_call call{"aten.exp.default", device_mesh({2, 4}), {spec({6, 5})}};
  const strategy_claim claim{{meta({6, 5})}, {{{S0, Psum}}, {{S0, Psum}}}, {}};
  const auto v = validate_strategy(call, claim, ref("aten.exp.default"));
  ASSERT_EQ(v.status, validation_status::failed);
  const auto& d = *v.failure;
  EXPECT_EQ(d.code, validation_codes::wrong_values);
  ASSERT_NE(d.find_field("rank"), nullptr);
  ASSERT_NE(d.find_field("index"), nullptr);
  ASSERT_NE(d.find_field("expected"), nullptr);
  ASSERT_NE(d.find_field("actual"), nullptr);
  EXPECT_EQ(v.broken_mesh_dims, (std::vector<std::size_t>{1}));
  EXPECT_NE(d.message.find("mesh dim 1"), std::string::npos) << d.message;
}

TEST(StrategyValidator, ReductionClaimedReplicateIsAReplicaMismatch) {
  const op_call call{"aten.sum.dim_IntList",
                     device_mesh({4}),
                     {spec({6, 5}), op_arg::of_ints({1}), op_arg::of_bool(false)}};
  const strategy_claim claim{{meta({6})}, {{{R}}, {{S1}}}, {}};
  const auto v = validate_strategy(call, claim, ref("aten.sum.dim_IntList"));
  ASSERT_EQ(v.status, validation_status::failed);
  EXPECT_EQ(v.failure->code, validation_codes::replica_mismatch);
  EXPECT_EQ(v.broken_mesh_dims, (std::vector<std::size_t>{0}));
}

TEST(StrategyValidator, UnevenShardsOfSumAreExact) {
  // 7 rows on 4 ranks: 2, 2, 2, 1.
  const op_call call{"aten.sum.dim_IntList",
                     device_mesh({4}),
                     {spec({7, 3}), op_arg::of_ints({0}), op_arg::of_bool(false)}};
  const strategy_claim claim{{meta({3})}, {{{Psum}}, {{S0}}}, {}};
  EXPECT_TRUE(validate_strategy(call, claim, ref("aten.sum.dim_IntList")).passed());
}

TEST(StrategyValidator, ShapeErrorOfTheCallIsNotApplicable) {
  const op_call call{"aten.mm.default", device_mesh({2}), {spec({6, 5}), spec({4, 4})}};
  const strategy_claim claim{{meta({6, 4})}, {{{R}}, {{R}, {R}}}, {}};
  EXPECT_EQ(validate_strategy(call, claim, ref("aten.mm.default")).status,
            validation_status::not_applicable);
}

// A user op with its own rule and reference: y = 2x + 1 is not linear, so a Partial must be
// reduced first; shards pass through.
rule_result affine_rule(const rule_context& ctx, bool claim_partial) {
  const auto& in = ctx.tensor_arg(0);
  auto target = in.placements;
  for (auto& p : target) {
    if (p.is_partial() && !claim_partial)
      p = placement::replicate();
  }
  rule_result r;
  r.outputs.push_back(in.meta);
  r.candidates.push_back({{target}, {target}});
  return r;
}

reference_op affine_reference() {
  return {"custom.affine.default",
          [](const sim_args& a) {
            const auto& x = a.at(0).tensor;
            dense_tensor out(x.shape(), x.type());
            for (std::int64_t i = 0; i < x.numel(); ++i)
              out.set_flat(i, 2.0 * x.flat(i) + 1.0);
            return std::vector<dense_tensor>{out};
          },
          {},
          {}};
}

grid_result run_user_grid(bool claim_partial) {
  auto rules = op_registry::with_builtin_rules();
  rules.add(op_rule{
      "custom.affine.default", "user", {"self"}, false, [claim_partial](const rule_context& ctx) {
        return affine_rule(ctx, claim_partial);
      }});
  auto refs = reference_registry::with_builtin_ops();
  refs.add(affine_reference());
  grid_options options;
  options.ops = {"custom.affine.default"};
  options.templates["custom.affine.default"] = {{spec({6, 5})}};
  return validate_rule_set(rules, refs, options);
}

TEST(StrategyValidator, UserRegisteredOpValidates) {
  const auto good = run_user_grid(false);
  EXPECT_TRUE(good.ok());
  EXPECT_GT(good.strategies(), 10u);
  const auto bad = run_user_grid(true);
  EXPECT_FALSE(bad.ok());
}

TEST(StrategyValidator, StrategyNotation) {
  const candidate_strategy s{{{Psum, R}}, {{S1, R}, {S0, R}}};
  EXPECT_EQ(to_string(s), "(S(1), R), (S(0), R) → (P(sum), R)");
}

} // namespace
