// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The argument grid of the corpus ops. Sizes 5, 6 and 7 shard unevenly on 4 and 8 ranks (some
// ranks get nothing); size-1 dims exercise broadcasting and squeezing.
#include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>

#include <initializer_list>

namespace tdiag::dtensor::sim {
namespace {

op_arg t(std::initializer_list<std::int64_t> shape, dtype type = dtype::float32) {
  tensor_spec s;
  s.meta.shape = shape;
  s.meta.stride = contiguous_strides(s.meta.shape);
  s.meta.type = type;
  return op_arg::of(std::move(s));
}

op_arg ts(std::initializer_list<op_arg> parts) {
  std::vector<tensor_spec> specs;
  for (const auto& p : parts)
    specs.push_back(p.tensor);
  return op_arg::of(std::move(specs));
}

op_arg i(std::int64_t v) {
  return op_arg::of_int(v);
}
op_arg is(std::vector<std::int64_t> v) {
  return op_arg::of_ints(std::move(v));
}
op_arg f(double v) {
  return op_arg::of_float(v);
}
op_arg b(bool v) {
  return op_arg::of_bool(v);
}

} // namespace

std::vector<device_mesh> default_meshes() {
  return {device_mesh({4}),    device_mesh({8}),    device_mesh({2, 2}),
          device_mesh({2, 4}), device_mesh({4, 2}), device_mesh({2, 2, 2})};
}

std::vector<call_template> builtin_call_templates(std::string_view op) {
  const std::string_view name = op;
  if (name == "aten.add.Tensor" || name == "aten.sub.Tensor" || name == "aten.mul.Tensor" ||
      name == "aten.div.Tensor") {
    return {
        {t({6, 5}), t({6, 5})}, {t({8, 3}), t({3})}, {t({5, 1}), t({1, 4})}, {t({6, 5}), f(2.0)}};
  }
  if (name == "aten.maximum.default")
    return {{t({6, 5}), t({6, 5})}, {t({8, 3}), t({3})}};
  if (name == "aten.add_.Tensor" || name == "aten.mul_.Tensor") {
    return {{t({6, 5}), t({6, 5})}, {t({6, 5}), t({5})}, {t({7}), f(2.0)}};
  }
  if (name == "aten.copy_.default")
    return {{t({6, 5}), t({6, 5})}, {t({6, 5}), t({5})}};
  if (name == "aten.relu.default" || name == "aten.relu_.default" || name == "aten.neg.default" ||
      name == "aten.exp.default" || name == "aten.tanh.default" || name == "aten.gelu.default" ||
      name == "aten.clone.default") {
    return {{t({6, 5})}, {t({7})}};
  }
  if (name == "aten.mm.default")
    return {{t({6, 5}), t({5, 4})}, {t({3, 8}), t({8, 7})}};
  if (name == "aten.bmm.default")
    return {{t({4, 3, 5}), t({4, 5, 2})}, {t({2, 6, 3}), t({2, 3, 5})}};
  if (name == "aten.addmm.default")
    return {{t({4}), t({6, 5}), t({5, 4})}, {t({6, 4}), t({6, 3}), t({3, 4})}};
  if (name == "aten.sum.default")
    return {{t({6, 5})}, {t({7})}};
  if (name == "aten.sum.dim_IntList")
    return {{t({6, 5}), is({1}), b(false)}, {t({4, 3, 5}), is({0, 2}), b(true)}};
  if (name == "aten.mean.dim") {
    return {{t({6, 5}), is({0}), b(false)},
            {t({8, 3}), is({0}), b(true)},
            {t({4, 5}), is({1}), b(false)}};
  }
  if (name == "aten.amax.default")
    return {{t({6, 5}), is({1}), b(false)}, {t({4, 6}), is({0}), b(true)}};
  if (name == "aten.max.dim")
    return {{t({6, 5}), i(1), b(false)}, {t({4, 6}), i(0), b(true)}};
  if (name == "aten._softmax.default" || name == "aten._log_softmax.default") {
    return {{t({6, 5}), i(1), b(false)}, {t({4, 6}), i(0), b(false)}};
  }
  if (name == "aten.native_layer_norm.default") {
    return {{t({6, 4}), is({4}), t({4}), t({4}), f(1e-5)},
            {t({3, 4, 5}), is({4, 5}), t({4, 5}), t({4, 5}), f(1e-5)}};
  }
  if (name == "aten.view.default") {
    return {{t({6, 4}), is({24})},
            {t({6, 4}), is({3, 2, 4})},
            {t({2, 3, 4}), is({6, 4})},
            {t({4, 1, 6}), is({4, 6})}};
  }
  if (name == "aten.transpose.int")
    return {{t({6, 4, 5}), i(0), i(2)}, {t({6, 5}), i(0), i(1)}};
  if (name == "aten.permute.default")
    return {{t({6, 4, 5}), is({2, 0, 1})}};
  if (name == "aten.t.default")
    return {{t({6, 5})}, {t({7})}};
  if (name == "aten.unsqueeze.default")
    return {{t({6, 5}), i(1)}, {t({6}), i(0)}};
  if (name == "aten.squeeze.dim")
    return {{t({6, 1, 5}), i(1)}, {t({4, 1}), i(1)}};
  if (name == "aten.expand.default")
    return {{t({1, 5}), is({6, 5})}, {t({6, 1}), is({6, 4})}};
  if (name == "aten.cat.default")
    return {{ts({t({6, 4}), t({3, 4})}), i(0)}, {ts({t({4, 3}), t({4, 5})}), i(1)}};
  if (name == "aten.split.Tensor")
    return {{t({8, 5}), i(3), i(0)}, {t({6, 7}), i(4), i(1)}};
  if (name == "aten.embedding.default") {
    return {{t({10, 4}), t({6}, dtype::int64)}, {t({7, 3}), t({2, 3}, dtype::int64)}};
  }
  return {};
}

} // namespace tdiag::dtensor::sim
