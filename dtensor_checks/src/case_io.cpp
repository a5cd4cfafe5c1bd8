// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <iterator>

#include "case_fields.hpp"

namespace tdiag::dtensor {
namespace {

using namespace case_json;

constexpr std::size_t max_ndim = 16;

tensor_spec get_tensor(od::value v, std::string_view what) {
  tensor_spec spec;
  bool has_shape = false;
  for_each_field(v, what, [&](std::string_view key, od::value val) {
    if (key == "shape") {
      spec.meta.shape = get_ints(val, fmt::format("{}.shape", what), true);
      if (spec.meta.shape.size() > max_ndim)
        malformed(fmt::format("{} has more than {} dims", what, max_ndim));
      has_shape = true;
    } else if (key == "dtype") {
      const auto name = get_string(val, fmt::format("{}.dtype", what));
      auto t = parse_dtype(name);
      if (!t)
        malformed(fmt::format("{}: unknown dtype '{}'", what, name));
      spec.meta.type = *t;
    } else if (key == "placements") {
      spec.placements = get_placements(val, fmt::format("{}.placements", what));
    } else if (key == "stride") {
      spec.meta.stride = get_ints(val, fmt::format("{}.stride", what), false);
    }
  });
  if (!has_shape)
    malformed(fmt::format("{} has no shape", what));
  if (!numel_fits(spec.meta.shape))
    malformed(fmt::format("{} has too many elements (more than 2^50)", what));
  if (spec.meta.stride.size() != spec.meta.shape.size())
    spec.meta.stride = contiguous_strides(spec.meta.shape);
  return spec;
}

op_arg get_arg(od::value v, std::size_t index) {
  const auto what = fmt::format("args[{}]", index);
  op_arg arg;
  bool seen = false;
  for_each_field(v, what, [&](std::string_view key, od::value val) {
    if (seen)
      malformed(fmt::format("{} must have exactly one key", what));
    seen = true;
    if (key == "tensor") {
      arg = op_arg::of(get_tensor(val, what + ".tensor"));
    } else if (key == "tensors") {
      std::vector<tensor_spec> specs;
      for_each_item(val, what + ".tensors", "a list", [&](od::value x) {
        specs.push_back(get_tensor(x, fmt::format("{}.tensors[{}]", what, specs.size())));
        if (specs.size() > max_list)
          malformed(fmt::format("{} has too many tensors", what));
      });
      arg = op_arg::of(std::move(specs));
    } else if (key == "int") {
      arg = op_arg::of_int(get_int(val, what + ".int"));
    } else if (key == "ints") {
      arg = op_arg::of_ints(get_ints(val, what + ".ints", false));
    } else if (key == "float") {
      double d = 0;
      if (val.get_double().get(d) != simdjson::SUCCESS)
        malformed(fmt::format("{}.float must be a number", what));
      arg = op_arg::of_float(d);
    } else if (key == "bool") {
      bool b = false;
      if (val.get_bool().get(b) != simdjson::SUCCESS)
        malformed(fmt::format("{}.bool must be true or false", what));
      arg = op_arg::of_bool(b);
    } else if (key == "none") {
      arg = op_arg{};
    } else if (key == "str") {
      arg = op_arg::of_string(std::string(get_string(val, what + ".str")));
    } else {
      malformed(fmt::format("{}: unknown argument kind '{}'", what, key));
    }
  });
  if (!seen)
    malformed(fmt::format("{} is empty", what));
  return arg;
}

case_expectation get_expect(od::value v) {
  case_expectation e;
  for_each_field(v, "expect", [&](std::string_view key, od::value val) {
    if (key == "ok") {
      if (val.get_bool().get(e.ok) != simdjson::SUCCESS)
        malformed("expect.ok must be a bool");
    } else if (key == "outputs") {
      for_each_item(val, "expect.outputs", "a list", [&](od::value x) {
        auto spec = get_tensor(x, fmt::format("expect.outputs[{}]", e.outputs.size()));
        e.outputs.push_back({std::move(spec.meta.shape), std::move(spec.placements)});
      });
    } else if (key == "comms") {
      std::vector<std::string> seen; // a repeated collective is ambiguous (and summed, overflows)
      for_each_field(val, "expect.comms", [&](std::string_view name, od::value n) {
        if (std::find(seen.begin(), seen.end(), name) != seen.end())
          malformed(fmt::format("expect.comms names '{}' twice", name));
        seen.emplace_back(name);
        const auto count = get_int(n, fmt::format("expect.comms.{}", name));
        const auto kind = parse_collective(name);
        if (!kind || *kind == collective::none)
          malformed(fmt::format("expect.comms: unknown collective '{}'", name));
        e.comms.add(*kind, count);
      });
    } else if (key == "class") {
      e.error_class = std::string(get_string(val, "expect.class"));
    } else if (key == "error_type") {
      e.error_type = std::string(get_string(val, "expect.error_type"));
    } else if (key == "error") {
      e.error = std::string(get_string(val, "expect.error"));
    }
  });
  return e;
}

dtensor_case parse_with(od::parser& parser, simdjson::padded_string_view json,
                        std::string& id_out) {
  od::document doc;
  if (auto err = parser.iterate(json).get(doc); err != simdjson::SUCCESS) {
    malformed(fmt::format("not valid JSON: {}", simdjson::error_message(err)));
  }
  od::object obj;
  if (auto err = doc.get_object().get(obj); err != simdjson::SUCCESS) {
    malformed(
        fmt::format("a case must be one complete JSON object ({})", simdjson::error_message(err)));
  }
  dtensor_case c;
  bool has_op = false;
  bool has_args = false;
  std::optional<std::vector<std::int64_t>> mesh;
  std::vector<std::string> mesh_names;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed("bad key");
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed(fmt::format("'{}' is not valid JSON", key));
    const bool optional = key == "mesh_dim_names" || key == "source" || key == "redistributions" ||
                          key == "calls" || key == "collective" || key == "collectives";
    if (key == "module" || key == "phase") {
      c.has_module = true; // null: outside every module (or phase unknown)
      if (!is_null(val))
        (key == "module" ? c.module : c.phase) = std::string(get_string(val, key));
    } else if (optional && is_null(val)) {
      continue; // a recording's optional field written as None
    } else if (key == "collective") {
      // A standalone collective is its own record: it wins over any `collectives` list.
      c.collectives = {get_collective(val, "collective")};
      c.standalone = true;
    } else if (key == "collectives") {
      if (!c.standalone)
        c.collectives = get_collectives(val);
    } else if (key == "id") {
      c.id = std::string(get_string(val, "id"));
      id_out = c.id;
    } else if (key == "op") {
      c.call.op = std::string(get_string(val, "op"));
      has_op = true;
    } else if (key == "mesh") {
      mesh = get_ints(val, "mesh", true);
      if (mesh->empty() || mesh->size() > 8)
        malformed("mesh must have 1 to 8 dims");
    } else if (key == "mesh_dim_names") {
      mesh_names = get_strings(val, "mesh_dim_names");
    } else if (key == "source") {
      c.source = get_source(val);
    } else if (key == "redistributions") {
      c.redistributions = get_redistributions(val);
    } else if (key == "calls") {
      c.calls = get_int(val, "calls");
    } else if (key == "args") {
      for_each_item(val, "args", "a list", [&](od::value x) {
        c.call.args.push_back(get_arg(x, c.call.args.size()));
        if (c.call.args.size() > 64)
          malformed("too many args");
      });
      has_args = true;
    } else if (key == "expect") {
      c.expect = get_expect(val);
    }
  }
  // Two objects on one line: the second must be refused, not silently dropped. simdjson 3.0
  // has no document::at_end(): a location still in bounds after the object is a next value.
  if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS)
    malformed("more than one JSON value on the line (one case per line)");
  if (!has_op)
    malformed("missing 'op'");
  if (!mesh)
    malformed("missing 'mesh'");
  if (!has_args)
    malformed("missing 'args'");
  if (!mesh_names.empty() && mesh_names.size() != mesh->size())
    malformed(fmt::format("mesh_dim_names has {} names for a {}-D mesh", mesh_names.size(),
                          mesh->size()));
  try {
    c.call.mesh = device_mesh(std::move(*mesh), std::move(mesh_names));
  } catch (const input_error& e) {
    malformed(e.what());
  }
  check_recording(c);
  return c;
}

} // namespace

dtensor_case parse_case_line(std::string_view line) {
  od::parser parser;
  simdjson::padded_string padded(line);
  std::string id;
  try {
    return parse_with(parser, padded, id);
  } catch (const simdjson::simdjson_error& e) {
    malformed(fmt::format("not valid JSON: {}", e.what()));
  }
}

case_file parse_cases(std::string_view jsonl) {
  case_file out;
  od::parser parser;
  // One padded copy of the whole text; each line is parsed in place through a view whose
  // capacity reaches the end of the padding.
  simdjson::padded_string padded(jsonl);
  const char* base = padded.data();
  const std::size_t total = padded.size();
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < total) {
    ++line_no;
    auto end = jsonl.find('\n', pos);
    if (end == std::string_view::npos)
      end = total;
    std::size_t len = end - pos;
    while (len > 0 && (base[pos + len - 1] == '\r' || base[pos + len - 1] == ' ' ||
                       base[pos + len - 1] == '\t'))
      --len;
    std::size_t start = pos;
    while (len > 0 && (base[start] == ' ' || base[start] == '\t'))
      ++start, --len;
    if (len > 0) {
      std::string id;
      try {
        simdjson::padded_string_view view(base + start, len,
                                          total - start + simdjson::SIMDJSON_PADDING);
        auto c = parse_with(parser, view, id);
        c.line = line_no;
        out.cases.push_back(std::move(c));
      } catch (const input_error& e) {
        out.errors.push_back({line_no, id, e.what()});
      } catch (const simdjson::simdjson_error& e) {
        out.errors.push_back({line_no, id, fmt::format("not valid JSON: {}", e.what())});
      }
    }
    pos = end + 1;
  }
  return out;
}

case_file read_case_file(const std::filesystem::path& path) {
  const std::string text = read_input_file(path);
  // What parsing builds beside the text held: its padded copy, and simdjson's index of the
  // longest line (about five bytes per byte of it). A 1 GiB one-line recording needed 4 GiB
  // under a budget that only the file's size was checked against.
  std::size_t longest = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    longest = std::max(longest, end - pos);
    pos = end + 1;
  }
  constexpr std::uint64_t index_bytes_per_byte = 5;
  check_memory_budget(
      std::string(path == "-" ? "<stdin>" : path.string()),
      fmt::format("a recording of {} bytes whose longest line is {} bytes", text.size(), longest),
      std::uint64_t{text.size()} * 2 + std::uint64_t{longest} * index_bytes_per_byte +
          simdjson::SIMDJSON_PADDING);
  return parse_cases(text);
}

namespace {

// Throws the first error of `file` as one line naming `name`.
void throw_first_error(const case_file& file, const std::string& name) {
  if (file.errors.empty())
    return;
  const auto& e = file.errors.front();
  diagnostic d;
  d.code = std::string(codes::malformed_case);
  d.title = "malformed case";
  d.message = fmt::format("{}:{}: malformed case{}: {}", name, e.line,
                          e.id.empty() ? "" : fmt::format(" '{}'", e.id), e.message);
  d.location.file = name;
  d.location.line = static_cast<std::uint32_t>(e.line);
  throw input_error(std::move(d));
}

} // namespace

case_file read_case_file_strict(const std::filesystem::path& path) {
  auto file = read_case_file(path);
  throw_first_error(file, path.string());
  return file;
}

case_file parse_cases_strict(std::string_view jsonl, const std::string& name) {
  auto file = parse_cases(jsonl);
  throw_first_error(file, name);
  return file;
}

case_answer answer_case(const dtensor_case& c, const op_registry& registry) {
  case_answer a;
  a.id = c.id;
  try {
    const auto r = propagate(c.call, registry);
    a.ok = true;
    for (const auto& o : r.outputs) {
      output_record rec{o.meta.shape, o.placements};
      // The corpus records embedding's mask partial as the P(sum) it reduces like.
      for (auto& p : rec.placements)
        p.masked = false;
      a.outputs.push_back(std::move(rec));
    }
    a.comms = r.comms;
  } catch (const sharding_error& e) {
    a.ok = false;
    a.diag = e.diag();
    a.code = a.diag->code;
    a.kind = e.error_kind();
    a.error = a.diag->message;
  }
  return a;
}

namespace {
void write_strings(detail::json_out& out, const placement_list& placements) {
  out.begin_array();
  for (const auto& p : placements)
    out.string(to_string(p));
  out.end_array();
}
} // namespace

std::string to_jsonl(const case_answer& a) {
  detail::json_out out(detail::json_style::compact);
  out.begin_object();
  out.member("id", a.id);
  if (a.ok) {
    out.key("ok");
    out.boolean(true);
    out.key("outputs");
    out.begin_array();
    for (const auto& o : a.outputs) {
      out.begin_object();
      out.key("shape");
      out.begin_array();
      for (const auto size : o.shape)
        out.integer(size);
      out.end_array();
      out.key("placements");
      write_strings(out, o.placements);
      out.end_object();
    }
    out.end_array();
    out.key("comms");
    out.raw(comms_to_json(a.comms));
  } else {
    out.key("ok");
    out.boolean(false);
    out.member("error", a.error);
    out.member("code", a.code);
    out.member("class", to_string(a.kind));
  }
  out.end_object();
  return out.take();
}

std::string to_jsonl(const case_read_error& e) {
  detail::json_out out(detail::json_style::compact);
  out.begin_object();
  out.member("id", e.id);
  out.key("ok");
  out.boolean(false);
  out.member("line", static_cast<std::int64_t>(e.line));
  out.member("code", codes::malformed_case);
  out.member("error", fmt::format("line {}: {}", e.line, e.message));
  out.end_object();
  return out.take();
}

} // namespace tdiag::dtensor
