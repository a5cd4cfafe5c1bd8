// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/case_check.hpp>
#include <tensordiag/dtensor_checks/comm_report.hpp>
#include <tensordiag/dtensor_checks/explain.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>
#include <tensordiag/dtensor_checks/redistribute.hpp>
#include <tensordiag/trace/units.hpp>

#include <pybind11/stl.h>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

using namespace tdiag::dtensor;

// A placement as the Python class users know (tensordiag.dtensor.Shard, ...).
py::object placement_object(const placement& p) {
  auto mod = py::module_::import("tensordiag.dtensor");
  switch (p.kind) {
  case placement_kind::shard:
    return mod.attr("Shard")(p.dim);
  case placement_kind::partial:
    return mod.attr("Partial")(std::string(to_string(p.op)), py::arg("_masked") = p.masked);
  case placement_kind::replicate:
    break;
  }
  return mod.attr("Replicate")();
}

py::list placement_objects(const placement_list& ps) {
  py::list out;
  for (const auto& p : ps)
    out.append(placement_object(p));
  return out;
}

placement to_placement(py::handle h) {
  if (py::isinstance<py::str>(h)) {
    const auto text = h.cast<std::string>();
    if (auto p = parse_placement(text))
      return *p;
    throw py::value_error("'" + text + "' is not a placement (R, S(0), P(sum))");
  }
  return h.cast<placement>();
}

placement_list to_placements(const py::iterable& items) {
  placement_list ps;
  for (auto item : items) {
    if (ps.size() == placement_list::capacity)
      throw py::value_error("at most 8 placements (one per mesh dim)");
    ps.push_back(to_placement(item));
  }
  return ps;
}

dtype to_dtype(const std::string& name) {
  if (auto t = parse_dtype(name))
    return *t;
  throw py::value_error("'" + name + "' is not a dtype (float32, bfloat16, int64, ...)");
}

tensor_spec make_spec(std::vector<std::int64_t> shape, const py::iterable& placements,
                      const std::string& type, std::optional<std::vector<std::int64_t>> stride) {
  tensor_spec spec;
  spec.meta.stride = stride ? std::move(*stride) : contiguous_strides(shape);
  spec.meta.shape = std::move(shape);
  spec.meta.type = to_dtype(type);
  spec.placements = to_placements(placements);
  return spec;
}

// One positional argument in the case format: TensorSpec, [TensorSpec], int, [int], float,
// bool, None, or a string in `tdiag shard explain --arg` notation.
op_arg to_arg(py::handle h, std::size_t mesh_ndim) {
  if (h.is_none())
    return {};
  if (py::isinstance<py::bool_>(h))
    return op_arg::of_bool(h.cast<bool>());
  if (py::isinstance<py::int_>(h))
    return op_arg::of_int(h.cast<std::int64_t>());
  if (py::isinstance<py::float_>(h))
    return op_arg::of_float(h.cast<double>());
  if (py::isinstance<py::str>(h))
    return parse_arg(h.cast<std::string>(), mesh_ndim);
  if (py::isinstance<tensor_spec>(h))
    return op_arg::of(h.cast<tensor_spec>());
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    const auto items = py::reinterpret_borrow<py::sequence>(h);
    if (items.size() != 0 && py::isinstance<tensor_spec>(items[0]))
      return op_arg::of(items.cast<std::vector<tensor_spec>>());
    return op_arg::of_ints(items.cast<std::vector<std::int64_t>>());
  }
  throw py::type_error("an argument must be a TensorSpec, a list of TensorSpecs, an int, a list "
                       "of ints, a float, a bool or None, not " +
                       std::string(py::str(py::type::of(h).attr("__name__"))));
}

py::dict comms_dict(const comm_counts& c) {
  py::dict out;
  for (std::size_t k = 1; k < c.by_kind.size(); ++k) {
    if (c.by_kind[k] != 0)
      out[py::str(std::string(to_string(static_cast<collective>(k))))] = c.by_kind[k];
  }
  return out;
}

// The call and what propagation made of it: the explanation needs both.
struct propagation {
  op_call call;
  propagation_result result;
};

op_call make_call(const std::string& op, const py::sequence& args, const device_mesh& mesh) {
  op_call call;
  call.mesh = mesh;
  const auto* rule = op_registry::builtin().resolve(op);
  call.op = rule != nullptr ? rule->name : op; // an unknown op is propagate()'s TDIAG-DT-010
  for (auto a : args)
    call.args.push_back(to_arg(a, mesh.ndim()));
  return call;
}

propagation run_propagate(const std::string& op, const py::sequence& args,
                          const device_mesh& mesh) {
  propagation p{make_call(op, args, mesh), {}};
  py::gil_scoped_release release;
  p.result = propagate(p.call);
  return p;
}

void bind_placements(py::module_& m) {
  py::class_<placement>(m, "Placement", "Base of Shard, Replicate and Partial.")
      .def(py::init([](const std::string& kind, std::int32_t dim, const std::string& op,
                       bool masked) {
             placement p;
             if (kind == "shard")
               p = placement::shard(dim);
             else if (kind == "partial") {
               const auto r = parse_reduce_op(op);
               if (!r)
                 throw py::value_error("reduce_op must be sum, avg, max or min, not '" + op + "'");
               p = placement::partial(*r, masked);
             } else if (kind != "replicate")
               throw py::value_error("kind must be shard, replicate or partial");
             return p;
           }),
           py::arg("kind"), py::arg("dim") = 0, py::arg("reduce_op") = "sum",
           py::arg("masked") = false)
      .def_property_readonly("dim", [](const placement& p) { return p.dim; })
      .def_property_readonly("reduce_op",
                             [](const placement& p) { return std::string(to_string(p.op)); })
      .def(
          "is_shard",
          [](const placement& p, std::optional<std::int32_t> dim) {
            return dim ? p.is_shard(*dim) : p.is_shard();
          },
          py::arg("dim") = py::none())
      .def("is_replicate", &placement::is_replicate)
      .def("is_partial", &placement::is_partial)
      .def("__eq__",
           [](const placement& a, py::handle b) {
             return py::isinstance<placement>(b) && a == b.cast<placement>();
           })
      .def("__hash__",
           [](const placement& p) {
             const auto dim = p.is_shard() ? p.dim : 0;
             const auto op = p.is_partial() ? static_cast<int>(p.op) * 2 + int{p.masked} : 0;
             return static_cast<std::int64_t>(p.kind) * 1000003 + dim * 101 + op;
           })
      .def("__repr__", py::overload_cast<const placement&>(&to_torch_string))
      .def("__str__", py::overload_cast<const placement&>(&to_string));
}

void bind_mesh_and_spec(py::module_& m) {
  py::class_<device_mesh>(m, "DeviceMesh", "An N-D grid of ranks, row-major like torch's.")
      .def(py::init(
               [](std::vector<std::int64_t> shape, std::optional<std::vector<std::string>> names) {
                 return device_mesh(std::move(shape),
                                    names ? std::move(*names) : std::vector<std::string>{});
               }),
           py::arg("shape"), py::arg("names") = py::none())
      .def_property_readonly("shape", &device_mesh::shape)
      .def_property_readonly("names", &device_mesh::names)
      .def_property_readonly("ndim", &device_mesh::ndim)
      .def("size", &device_mesh::size, py::arg("mesh_dim"))
      .def_property_readonly("num_devices", &device_mesh::num_devices)
      .def("coordinate", &device_mesh::coordinate, py::arg("rank"))
      .def_static("parse", &parse_mesh, py::arg("text"), "Parses `2,4` or `dp=2,tp=4`.")
      .def("__eq__", [](const device_mesh& a, const device_mesh& b) { return a == b; })
      .def("__repr__", &device_mesh::to_torch_string)
      .def("__str__", &device_mesh::to_string);

  py::class_<tensor_spec>(m, "TensorSpec", "A DTensor's global shape, dtype and placements.")
      .def(py::init(&make_spec), py::arg("shape"), py::arg("placements"),
           py::arg("dtype") = "float32", py::arg("stride") = py::none())
      .def_property_readonly("shape", [](const tensor_spec& s) { return s.meta.shape; })
      .def_property_readonly("stride", [](const tensor_spec& s) { return s.meta.stride; })
      .def_property_readonly(
          "dtype", [](const tensor_spec& s) { return std::string(to_string(s.meta.type)); })
      .def_property_readonly("placements",
                             [](const tensor_spec& s) { return placement_objects(s.placements); })
      .def_property_readonly("ndim", &tensor_spec::ndim)
      .def_static("parse", &parse_tensor_spec, py::arg("text"), py::arg("mesh_ndim"),
                  "Parses `f32[12,16] (S(0),P(sum))`.")
      .def(
          "local_shapes",
          [](const tensor_spec& s, const device_mesh& mesh) {
            validate_spec(s, mesh, "spec");
            std::vector<shape_t> shapes;
            for (auto& v : local_views(s, mesh))
              shapes.push_back(std::move(v.shape));
            return shapes;
          },
          py::arg("mesh"), "Every rank's local shape (torch.chunk semantics), rank order.")
      .def("__eq__", [](const tensor_spec& a, const tensor_spec& b) { return a == b; })
      .def("__repr__", py::overload_cast<const tensor_spec&>(&to_torch_string))
      .def("__str__", py::overload_cast<const tensor_spec&>(&to_string));
}

void bind_propagation(py::module_& m) {
  py::class_<redistribute_step>(m, "RedistributeStep", "One transform on one mesh dim.")
      .def_readonly("mesh_dim", &redistribute_step::mesh_dim)
      .def_property_readonly("src",
                             [](const redistribute_step& s) { return placement_object(s.from); })
      .def_property_readonly("dst",
                             [](const redistribute_step& s) { return placement_object(s.to); })
      .def_property_readonly(
          "collective", [](const redistribute_step& s) { return std::string(to_string(s.comm)); })
      .def_readonly("bytes_per_rank", &redistribute_step::bytes_per_rank)
      .def_readonly("time_us", &redistribute_step::time_us);

  py::class_<redistribution_plan>(m, "RedistributionPlan", "How one input is redistributed.")
      .def_property_readonly(
          "current", [](const redistribution_plan& p) { return placement_objects(p.current); })
      .def_property_readonly(
          "target", [](const redistribution_plan& p) { return placement_objects(p.target); })
      .def_readonly("steps", &redistribution_plan::steps)
      .def_readonly("time_us", &redistribution_plan::time_us)
      .def_property_readonly("comms",
                             [](const redistribution_plan& p) { return comms_dict(p.counts()); });

  py::class_<propagation>(m, "Propagation", "The result of propagate().")
      .def_property_readonly("op", [](const propagation& p) { return p.call.op; })
      .def_property_readonly("outputs", [](const propagation& p) { return p.result.outputs; })
      .def_property_readonly("plans", [](const propagation& p) { return p.result.plans; })
      .def_property_readonly("comms",
                             [](const propagation& p) { return comms_dict(p.result.comms); })
      .def_property_readonly(
          "reason", [](const propagation& p) { return std::string(to_string(p.result.reason)); })
      .def(
          "explain",
          [](const propagation& p, bool all) { return explain_text(p.call, p.result, all); },
          py::arg("all") = false, "As `tdiag shard explain`.")
      .def("to_json", [](const propagation& p) { return explain_json(p.call, p.result); });

  m.def("propagate", &run_propagate, py::arg("op"), py::arg("args"), py::arg("mesh"));
  m.def(
      "transition_collective",
      [](py::handle from, py::handle to) {
        const collective c = transition_collective(to_placement(from), to_placement(to));
        return c == collective::none ? std::string("none") : std::string(to_string(c));
      },
      py::arg("from"), py::arg("to"),
      "The collective PyTorch runs for one mesh-dim transform (`none`: a local chunk or "
      "partition), as redistribution plans count it.");
}

void bind_cases(py::module_& m) {
  py::class_<case_answer>(m, "CaseAnswer", "The answer for one corpus case.")
      .def_readonly("id", &case_answer::id)
      .def_readonly("ok", &case_answer::ok)
      .def_property_readonly("outputs",
                             [](const case_answer& a) {
                               py::list out;
                               for (const auto& o : a.outputs)
                                 out.append(
                                     py::make_tuple(o.shape, placement_objects(o.placements)));
                               return out;
                             })
      .def_property_readonly("comms", [](const case_answer& a) { return comms_dict(a.comms); })
      .def_readonly("error", &case_answer::error)
      .def_readonly("code", &case_answer::code)
      .def_property_readonly("error_class",
                             [](const case_answer& a) -> py::object {
                               if (a.ok)
                                 return py::none();
                               return py::str(std::string(to_string(a.kind)));
                             })
      .def_readonly("diagnostic", &case_answer::diag)
      .def("to_jsonl", py::overload_cast<const case_answer&>(&to_jsonl));

  py::class_<case_check>(m, "CaseCheck", "Every case of a corpus answered.")
      .def_readonly("answers", &case_check::answers)
      .def_readonly("rejected", &case_check::rejected)
      .def_property_readonly("malformed",
                             [](const case_check& c) {
                               py::list out;
                               for (const auto& e : c.file.errors)
                                 out.append(py::make_tuple(e.line, e.id, e.message));
                               return out;
                             })
      .def("to_jsonl", py::overload_cast<const case_check&>(&to_jsonl))
      .def("report", &check_report, py::arg("source"));

  m.def(
      "check_cases", [](const std::string& path) { return check_cases(read_case_file(path)); },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "check_cases_text", [](const std::string& text) { return check_cases(parse_cases(text)); },
      py::arg("text"), py::call_guard<py::gil_scoped_release>());
}

py::object optional_index(const std::optional<std::size_t>& i) {
  return i ? py::object(py::int_(*i)) : py::object(py::none());
}

void bind_comm_parts(py::module_& m) {
  py::class_<recorded_redistribution>(m, "RecordedRedistribution",
                                      "One mesh-dim transform PyTorch ran on an input.")
      .def_readonly("arg", &recorded_redistribution::arg)
      .def_property_readonly(
          "item", [](const recorded_redistribution& r) { return optional_index(r.item); })
      .def_readonly("mesh_dim", &recorded_redistribution::mesh_dim)
      .def_property_readonly(
          "src", [](const recorded_redistribution& r) { return placement_object(r.from); })
      .def_property_readonly(
          "dst", [](const recorded_redistribution& r) { return placement_object(r.to); })
      .def_property_readonly("collective",
                             [](const recorded_redistribution& r) {
                               return r.comm == collective::none ? std::string("none")
                                                                 : std::string(to_string(r.comm));
                             })
      .def_readonly("bytes_per_rank", &recorded_redistribution::bytes_per_rank);

  py::class_<placement_fix>(m, "PlacementFix", "A placement that avoids a redistribution.")
      .def_property_readonly("placements",
                             [](const placement_fix& f) { return placement_objects(f.placements); })
      .def_property_readonly("output",
                             [](const placement_fix& f) { return placement_objects(f.output); })
      .def_readonly("same_output", &placement_fix::same_output)
      .def_readonly("other_arg", &placement_fix::other_arg,
                    "The argument the fix places (None: the redistributed one)")
      .def_readonly("other_arg_name", &placement_fix::other_arg_name)
      .def_readonly("output_bytes", &placement_fix::output_bytes,
                    "Bytes per rank per call to bring the output to the recorded placements")
      .def_property_readonly(
          "output_collective",
          [](const placement_fix& f) { return std::string(to_string(f.output_comm)); })
      .def_readonly("moves_communication", &placement_fix::moves_communication,
                    "The fix is PyTorch's own target: the producer would communicate instead");

  py::class_<comm_cause>(m, "CommCause", "The redistributions of one argument of one op.")
      .def_readonly("op", &comm_cause::op)
      .def_readonly("arg", &comm_cause::arg)
      .def_property_readonly("item", [](const comm_cause& c) { return optional_index(c.item); })
      .def_readonly("arg_name", &comm_cause::arg_name)
      .def_property_readonly("arrived",
                             [](const comm_cause& c) { return placement_objects(c.arrived); })
      .def_readonly("redistributions", &comm_cause::steps)
      .def_property_readonly("comms", [](const comm_cause& c) { return comms_dict(c.comms); })
      .def_readonly("bytes_per_call", &comm_cause::bytes_per_call)
      .def_readonly("calls", &comm_cause::calls)
      .def_readonly("bytes", &comm_cause::bytes)
      .def_readonly("ids", &comm_cause::ids)
      .def_readonly("fix", &comm_cause::fix)
      .def_readonly("suggestion", &comm_cause::suggestion);

  py::class_<comm_line>(m, "CommLine", "One user source line that redistributed.")
      .def_property_readonly("file", [](const comm_line& l) { return l.source.file; })
      .def_property_readonly("line", [](const comm_line& l) { return l.source.line; })
      .def_property_readonly("function", [](const comm_line& l) { return l.source.function; })
      .def_property_readonly("code", [](const comm_line& l) { return l.source.code; })
      .def_readonly("bytes", &comm_line::bytes)
      .def_readonly("count", &comm_line::count)
      .def_property_readonly("comms", [](const comm_line& l) { return comms_dict(l.comms); })
      .def_readonly("causes", &comm_line::causes);

  py::class_<comm_module>(m, "CommModule", "One module in one phase and the collectives it issued.")
      .def_readonly("module", &comm_module::module)
      .def_readonly("phase", &comm_module::phase)
      .def_readonly("bytes", &comm_module::bytes)
      .def_readonly("count", &comm_module::count)
      .def_readonly("collectives", &comm_module::collectives)
      .def_readonly("ops", &comm_module::ops)
      .def_readonly("lines", &comm_module::lines);
}

void bind_comm_report(py::module_& m) {
  bind_comm_parts(m);
  py::class_<comm_report>(m, "CommReport", "Where a recorded DTensor program communicates.")
      .def_readonly("source", &comm_report::source)
      .def_readonly("lines", &comm_report::lines)
      .def_readonly("modules", &comm_report::modules)
      .def_readonly("records", &comm_report::records)
      .def_readonly("calls", &comm_report::calls)
      .def_readonly("bytes", &comm_report::bytes)
      .def_readonly("count", &comm_report::count)
      .def_readonly("checked", &comm_report::checked)
      .def_readonly("agree", &comm_report::agree)
      .def_readonly("not_covered", &comm_report::not_covered)
      .def_readonly("findings", &comm_report::findings)
      .def_property_readonly("report", [](const comm_report& r) { return to_report(r, 0); })
      .def(
          "to_text", [](const comm_report& r, std::size_t top) { return to_text(r, top); },
          py::arg("top") = 10, "As `tdiag shard report` prints it.")
      .def(
          "to_json", [](const comm_report& r, std::size_t top) { return to_json(r, top); },
          py::arg("top") = 0, "As `tdiag shard report --json` (tensordiag.shard_report/v1).")
      .def(
          "modules_text",
          [](const comm_report& r, std::size_t top) { return modules_text(r, top); },
          py::arg("top") = 10, "The modules table of `tdiag shard report` alone.");

  m.def(
      "shard_report",
      [](const std::string& path) {
        return build_comm_report(read_case_file_strict(path), path, [](std::int64_t b) {
          return trace::format_bytes(static_cast<std::uint64_t>(b < 0 ? 0 : b));
        });
      },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "shard_report_text",
      [](const std::string& text, const std::string& source) {
        return build_comm_report(parse_cases_strict(text, source), source, [](std::int64_t b) {
          return trace::format_bytes(static_cast<std::uint64_t>(b < 0 ? 0 : b));
        });
      },
      py::arg("text"), py::arg("source"), py::call_guard<py::gil_scoped_release>());
}

} // namespace

void bind_dtensor(py::module_& m) {
  bind_placements(m);
  bind_mesh_and_spec(m);
  bind_propagation(m);
  bind_cases(m);
  bind_comm_report(m);
}

} // namespace tdiag::python
