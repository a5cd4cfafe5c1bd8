// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/version.hpp>
#include <tensordiag/dtensor_checks/errors.hpp>

#include <pybind11/stl.h>
#include <string>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

// Raises tensordiag.errors.<name>(message, report, **extra): the Python classes live in the
// pure-Python package so that they carry docstrings and stubs.
void raise_error(const char* name, const tdiag::error& e, const py::dict& extra = {}) {
  auto cls = py::module_::import("tensordiag.errors").attr(name);
  py::object exc = cls(py::str(e.what()), py::cast(e.report()), **extra);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

// pybind11 hands exceptions to translators by value.
void translate(std::exception_ptr p) { // NOLINT(performance-unnecessary-value-param)
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
  bind_fr(m);
  bind_runtime(m);
}
