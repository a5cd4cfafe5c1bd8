// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/explain.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace tdiag::dtensor {
namespace {

std::string input_name(const op_rule& rule, const tensor_input& in) {
  const auto base = in.arg_index < rule.arg_names.size() ? rule.arg_names[in.arg_index]
                                                         : fmt::format("arg{}", in.arg_index);
  return in.in_list ? fmt::format("{}[{}]", base, in.list_index) : base;
}

std::string cost_text(double c) {
  return std::isinf(c) ? "inf" : fmt::format("{:.2f}", c);
}

std::string outputs_text(const std::vector<placement_list>& outs) {
  std::vector<std::string> parts;
  for (const auto& o : outs)
    parts.push_back(to_string(o));
  if (parts.size() > 1) {
    bool same = true;
    for (const auto& p : parts)
      same = same && p == parts.front();
    if (same)
      return fmt::format("{} x{}", parts.front(), parts.size());
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_arg(std::string_view text, std::string_view why) {
  throw_input_error(
      codes::bad_arguments, "invalid --arg", fmt::format("cannot read --arg '{}': {}", text, why),
      "pass a spec 'f32[12,1] (S(0),P(sum))', a list of specs '[f32[4] (R); f32[2] (R)]', an int, "
      "a list of ints '[1,2]', a float, true/false or None");
}

} // namespace

std::string explain_text(const op_call& call, const propagation_result& result,
                         bool all_candidates) {
  const auto inputs = tensor_inputs(call);
  const auto& rule = *result.rule;
  std::string out =
      fmt::format("{} on mesh {} ({} rule)\n", call.op, call.mesh.to_string(), rule.family);
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const auto name = i < rule.arg_names.size() ? rule.arg_names[i] : fmt::format("arg{}", i);
    out += fmt::format("  arg {} {:<8} {}\n", i, name, to_string(call.args[i]));
  }
  out += fmt::format("candidates ({}; cost = α–β redistribution time in µs per input):\n",
                     result.candidates.size());
  std::size_t hidden = 0;
  for (std::size_t c = 0; c < result.candidates.size(); ++c) {
    const auto& cand = result.candidates[c];
    if (!all_candidates && std::isinf(cand.total) && c != result.chosen) {
      ++hidden;
      continue;
    }
    std::vector<std::string> ins;
    for (std::size_t k = 0; k < cand.strategy.inputs.size() && k < inputs.size(); ++k) {
      ins.push_back(fmt::format("{}={} ({})", input_name(rule, inputs[k]),
                                to_string(cand.strategy.inputs[k]),
                                cost_text(k < cand.costs.size() ? cand.costs[k] : 0.0)));
    }
    out += fmt::format("  {} #{:<3} out {:<18} <- {}  total {}\n", c == result.chosen ? "*" : " ",
                       c, outputs_text(cand.strategy.outputs), fmt::join(ins, ", "),
                       cost_text(cand.total));
  }
  if (hidden != 0) {
    out += fmt::format("    ({} candidates of infinite cost not shown: they need a shard or a "
                       "Partial of another kind to "
                       "become a Partial; --all shows them)\n",
                       hidden);
  }
  out += fmt::format("chosen: #{} ({})\n", result.chosen, to_string(result.reason));
  for (std::size_t k = 0; k < result.outputs.size(); ++k) {
    out += fmt::format("output {}: {}\n", k, to_string(result.outputs[k]));
  }
  out += "redistribution plan:\n";
  bool any = false;
  for (std::size_t k = 0; k < result.plans.size() && k < inputs.size(); ++k) {
    const auto& plan = result.plans[k];
    if (plan.empty())
      continue;
    any = true;
    out += fmt::format("  arg {} ({}) {} → {}, {:.1f} µs\n", inputs[k].arg_index,
                       input_name(rule, inputs[k]), to_string(plan.current), to_string(plan.target),
                       plan.time_us);
    for (const auto& s : plan.steps)
      out += fmt::format("    {}\n", to_string(s, call.mesh));
  }
  for (const auto& c : result.op_collectives) {
    any = true;
    out += fmt::format("  inside the op: {} x{} on {} ({})\n", to_string(c.comm), c.count,
                       call.mesh.dim_label(c.mesh_dim), c.why);
  }
  if (!any)
    out += "  none: every input already has its target placements\n";
  std::vector<std::string> counts;
  for (auto c : {collective::all_gather, collective::all_reduce, collective::reduce_scatter,
                 collective::all_to_all}) {
    if (result.comms[c] != 0)
      counts.push_back(fmt::format("{} {}", to_string(c), result.comms[c]));
  }
  out +=
      fmt::format("collectives: {}\n", counts.empty() ? std::string("none")
                                                      : fmt::format("{}", fmt::join(counts, ", ")));
  return out;
}

std::string explain_json(const op_call& call, const propagation_result& result) {
  const auto inputs = tensor_inputs(call);
  detail::json_out out(detail::json_style::compact);
  const auto strings = [&](const auto& placements) {
    out.begin_array();
    for (const auto& p : placements)
      out.string(to_string(p));
    out.end_array();
  };
  out.begin_object();
  out.member("op", call.op);
  out.key("mesh");
  out.begin_array();
  for (const auto size : call.mesh.shape())
    out.integer(size);
  out.end_array();
  out.member("family", result.rule->family);
  out.key("candidates");
  out.begin_array();
  for (const auto& cand : result.candidates) {
    out.begin_object();
    out.key("outputs");
    strings(cand.strategy.outputs);
    out.key("inputs");
    strings(cand.strategy.inputs);
    out.key("costs");
    out.begin_array();
    for (const double cost : cand.costs)
      std::isinf(cost) ? out.null() : out.number(cost);
    out.end_array();
    out.end_object();
  }
  out.end_array();
  out.member("chosen", static_cast<std::int64_t>(result.chosen));
  out.member("reason", to_string(result.reason));
  out.key("outputs");
  out.begin_array();
  for (const auto& o : result.outputs) {
    out.begin_object();
    out.key("shape");
    out.begin_array();
    for (const auto size : o.shape())
      out.integer(size);
    out.end_array();
    out.member("placements", to_string(o.placements));
    out.end_object();
  }
  out.end_array();
  out.key("plans");
  out.begin_array();
  for (std::size_t k = 0; k < result.plans.size(); ++k) {
    out.begin_object();
    out.member("arg_index", static_cast<std::int64_t>(k < inputs.size() ? inputs[k].arg_index : k));
    out.key("steps");
    out.begin_array();
    for (const auto& step : result.plans[k].steps) {
      out.begin_object();
      out.member("mesh_dim", static_cast<std::int64_t>(step.mesh_dim));
      out.member("from", to_string(step.from));
      out.member("to", to_string(step.to));
      out.member("collective", to_string(step.comm));
      out.member("bytes_per_rank", step.bytes_per_rank);
      out.key("time_us");
      out.number(step.time_us);
      out.end_object();
    }
    out.end_array();
    out.end_object();
  }
  out.end_array();
  out.key("comms");
  out.raw(comms_to_json(result.comms));
  out.end_object();
  return out.take();
}

op_arg parse_arg(std::string_view text, std::size_t mesh_ndim) {
  const auto t = trim(text);
  if (t.empty())
    bad_arg(text, "empty");
  if (t == "None" || t == "none")
    return op_arg{};
  if (t == "true" || t == "True")
    return op_arg::of_bool(true);
  if (t == "false" || t == "False")
    return op_arg::of_bool(false);
  if (t.front() == '[') {
    if (t.back() != ']')
      bad_arg(text, "unbalanced brackets");
    const auto inner = trim(t.substr(1, t.size() - 2));
    if (inner.find('[') != std::string_view::npos) {
      std::vector<tensor_spec> specs;
      std::size_t start = 0;
      while (start <= inner.size()) {
        auto semi = inner.find(';', start);
        if (semi == std::string_view::npos)
          semi = inner.size();
        const auto item = trim(inner.substr(start, semi - start));
        if (!item.empty())
          specs.push_back(parse_tensor_spec(item, mesh_ndim));
        start = semi + 1;
      }
      if (specs.empty())
        bad_arg(text, "an empty list of tensors");
      return op_arg::of(std::move(specs));
    }
    std::vector<std::int64_t> ints;
    std::size_t start = 0;
    while (start < inner.size()) {
      auto comma = inner.find(',', start);
      if (comma == std::string_view::npos)
        comma = inner.size();
      const auto item = trim(inner.substr(start, comma - start));
      std::int64_t v = 0;
      auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc{} || p != item.data() + item.size())
        bad_arg(text, fmt::format("'{}' is not an int", item));
      ints.push_back(v);
      start = comma + 1;
    }
    return op_arg::of_ints(std::move(ints));
  }
  if (t.find('[') != std::string_view::npos)
    return op_arg::of(parse_tensor_spec(t, mesh_ndim));
  std::int64_t v = 0;
  if (auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      ec == std::errc{} && p == t.data() + t.size()) {
    return op_arg::of_int(v);
  }
  double d = 0;
  if (auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
      ec == std::errc{} && p == t.data() + t.size()) {
    return op_arg::of_float(d);
  }
  bad_arg(text, "not a spec, list, number or bool");
}

} // namespace tdiag::dtensor
