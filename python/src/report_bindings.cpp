// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/core/report_merge.hpp>

#include <pybind11/stl.h>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tdiag::python {

py::object to_python(const field_value& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using value_type = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<value_type, field_value::list>) {
          py::list items;
          for (const auto& item : v)
            items.append(to_python(item));
          return items;
        } else {
          return py::cast(v);
        }
      },
      value.value);
}

namespace {

py::dict fields_of(const diagnostic& d) {
  py::dict fields;
  for (const auto& f : d.fields) {
    if (!fields.contains(f.name)) // the first field of a name, as find_field()
      fields[py::str(f.name)] = to_python(f.value);
  }
  return fields;
}

py::object optional_int(const std::optional<std::int64_t>& v) {
  return v ? py::cast(*v) : py::none();
}

void bind_diagnostic(py::module_& m) {
  py::class_<diagnostic>(m, "Diagnostic", "One finding: a stable code, a message, typed fields.")
      .def_property_readonly(
          "severity", [](const diagnostic& d) { return std::string(to_string(d.level)); },
          "'note', 'warning' or 'error'")
      .def_readonly("code", &diagnostic::code, "Stable code, e.g. TDIAG-DT-002")
      .def_readonly("title", &diagnostic::title)
      .def_readonly("message", &diagnostic::message)
      .def_readonly("hint", &diagnostic::hint)
      .def_readonly("notes", &diagnostic::notes)
      .def_property_readonly("fields", &fields_of, "Fields by name, in report order")
      .def_property_readonly(
          "file", [](const diagnostic& d) { return d.location.file; }, "'' when unknown")
      .def_property_readonly(
          "line", [](const diagnostic& d) { return d.location.line; }, "0 when unknown")
      .def(
          "to_text", [](const diagnostic& d) { return to_text(d); },
          "The diagnostic as `tdiag` prints it, without the summary line.")
      .def("__repr__", [](const diagnostic& d) {
        return "<Diagnostic " + d.code + " " + std::string(to_string(d.level)) + ": " + d.message +
               ">";
      });
}

void bind_report_class(py::module_& m) {
  py::class_<report>(m, "Report", "A tensordiag report: the findings of one run, any format.")
      .def(py::init<>())
      .def_readonly("diagnostics", &report::diagnostics)
      .def_property_readonly("tool", [](const report& r) { return r.metadata.tool; })
      .def_property_readonly("version", [](const report& r) { return r.metadata.version; })
      .def_property_readonly("time", [](const report& r) { return r.metadata.time; })
      .def_property_readonly("rank", [](const report& r) { return optional_int(r.metadata.rank); })
      .def_property_readonly("device",
                             [](const report& r) { return optional_int(r.metadata.device); })
      .def_property_readonly("has_errors", &report::has_errors)
      .def(
          "count",
          [](const report& r, const std::string& level) {
            const auto parsed = parse_severity(level);
            if (!parsed)
              throw py::value_error("severity must be 'note', 'warning' or 'error', not '" + level +
                                    "'");
            return r.count(*parsed);
          },
          py::arg("severity"), "Number of diagnostics of one severity.")
      .def(
          "to_text", [](const report& r, bool color) { return to_text(r, text_options{color}); },
          py::arg("color") = false, "Human text, as `tdiag report convert --to text`.")
      .def("to_json", py::overload_cast<const report&>(&to_json),
           "JSON, schema tensordiag.report/v1.")
      .def("to_sarif", &to_sarif, "SARIF 2.1.0.")
      .def("to_junit", &to_junit, "JUnit XML.")
      .def("to_github", &to_github, "GitHub Actions workflow commands.")
      .def(
          "render",
          [](const report& r, const std::string& format) {
            const auto parsed = parse_report_format(format);
            if (!parsed)
              throw py::value_error("format must be text, json, github, junit or sarif, not '" +
                                    format + "'");
            return render(r, *parsed);
          },
          py::arg("format"), "Any of the formats above by name.")
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& source) {
            return parse_report_json(text, source);
          },
          py::arg("text"), py::arg("source") = "<string>",
          "Parses a tensordiag.report/v1 document; raises InputError naming `source`.")
      .def_static(
          "load", [](const std::string& path) { return read_report_file(path); }, py::arg("path"),
          py::call_guard<py::gil_scoped_release>(), "Reads a tensordiag.report/v1 JSON file.")
      .def("__len__", [](const report& r) { return r.diagnostics.size(); })
      .def("__eq__", [](const report& a, const report& b) { return a == b; })
      .def("__repr__", [](const report& r) {
        return "<Report " + r.metadata.tool + ": " + std::to_string(r.diagnostics.size()) +
               " diagnostics, " + std::to_string(r.count(severity::error)) + " errors>";
      });
}

} // namespace

void bind_report(py::module_& m) {
  bind_diagnostic(m);
  bind_report_class(m);
  m.def(
      "merge_reports", [](const std::vector<report>& inputs) { return merge_reports(inputs); },
      py::arg("reports"), "As `tdiag report merge`.");
}

} // namespace tdiag::python
