// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Building a comm_report: group the recorded redistributions by user line and cause, look for a
// placement that avoids each (propagating the call with it), and compare every record with our
// propagation. The renderings are in comm_report_output.cpp.
#include <tensordiag/dtensor_checks/comm_report.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "saturating.hpp"

namespace tdiag::dtensor {
namespace {

std::string plain_bytes(std::int64_t bytes) {
  return fmt::format("{} bytes", bytes);
}

using detail::sat_add;
using detail::sat_mul;

placement_list unmasked(placement_list ps) {
  for (auto& p : ps)
    p.masked = false;
  return ps;
}

// The flattened input index (tensor_inputs order) of args[arg] (item k of a list).
std::size_t input_index(const op_call& call, std::size_t arg, std::optional<std::size_t> item) {
  const auto inputs = tensor_inputs(call);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].arg_index == arg && inputs[k].list_index == item.value_or(0))
      return k;
  }
  return inputs.size();
}

tensor_spec& input_spec(op_call& call, std::size_t arg, std::optional<std::size_t> item) {
  auto& a = call.args.at(arg);
  return a.kind == arg_kind::tensors ? a.tensors.at(item.value_or(0)) : a.tensor;
}
// The same, read-only: a recording's key and cause read it once per record, and copying the
// whole call for it cost an allocation per argument.
const tensor_spec& input_spec(const op_call& call, std::size_t arg,
                              std::optional<std::size_t> item) {
  const auto& a = call.args.at(arg);
  return a.kind == arg_kind::tensors ? a.tensors.at(item.value_or(0)) : a.tensor;
}

// True when `from` becomes `to` by local steps only (a chunk or a partition).

// Bytes per rank (and the first collective) to bring `from` to `to`; nullopt when PyTorch could
// not (a Shard→Partial step).
std::optional<std::pair<std::int64_t, collective>> conversion_cost(const device_mesh& mesh,
                                                                   const tensor_meta& meta,
                                                                   const placement_list& from,
                                                                   const placement_list& to) {
  // An output of more than 2^50 elements (an mm of two large recorded inputs) has no size we
  // can state: no cost, so no suggestion built on one (it read "a reduce_scatter of 0 B").
  if (!numel_fits(meta.shape))
    return std::nullopt;
  const auto plan =
      plan_redistribution(mesh, meta, from, to, mesh_topology::build(mesh), plan_options{});
  if (plan.first_problem() != nullptr)
    return std::nullopt;
  std::pair<std::int64_t, collective> cost{0, collective::none};
  for (const auto& s : plan.steps) {
    if (s.comm == collective::none)
      continue;
    cost.first = sat_add(cost.first, s.bytes_per_rank);
    if (cost.second == collective::none)
      cost.second = s.comm;
  }
  return cost;
}

// What PyTorch produced for the first output, else what our propagation produces.
std::optional<placement_list> wanted_output(const dtensor_case& c, const propagation_result& base) {
  if (c.expect && c.expect->ok && !c.expect->outputs.empty())
    return unmasked(c.expect->outputs.front().placements);
  if (!base.outputs.empty())
    return unmasked(base.outputs.front().placements);
  return std::nullopt;
}

// The candidates' placements for input k, tried in PyTorch's order: the one that keeps the
// output and changes the fewest mesh dims wins.
std::optional<placement_fix> find_own_fix(const dtensor_case& c, const propagation_result& base,
                                          std::size_t arg, std::optional<std::size_t> item,
                                          const op_registry& registry) {
  const auto k = input_index(c.call, arg, item);
  const auto want = wanted_output(c, base);
  const auto& current = tensor_inputs(c.call).at(k).spec->placements;
  std::optional<placement_fix> best;
  std::tuple<bool, std::size_t> best_rank{true, 0};
  std::vector<placement_list> tried;
  for (const auto& cand : base.candidates) {
    if (k >= cand.strategy.inputs.size())
      continue;
    const auto& p = cand.strategy.inputs[k];
    if (p == current || std::find(tried.begin(), tried.end(), p) != tried.end())
      continue;
    tried.push_back(p);
    op_call call = c.call;
    input_spec(call, arg, item).placements = p;
    propagation_result r;
    try {
      r = propagate(call, registry);
    } catch (const sharding_error&) {
      continue;
    }
    if (r.comms.total() != 0 || r.outputs.empty())
      continue;
    placement_fix fix{p, unmasked(r.outputs.front().placements), true};
    fix.same_output = !want || fix.output == *want;
    if (!fix.same_output) {
      const auto cost = conversion_cost(call.mesh, r.outputs.front().meta, fix.output, *want);
      if (!cost || cost->second != collective::none) // only a local chunk or partition
        continue;
    }
    std::size_t changed = 0;
    for (std::size_t m = 0; m < p.size(); ++m)
      changed += p[m] == current[m] ? 0 : 1;
    const std::tuple<bool, std::size_t> rank{!fix.same_output, changed};
    if (!best || rank < best_rank) {
      best = std::move(fix);
      best_rank = rank;
    }
  }
  return best;
}

// Another tensor argument (not a list item) placed as one of the candidates' inputs, the rest as
// recorded: the op then runs with no communication, and bringing its output to the recorded
// placements costs less than the redistribution did. The cheapest wins, then the fewest dims.
std::optional<placement_fix> find_other_fix(const dtensor_case& c, const propagation_result& base,
                                            std::size_t k, std::int64_t bytes_per_call,
                                            const op_registry& registry,
                                            const std::vector<std::string>& names) {
  const auto want = wanted_output(c, base);
  const auto inputs = tensor_inputs(c.call);
  std::optional<placement_fix> best;
  std::pair<std::int64_t, std::size_t> best_rank{0, 0};
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    const auto arg = inputs[j].arg_index;
    if (j == k || c.call.args.at(arg).kind != arg_kind::tensor)
      continue;
    const auto& current = c.call.args[arg].tensor.placements;
    std::vector<placement_list> tried;
    for (const auto& cand : base.candidates) {
      if (j >= cand.strategy.inputs.size())
        continue;
      const auto& p = cand.strategy.inputs[j];
      if (p == current || std::find(tried.begin(), tried.end(), p) != tried.end())
        continue;
      tried.push_back(p);
      op_call call = c.call;
      call.args[arg].tensor.placements = p;
      propagation_result r;
      try {
        r = propagate(call, registry);
      } catch (const sharding_error&) {
        continue;
      }
      // Every input already where the strategy wants it: not even a local chunk.
      if (r.comms.total() != 0 || r.outputs.empty() ||
          std::any_of(r.plans.begin(), r.plans.end(),
                      [](const redistribution_plan& plan) { return !plan.steps.empty(); }))
        continue;
      const auto out = unmasked(r.outputs.front().placements);
      const auto cost = want ? conversion_cost(call.mesh, r.outputs.front().meta, out, *want)
                             : std::optional<std::pair<std::int64_t, collective>>{{0, {}}};
      if (!cost || cost->first >= bytes_per_call)
        continue;
      std::size_t changed = 0;
      for (std::size_t m = 0; m < p.size(); ++m)
        changed += p[m] == current[m] ? 0 : 1;
      const std::pair<std::int64_t, std::size_t> rank{cost->first, changed};
      if (!best || rank < best_rank) {
        placement_fix fix{p, out, !want || out == *want};
        fix.other_arg = arg;
        fix.other_arg_name = arg < names.size() ? names[arg] : "";
        fix.other_was = current;
        fix.output_bytes = cost->first;
        fix.output_comm = cost->second;
        if (want)
          fix.recorded_output = *want;
        best = std::move(fix);
        best_rank = rank;
      }
    }
  }
  return best;
}

// The fix for one redistributed argument: its own placement, unless that is only PyTorch's
// target (the communication would move to its producer) and another argument's placement
// avoids the redistribution for less.
std::optional<placement_fix> find_fix(const dtensor_case& c, const comm_cause& cause,
                                      const op_registry& registry,
                                      const std::vector<std::string>& names) {
  const auto base = propagate(c.call, registry);
  auto own = find_own_fix(c, base, cause.arg, cause.item, registry);
  placement_list target = cause.arrived;
  for (const auto& s : cause.steps)
    if (s.mesh_dim < target.size())
      target[s.mesh_dim] = s.to;
  if (own && unmasked(own->placements) == unmasked(target))
    own->moves_communication = true;
  if (own && !own->moves_communication)
    return own;
  auto other = find_other_fix(c, base, input_index(c.call, cause.arg, cause.item),
                              cause.bytes_per_call, registry, names);
  return other ? other : own;
}

std::string arg_label(const comm_cause& c) {
  auto label = c.arg_name.empty() ? fmt::format("arg {}", c.arg)
                                  : fmt::format("`{}` (arg {})", c.arg_name, c.arg);
  return c.item ? fmt::format("{} item {}", label, *c.item) : label;
}

std::string other_arg_suggestion(const comm_cause& c, const placement_fix& fix,
                                 const bytes_formatter& format_bytes) {
  std::vector<std::string> dims;
  for (std::size_t m = 0; m < fix.placements.size(); ++m)
    if (fix.placements[m] != fix.other_was[m])
      dims.push_back(fmt::format("{} on {}", to_string(fix.placements[m]), c.mesh.dim_label(m)));
  const auto name = fix.other_arg_name.empty()
                        ? fmt::format("arg {}", *fix.other_arg)
                        : fmt::format("`{}` (arg {})", fix.other_arg_name, *fix.other_arg);
  auto text = fmt::format("place {} as {} (it is {}), so {} needs no redistribution of {}", name,
                          fmt::join(dims, " and "), to_string(fix.other_was), c.op, arg_label(c));
  if (fix.output_bytes == 0)
    return text + fmt::format(": saves {} per rank per call × {} calls",
                              format_bytes(c.bytes_per_call), c.calls);
  return text +
         fmt::format("; its output becomes {}, and bringing it to the recorded {} takes a {} "
                     "of {} per rank instead of {} per call × {} calls",
                     to_string(fix.output), to_string(fix.recorded_output),
                     to_string(fix.output_comm), format_bytes(fix.output_bytes),
                     format_bytes(c.bytes_per_call), c.calls);
}

std::string suggestion(const comm_cause& c, const std::string& reason,
                       const bytes_formatter& format_bytes) {
  if (!c.fix)
    return fmt::format("no fix known: {}", reason);
  const auto& fix = *c.fix;
  if (fix.other_arg)
    return other_arg_suggestion(c, fix, format_bytes);
  std::vector<std::string> dims;
  std::vector<std::string> was;
  for (std::size_t m = 0; m < fix.placements.size(); ++m) {
    if (fix.placements[m] == c.arrived[m])
      continue;
    dims.push_back(fmt::format("{} on {}", to_string(fix.placements[m]), c.mesh.dim_label(m)));
    was.push_back(to_string(c.arrived[m]));
  }
  std::vector<std::string> kinds;
  for (const auto& s : c.steps) {
    const auto name = std::string(to_string(s.comm));
    if (s.comm != collective::none && std::find(kinds.begin(), kinds.end(), name) == kinds.end())
      kinds.push_back(name);
  }
  auto text = fmt::format("produce {} as {} (it arrives as {}), so {} needs no {}: saves {} per "
                          "rank per call × {} calls",
                          arg_label(c), fmt::join(dims, " and "), fmt::join(was, ", "), c.op,
                          kinds.empty() ? std::string("redistribution")
                                        : fmt::format("{}", fmt::join(kinds, " or ")),
                          format_bytes(c.bytes_per_call), c.calls);
  if (!fix.same_output)
    text += fmt::format("; its output becomes {}, which converts to the recorded one without "
                        "communication",
                        to_string(fix.output));
  if (fix.moves_communication)
    text += "; this is the placement PyTorch redistributes to, so whatever produces it would "
            "communicate instead";
  return text;
}

// Why no fix is known for the cause.
std::string fix_reason(const comm_cause& cause, const op_registry& registry) {
  if (registry.find(cause.op) == nullptr)
    return fmt::format("tensordiag has no sharding rule for {}", cause.op);
  return fmt::format("under every placement of {} that the strategies of {} allow, with the other "
                     "arguments as they are, the op still communicates or changes its output",
                     arg_label(cause), cause.op);
}

using cause_key =
    std::tuple<std::string, std::size_t, std::size_t, std::string, std::vector<std::string>>;

cause_key key_of(const dtensor_case& c, std::size_t arg, std::optional<std::size_t> item,
                 const std::vector<recorded_redistribution>& steps) {
  std::vector<std::string> parts;
  for (const auto& s : steps)
    parts.push_back(fmt::format("{} {} {} {} {}", s.mesh_dim, to_string(s.from), to_string(s.to),
                                to_string(s.comm), s.bytes_per_rank));
  return {c.call.op, arg, item ? *item + 1 : 0, to_string(input_spec(c.call, arg, item)), parts};
}

struct line_builder {
  comm_line line;
  std::map<cause_key, comm_cause> causes;
};

// The fixes found, by everything find_fix() reads: the call (op, mesh, every argument), what
// PyTorch recorded as its outputs, and the cause (argument, item, steps). A recording repeats
// one call at many source lines; each searched the candidates' propagations again (~0.6 ms a
// line, 38 times `shard check`).
using fix_cache = std::map<std::string, std::optional<placement_fix>>;

std::string fix_key(const dtensor_case& c, const cause_key& cause) {
  std::string key = fmt::format("{}|{}|", c.call.op, fmt::join(c.call.mesh.shape(), ","));
  for (const auto& a : c.call.args)
    key += to_string(a) + "|";
  if (c.expect && c.expect->ok)
    for (const auto& o : c.expect->outputs)
      key += fmt::format("{} {}|", to_string(o.shape), to_string(o.placements));
  key += fmt::format("{}|{}|{}", std::get<1>(cause), std::get<2>(cause),
                     fmt::join(std::get<4>(cause), ";"));
  return key;
}

// Adds the redistributions of one record to its line, one cause per redistributed input.
void add_record(const dtensor_case& c, line_builder& b, const op_registry& registry,
                fix_cache& fixes) {
  std::map<std::pair<std::size_t, std::size_t>, std::vector<recorded_redistribution>> by_input;
  for (const auto& r : c.redistributions) {
    if (r.comm != collective::none) // a local chunk or partition moves nothing between ranks
      by_input[{r.arg, r.item ? *r.item + 1 : 0}].push_back(r);
  }
  const auto* rule = registry.find(c.call.op);
  for (auto& [where, steps] : by_input) {
    const auto arg = where.first;
    const auto item = steps.front().item;
    const auto key = key_of(c, arg, item, steps);
    auto [it, fresh] = b.causes.try_emplace(key);
    auto& cause = it->second;
    if (fresh) {
      cause.op = c.call.op;
      cause.mesh = c.call.mesh;
      cause.arg = arg;
      cause.item = item;
      cause.arg_name = rule != nullptr && arg < rule->arg_names.size() ? rule->arg_names[arg] : "";
      cause.arrived = input_spec(c.call, arg, item).placements;
      cause.steps = steps;
      for (const auto& s : steps) {
        cause.comms.add(s.comm);
        cause.bytes_per_call = sat_add(cause.bytes_per_call, s.bytes_per_rank);
      }
      auto [known, first] = fixes.try_emplace(fix_key(c, key));
      if (first) {
        try {
          static const std::vector<std::string> no_names;
          known->second =
              find_fix(c, cause, registry, rule != nullptr ? rule->arg_names : no_names);
        } catch (const sharding_error&) {
          known->second.reset(); // propagation rejects or does not know the recorded call
        }
      }
      cause.fix = known->second;
    }
    cause.calls = sat_add(cause.calls, c.calls);
    cause.bytes = sat_add(cause.bytes, sat_mul(cause.bytes_per_call, c.calls));
    cause.ids.push_back(c.id);
  }
}

std::string outputs_text(const std::vector<output_record>& outs) {
  std::vector<std::string> parts;
  for (const auto& o : outs)
    parts.push_back(fmt::format("{} {}", to_string(o.shape), to_string(o.placements)));
  return parts.empty() ? std::string("no outputs") : fmt::format("{}", fmt::join(parts, "; "));
}

diagnostic finding(const dtensor_case& c, const std::string& source, std::string_view code,
                   std::string title, std::string message) {
  diagnostic d;
  d.level = severity::warning;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  if (c.source && !c.source->file.empty()) {
    d.location.file = c.source->file;
    d.location.line = static_cast<std::uint32_t>(c.source->line);
    d.location.function = c.source->function;
  } else {
    d.location.file = source;
    d.location.line = static_cast<std::uint32_t>(c.line);
  }
  d.add_field("id", c.id);
  d.add_field("op", c.call.op);
  d.add_field("record", fmt::format("{}:{}", source, c.line));
  d.hint = "tensordiag's model of this op differs from PyTorch 2.11 here, so its fix proposals for "
           "the op may be wrong; report the record (the line of the recording) to tensordiag";
  return d;
}

// Compares one record with our propagation; counts it and adds a finding when they disagree.
void compare(const dtensor_case& c, comm_report& r, const op_registry& registry) {
  if (!c.expect)
    return;
  const auto& e = *c.expect;
  const auto a = answer_case(c, registry);
  if (!a.ok && a.kind == error_class::unknown_op) {
    ++r.not_covered[c.call.op];
    return;
  }
  ++r.checked;
  const auto size = r.findings.size();
  if (e.ok && !a.ok) {
    r.findings.push_back(finding(
        c, r.source, codes::recorded_rejection, "PyTorch ran an op that tensordiag rejects",
        fmt::format("{}: PyTorch ran it and produced {}, but tensordiag rejects it ({}): {}",
                    c.call.op, outputs_text(e.outputs), a.code, a.error)));
  } else if (!e.ok && a.ok && e.error_class != "limitation") {
    r.findings.push_back(finding(
        c, r.source, codes::recorded_rejection, "PyTorch rejected an op that tensordiag accepts",
        fmt::format("{}: PyTorch rejected it ({}: {}), but tensordiag accepts it with {}",
                    c.call.op, e.error_type.empty() ? "error" : e.error_type,
                    e.error.substr(0, 200), outputs_text(a.outputs))));
  } else if (e.ok && a.ok) {
    if (a.outputs != e.outputs)
      r.findings.push_back(finding(
          c, r.source, codes::recorded_outputs, "PyTorch's output placements differ from ours",
          fmt::format("{}: PyTorch produced {}, tensordiag's propagation {}", c.call.op,
                      outputs_text(e.outputs), outputs_text(a.outputs))));
    if (a.comms != e.comms)
      r.findings.push_back(
          finding(c, r.source, codes::recorded_comms, "PyTorch's collectives differ from ours",
                  fmt::format("{}: PyTorch ran {}, tensordiag's plan runs {}", c.call.op,
                              comms_to_json(e.comms), comms_to_json(a.comms))));
  }
  r.agree += r.findings.size() == size ? 1 : 0;
}

} // namespace

comm_report build_comm_report(const case_file& file, std::string source,
                              const bytes_formatter& format_bytes, const op_registry& registry) {
  comm_report r;
  r.source = std::move(source);
  r.format_bytes = format_bytes ? format_bytes : bytes_formatter(plain_bytes);
  r.modules = rank_modules(file.cases);
  const auto& fmt_bytes = r.format_bytes;
  std::map<std::pair<std::string, std::int64_t>, line_builder> lines;
  fix_cache fixes;
  for (const auto& c : file.cases) {
    ++r.records;
    r.calls = sat_add(r.calls, c.calls);
    compare(c, r, registry);
    if (std::none_of(c.redistributions.begin(), c.redistributions.end(),
                     [](const auto& s) { return s.comm != collective::none; }))
      continue;
    const auto frame = c.source.value_or(source_frame{});
    auto& b = lines[{frame.file, frame.line}];
    if (b.causes.empty())
      b.line.source = frame;
    add_record(c, b, registry, fixes);
  }
  for (auto& [where, b] : lines) {
    for (auto& [key, cause] : b.causes) {
      // Why no fix is known, formatted only where none is.
      cause.suggestion =
          suggestion(cause, cause.fix ? std::string() : fix_reason(cause, registry), fmt_bytes);
      b.line.bytes = sat_add(b.line.bytes, cause.bytes);
      b.line.count = sat_add(b.line.count,
                             sat_mul(static_cast<std::int64_t>(cause.steps.size()), cause.calls));
      for (std::size_t k = 0; k < cause.comms.by_kind.size(); ++k)
        b.line.comms.by_kind[k] =
            sat_add(b.line.comms.by_kind[k], sat_mul(cause.comms.by_kind[k], cause.calls));
      b.line.causes.push_back(std::move(cause));
    }
    std::stable_sort(b.line.causes.begin(), b.line.causes.end(),
                     [](const comm_cause& x, const comm_cause& y) { return x.bytes > y.bytes; });
    r.bytes = sat_add(r.bytes, b.line.bytes);
    r.count = sat_add(r.count, b.line.count);
    r.lines.push_back(std::move(b.line));
  }
  std::stable_sort(r.lines.begin(), r.lines.end(), [](const comm_line& x, const comm_line& y) {
    return std::tie(y.bytes, y.count, x.source.file, x.source.line) <
           std::tie(x.bytes, x.count, y.source.file, y.source.line);
  });
  return r;
}

} // namespace tdiag::dtensor
