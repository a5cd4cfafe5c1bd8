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

namespace tdiag::dtensor {
namespace {

namespace od = simdjson::ondemand;

// Bounds that keep every later computation (numel, local views) far from overflow.
constexpr std::int64_t max_dim_size = std::int64_t{1} << 40;
constexpr std::size_t max_ndim = 16;
constexpr std::size_t max_list = 4096;

[[noreturn]] void malformed(std::string message) {
  diagnostic d;
  d.code = std::string(codes::malformed_case);
  d.title = "malformed case";
  d.message = std::move(message);
  throw input_error(std::move(d));
}

std::int64_t get_int(od::value v, std::string_view what) {
  std::int64_t x = 0;
  if (v.get_int64().get(x) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be an integer", what));
  return x;
}

std::vector<std::int64_t> get_ints(od::value v, std::string_view what, bool sizes) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be a list of integers", what));
  std::vector<std::int64_t> out;
  for (auto item : arr) {
    od::value x;
    if (item.get(x) != simdjson::SUCCESS)
      malformed(fmt::format("{} is not valid JSON", what));
    const auto n = get_int(x, what);
    if (n < -max_dim_size || n > max_dim_size || (sizes && n < 0))
      malformed(fmt::format("{} has {} out of range", what, n));
    out.push_back(n);
    if (out.size() > max_list)
      malformed(fmt::format("{} is too long", what));
  }
  return out;
}

std::string_view get_string(od::value v, std::string_view what) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be a string", what));
  return s;
}

placement_list get_placements(od::value v, std::string_view what) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be a list of strings", what));
  placement_list out;
  for (auto item : arr) {
    od::value x;
    if (item.get(x) != simdjson::SUCCESS)
      malformed(fmt::format("{} is not valid JSON", what));
    const auto text = get_string(x, what);
    auto p = parse_placement(text);
    if (!p)
      malformed(
          fmt::format("{}: '{}' is not a placement (R, S(d), P(sum|avg|max|min))", what, text));
    if (out.size() == placement_list::capacity)
      malformed(fmt::format("{} has more than {} entries", what, placement_list::capacity));
    out.push_back(*p);
  }
  return out;
}

tensor_spec get_tensor(od::value v, std::string_view what) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be an object", what));
  tensor_spec spec;
  bool has_shape = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed(fmt::format("{} has a bad key", what));
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed(fmt::format("{} is not valid JSON", what));
    if (key == "shape") {
      spec.meta.shape = get_ints(val, "shape", true);
      if (spec.meta.shape.size() > max_ndim)
        malformed(fmt::format("{} has more than {} dims", what, max_ndim));
      has_shape = true;
    } else if (key == "dtype") {
      const auto name = get_string(val, "dtype");
      auto t = parse_dtype(name);
      if (!t)
        malformed(fmt::format("{}: unknown dtype '{}'", what, name));
      spec.meta.type = *t;
    } else if (key == "placements") {
      spec.placements = get_placements(val, "placements");
    } else if (key == "stride") {
      spec.meta.stride = get_ints(val, "stride", false);
    }
  }
  if (!has_shape)
    malformed(fmt::format("{} has no shape", what));
  if (!numel_fits(spec.meta.shape))
    malformed(fmt::format("{} has too many elements (more than 2^50)", what));
  if (spec.meta.stride.size() != spec.meta.shape.size())
    spec.meta.stride = contiguous_strides(spec.meta.shape);
  return spec;
}

op_arg get_arg(od::value v, std::size_t index) {
  od::object obj;
  const auto what = fmt::format("args[{}]", index);
  if (v.get_object().get(obj) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be an object", what));
  op_arg arg;
  bool seen = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed(fmt::format("{} has a bad key", what));
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed(fmt::format("{} is not valid JSON", what));
    if (seen)
      malformed(fmt::format("{} must have exactly one key", what));
    seen = true;
    if (key == "tensor") {
      arg = op_arg::of(get_tensor(val, what));
    } else if (key == "tensors") {
      od::array arr;
      if (val.get_array().get(arr) != simdjson::SUCCESS)
        malformed(fmt::format("{}.tensors must be a list", what));
      std::vector<tensor_spec> specs;
      for (auto item : arr) {
        od::value x;
        if (item.get(x) != simdjson::SUCCESS)
          malformed(fmt::format("{} is not valid JSON", what));
        specs.push_back(get_tensor(x, what));
        if (specs.size() > max_list)
          malformed(fmt::format("{} has too many tensors", what));
      }
      arg = op_arg::of(std::move(specs));
    } else if (key == "int") {
      arg = op_arg::of_int(get_int(val, what));
    } else if (key == "ints") {
      arg = op_arg::of_ints(get_ints(val, what, false));
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
    } else {
      malformed(fmt::format("{}: unknown argument kind '{}'", what, key));
    }
  }
  if (!seen)
    malformed(fmt::format("{} is empty", what));
  return arg;
}

case_expectation get_expect(od::value v) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS)
    malformed("expect must be an object");
  case_expectation e;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed("expect has a bad key");
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed("expect is not valid JSON");
    if (key == "ok") {
      if (val.get_bool().get(e.ok) != simdjson::SUCCESS)
        malformed("expect.ok must be a bool");
    } else if (key == "outputs") {
      od::array arr;
      if (val.get_array().get(arr) != simdjson::SUCCESS)
        malformed("expect.outputs must be a list");
      for (auto item : arr) {
        od::value x;
        if (item.get(x) != simdjson::SUCCESS)
          malformed("expect.outputs is not valid JSON");
        auto spec = get_tensor(x, "expect.outputs");
        e.outputs.push_back({std::move(spec.meta.shape), std::move(spec.placements)});
      }
    } else if (key == "comms") {
      od::object comms;
      if (val.get_object().get(comms) != simdjson::SUCCESS)
        malformed("expect.comms must be an object");
      std::vector<std::string> seen; // a repeated collective is ambiguous (and summed, overflows)
      for (auto c : comms) {
        std::string_view name;
        if (c.unescaped_key().get(name) != simdjson::SUCCESS)
          malformed("expect.comms has a bad key");
        if (std::find(seen.begin(), seen.end(), name) != seen.end())
          malformed(fmt::format("expect.comms names '{}' twice", name));
        seen.emplace_back(name);
        od::value n;
        if (c.value().get(n) != simdjson::SUCCESS)
          malformed("expect.comms is not valid JSON");
        const auto count = get_int(n, "expect.comms");
        if (name == "all_gather")
          e.comms.add(collective::all_gather, count);
        else if (name == "all_reduce")
          e.comms.add(collective::all_reduce, count);
        else if (name == "reduce_scatter")
          e.comms.add(collective::reduce_scatter, count);
        else if (name == "all_to_all")
          e.comms.add(collective::all_to_all, count);
        else
          malformed(fmt::format("expect.comms: unknown collective '{}'", name));
      }
    } else if (key == "class") {
      e.error_class = std::string(get_string(val, "expect.class"));
    } else if (key == "error_type") {
      e.error_type = std::string(get_string(val, "expect.error_type"));
    } else if (key == "error") {
      e.error = std::string(get_string(val, "expect.error"));
    }
  }
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
  bool has_mesh = false;
  bool has_args = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed("bad key");
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed(fmt::format("'{}' is not valid JSON", key));
    if (key == "id") {
      c.id = std::string(get_string(val, "id"));
      id_out = c.id;
    } else if (key == "op") {
      c.call.op = std::string(get_string(val, "op"));
      has_op = true;
    } else if (key == "mesh") {
      auto sizes = get_ints(val, "mesh", true);
      if (sizes.empty() || sizes.size() > 8)
        malformed("mesh must have 1 to 8 dims");
      try {
        c.call.mesh = device_mesh(std::move(sizes));
      } catch (const input_error& e) {
        malformed(e.what());
      }
      has_mesh = true;
    } else if (key == "args") {
      od::array arr;
      if (val.get_array().get(arr) != simdjson::SUCCESS)
        malformed("args must be a list");
      for (auto item : arr) {
        od::value x;
        if (item.get(x) != simdjson::SUCCESS)
          malformed("args is not valid JSON");
        c.call.args.push_back(get_arg(x, c.call.args.size()));
        if (c.call.args.size() > 64)
          malformed("too many args");
      }
      has_args = true;
    } else if (key == "expect") {
      c.expect = get_expect(val);
    }
  }
  // simdjson 3.0 has no document::at_end(); trailing bytes after the object are ignored.
  if (!has_op)
    malformed("missing 'op'");
  if (!has_mesh)
    malformed("missing 'mesh'");
  if (!has_args)
    malformed("missing 'args'");
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
  return parse_cases(read_input_file(path));
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
