// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Flight Recorder forensics (`tdiag fr analyze`): the dumps loaded by trace::fr::load_dumps,
// the verdict from trace::fr::analyze, returned as the library's tensordiag.fr/v1 JSON, its text
// and its report (tensordiag.fr.load wraps them), so Python and the CLI print one computation.
#include <tensordiag/trace/flight_recorder.hpp>

#include <pybind11/stl.h>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

// Returns (tensordiag.fr/v1 JSON, the text for people, the verdict as a report).
py::tuple fr_analyze(const std::vector<std::string>& inputs, int world_size) {
  if (world_size < 0)
    throw py::value_error("world_size must be >= 0 (0: only the ranks the dumps show)");
  std::string json;
  std::string text;
  tdiag::report report;
  {
    py::gil_scoped_release release;
    const auto dumps = trace::fr::load_dumps(inputs);
    trace::fr::analyze_options options;
    options.world_size = world_size;
    const auto verdict = trace::fr::analyze(dumps, options);
    json = trace::fr::to_json(verdict);
    text = trace::fr::to_text(verdict);
    report = trace::fr::to_report(verdict);
  }
  return py::make_tuple(std::move(json), std::move(text), std::move(report));
}

} // namespace

void bind_fr(py::module_& m) {
  m.def("fr_analyze", &fr_analyze, py::arg("inputs"), py::arg("world_size"),
        "`tdiag fr analyze`: (tensordiag.fr/v1 JSON, text, report) of Flight Recorder dumps "
        "(files, folders or globs).");
}

} // namespace tdiag::python
