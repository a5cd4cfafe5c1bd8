// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The whole-job analyses (`tdiag trace analyze`): the job loaded through trace::load_job, the
// figures from trace::analyze_job, returned as the library's tensordiag.analysis/v1 JSON text
// (tensordiag.trace.analyze parses it), so Python and the CLI print one computation.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <fmt/format.h>

#include <optional>
#include <pybind11/stl.h>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

using namespace tdiag::trace;

// Returns (analysis JSON, warnings of every trace's import and of the clocks).
py::tuple analyze(const std::vector<std::string>& inputs, bool hta_compat,
                  const std::string& rank_from, const std::string& align,
                  const std::optional<std::string>& annotation, std::optional<int> instance,
                  const std::vector<std::string>& data_load, std::optional<int> device,
                  const std::optional<std::string>& window, bool job_only) {
  const auto ranks = rank_source_from_name(rank_from);
  if (!ranks)
    throw py::value_error(fmt::format(
        "rank_from={:?}: expected 'auto', 'distributed', 'file-name' or 'position'", rank_from));
  const auto alignment = clock_alignment_from_name(align);
  if (!alignment)
    throw py::value_error(
        fmt::format("align={:?}: expected 'auto', 'base-time' or 'collectives'", align));
  if (instance && *instance < 0)
    throw py::value_error(fmt::format("critical_path_instance={}: expected >= 0", *instance));
  const auto select = selection_of(device, window);
  analysis_options options;
  options.hta_compat = hta_compat;
  options.align = *alignment;
  options.rank_analyses = !job_only;
  options.critical_path_annotation = annotation;
  options.critical_path_instance = instance.value_or(-1);
  options.critical_path_data_load = data_load;
  std::string json;
  std::vector<diagnostic> warnings;
  {
    py::gil_scoped_release release;
    job_load_options load;
    load.ranks = *ranks;
    load.load.select = select;
    const auto job = load_job(inputs, load, &warnings);
    for (const auto& m : job)
      warnings.insert(warnings.end(), m.loaded.warnings.begin(), m.loaded.warnings.end());
    const auto result = analyze_job(rank_traces(job), options);
    warnings.insert(warnings.end(), result.clocks.warnings.begin(), result.clocks.warnings.end());
    json = analysis_json(result);
  }
  return py::make_tuple(std::move(json), std::move(warnings));
}

} // namespace

void bind_job(py::module_& m) {
  m.def("analyze", &analyze, py::arg("inputs"), py::arg("hta_compat"), py::arg("rank_from"),
        py::arg("align"), py::arg("critical_path_annotation"), py::arg("critical_path_instance"),
        py::arg("critical_path_data_load"), py::arg("device"), py::arg("window"),
        py::arg("job_only"),
        "The whole-job analyses of `tdiag trace analyze`: (tensordiag.analysis/v1 JSON, "
        "import and clock warnings).");
}

} // namespace tdiag::python
