// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/version.hpp>
#include <tensordiag/dtensor_checks/errors.hpp>

#include <cstdio>
#include <pybind11/stl.h>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "run.hpp"

namespace tdiag::python {
namespace {

// Raises tensordiag.errors.<name>(message, report, **extra): the Python classes live in the
// pure-Python package so that they carry docstrings and stubs.
void raise_error(const char* name, const tdiag::error& e, py::dict extra = {}) {
  auto cls = py::module_::import("tensordiag.errors").attr(name);
  py::object exc = cls(py::str(e.what()), py::cast(e.report()), **extra);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p)
      std::rethrow_exception(p);
  } catch (const dtensor::sharding_error& e) {
    py::dict extra;
    extra["error_class"] = std::string(dtensor::to_string(e.error_kind()));
    raise_error("ShardingError", e, extra);
  } catch (const tdiag::input_error& e) {
    raise_error("InputError", e);
  } catch (const tdiag::error& e) {
    raise_error("Error", e);
  }
}

// `python -m tensordiag ARGS`: the CLI itself, with argv[0] named `tdiag` so that its messages
// read as they do from the shell.
int run_cli(const std::vector<std::string>& args) {
  std::vector<std::string> owned{"tdiag"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = tdiag::cli::run(static_cast<int>(owned.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  return status;
}

} // namespace
} // namespace tdiag::python

PYBIND11_MODULE(_tensordiag, m) {
  namespace py = pybind11;
  using namespace tdiag::python;
  m.doc() = "tensordiag's compiled core: bindings of the C++ libraries (use the tensordiag "
            "package, not this module)";
  m.attr("__version__") = TDIAG_VERSION_STRING;
  py::register_exception_translator(&translate);
  bind_report(m);
  bind_dtensor(m);
  bind_trace(m);
  bind_job(m);
  bind_runtime(m);
  m.def("run_cli", &run_cli, py::arg("args"), py::call_guard<py::gil_scoped_release>(),
        "Runs `tdiag ARGS...` in this process and returns its exit status.");
}
