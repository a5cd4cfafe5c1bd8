// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "case_fields.hpp"

#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor::case_json {

void malformed(std::string message) {
  throw_input_error(codes::malformed_case, "malformed case", std::move(message));
}

std::int64_t get_int(od::value v, std::string_view what) {
  std::int64_t x = 0;
  if (v.get_int64().get(x) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be an integer", what));
  return x;
}

std::vector<std::int64_t> get_ints(od::value v, std::string_view what, bool sizes) {
  std::vector<std::int64_t> out;
  for_each_item(v, what, "a list of integers", [&](od::value x) {
    const auto n = get_int(x, fmt::format("{}[{}]", what, out.size()));
    if (n < -max_dim_size || n > max_dim_size || (sizes && n < 0))
      malformed(fmt::format("{} has {} out of range", what, n));
    out.push_back(n);
    if (out.size() > max_list)
      malformed(fmt::format("{} is too long", what));
  });
  return out;
}

std::string_view get_string(od::value v, std::string_view what) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be a string", what));
  return s;
}

placement get_placement(od::value v, std::string_view what) {
  const auto text = get_string(v, what);
  auto p = parse_placement(text);
  if (!p)
    malformed(fmt::format("{}: '{}' is not a placement (R, S(d), P(sum|avg|max|min))", what, text));
  return *p;
}

placement_list get_placements(od::value v, std::string_view what) {
  placement_list out;
  for_each_item(v, what, "a list of strings", [&](od::value x) {
    const auto p = get_placement(x, what);
    if (out.size() == placement_list::capacity)
      malformed(fmt::format("{} has more than {} entries", what, placement_list::capacity));
    out.push_back(p);
  });
  return out;
}

std::vector<std::string> get_strings(od::value v, std::string_view what) {
  std::vector<std::string> out;
  for_each_item(v, what, "a list of strings", [&](od::value x) {
    out.emplace_back(get_string(x, what));
    if (out.size() > placement_list::capacity)
      malformed(fmt::format("{} has more than {} entries", what, placement_list::capacity));
  });
  return out;
}

namespace {

std::size_t get_index(od::value v, std::string_view what) {
  const auto n = get_int(v, what);
  if (n < 0 || n > static_cast<std::int64_t>(max_list))
    malformed(fmt::format("{} has {} out of range", what, n));
  return static_cast<std::size_t>(n);
}

recorded_redistribution get_redistribution(od::value v, std::string_view what) {
  recorded_redistribution r;
  bool has[6] = {};
  for_each_field(v, what, [&](std::string_view key, od::value val) {
    const auto name = fmt::format("{}.{}", what, key);
    if (key == "arg") {
      r.arg = get_index(val, name), has[0] = true;
    } else if (key == "item") {
      if (!is_null(val))
        r.item = get_index(val, name);
    } else if (key == "mesh_dim") {
      r.mesh_dim = get_index(val, name), has[1] = true;
    } else if (key == "from") {
      r.from = get_placement(val, name), has[2] = true;
    } else if (key == "to") {
      r.to = get_placement(val, name), has[3] = true;
    } else if (key == "collective") {
      const auto text = get_string(val, name);
      const auto c = parse_collective(text);
      if (!c)
        malformed(fmt::format("{}: unknown collective '{}' (all_gather, all_reduce, "
                              "reduce_scatter, all_to_all, none)",
                              name, text));
      r.comm = *c, has[4] = true;
    } else if (key == "bytes_per_rank") {
      r.bytes_per_rank = get_int(val, name), has[5] = true;
      if (r.bytes_per_rank < 0)
        malformed(fmt::format("{} must not be negative", name));
    }
  });
  static constexpr std::string_view required[] = {"arg", "mesh_dim",   "from",
                                                  "to",  "collective", "bytes_per_rank"};
  for (std::size_t i = 0; i < std::size(required); ++i) {
    if (!has[i])
      malformed(fmt::format("{} has no '{}'", what, required[i]));
  }
  return r;
}

} // namespace

source_frame get_source(od::value v) {
  source_frame s;
  bool has_file = false;
  for_each_field(v, "source", [&](std::string_view key, od::value val) {
    if (key != "file" && is_null(val))
      return; // line, function or code unknown
    if (key == "file") {
      s.file = std::string(get_string(val, "source.file"));
      has_file = true;
    } else if (key == "line") {
      s.line = get_int(val, "source.line");
      if (s.line < 0)
        malformed("source.line must not be negative");
    } else if (key == "function") {
      s.function = std::string(get_string(val, "source.function"));
    } else if (key == "code") {
      s.code = std::string(get_string(val, "source.code"));
    }
  });
  if (!has_file)
    malformed("source has no 'file'");
  return s;
}

std::vector<recorded_redistribution> get_redistributions(od::value v) {
  std::vector<recorded_redistribution> out;
  for_each_item(v, "redistributions", "a list", [&](od::value x) {
    out.push_back(get_redistribution(x, fmt::format("redistributions[{}]", out.size())));
    if (out.size() > max_list)
      malformed("redistributions is too long");
  });
  return out;
}

issued_collective get_collective(od::value v, std::string_view what) {
  issued_collective c;
  bool has_kind = false;
  for_each_field(v, what, [&](std::string_view key, od::value val) {
    const auto name = fmt::format("{}.{}", what, key);
    if (key == "kind") {
      c.kind = std::string(get_string(val, name));
      has_kind = !c.kind.empty();
    } else if (key == "op") {
      c.op = std::string(get_string(val, name));
    } else if (key == "bytes_per_rank") {
      c.bytes_per_rank = get_int(val, name);
      if (c.bytes_per_rank < 0)
        malformed(fmt::format("{} must not be negative", name));
    }
  });
  if (!has_kind)
    malformed(fmt::format("{} has no 'kind'", what));
  return c;
}

std::vector<issued_collective> get_collectives(od::value v) {
  std::vector<issued_collective> out;
  for_each_item(v, "collectives", "a list", [&](od::value x) {
    out.push_back(get_collective(x, fmt::format("collectives[{}]", out.size())));
    if (out.size() > max_list)
      malformed("collectives is too long");
  });
  return out;
}

void check_recording(const dtensor_case& c) {
  if (c.calls < 1)
    malformed(fmt::format("calls must be at least 1, not {}", c.calls));
  const auto& args = c.call.args;
  for (std::size_t i = 0; i < c.redistributions.size(); ++i) {
    const auto& r = c.redistributions[i];
    const auto what = fmt::format("redistributions[{}]", i);
    if (r.arg >= args.size())
      malformed(fmt::format("{}.arg is {} but the op has {} args", what, r.arg, args.size()));
    const auto& a = args[r.arg];
    if (a.kind == arg_kind::tensors) {
      if (!r.item || *r.item >= a.tensors.size())
        malformed(fmt::format("{}.item must index args[{}].tensors ({} tensors)", what, r.arg,
                              a.tensors.size()));
    } else if (a.kind != arg_kind::tensor) {
      malformed(fmt::format("{}.arg: args[{}] is not a tensor", what, r.arg));
    } else if (r.item) {
      malformed(fmt::format("{}.item: args[{}] is one tensor, not a list", what, r.arg));
    }
    if (r.mesh_dim >= c.call.mesh.ndim())
      malformed(fmt::format("{}.mesh_dim is {} but the mesh has {} dims", what, r.mesh_dim,
                            c.call.mesh.ndim()));
  }
}

} // namespace tdiag::dtensor::case_json
