// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The compiled module tensordiag._tensordiag: one bind_* function per library, and the
// conversions the three share. The binding layer only converts: every figure comes from the
// libraries.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <functional>
#include <optional>
#include <pybind11/pybind11.h>
#include <string>

namespace tdiag::python {

namespace py = pybind11;

void bind_report(py::module_& m);
void bind_dtensor(py::module_& m);
void bind_trace(py::module_& m);
void bind_job(py::module_& m);
void bind_fr(py::module_& m);
void bind_runtime(py::module_& m);

/// The trace behind a Python Trace handle (throws py::type_error for anything else).
using trace_accessor = std::function<const trace::trace&(py::handle)>;
/// The read-only lookup tables of a trace (trace_tables.cpp), for trace_of's handles.
void bind_trace_tables(py::module_& m, const trace_accessor& trace_of);

/// A field value as a Python bool, int, float, str or list.
[[nodiscard]] py::object to_python(const field_value& value);

/// `device=` and `window=` of load() and analyze(), as `--device` and `--window` read them;
/// throws ValueError for a negative device or a malformed window.
[[nodiscard]] trace::trace_selection selection_of(std::optional<int> device,
                                                  const std::optional<std::string>& window);

} // namespace tdiag::python
