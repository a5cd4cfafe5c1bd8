// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The NumPy columns of the trace's event stores: one strided, read-only view per record field
// over the store's own records, kept alive by the Python Trace object (no copy per event).
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <string_view>

namespace tdiag::python {

/// The columns of the store `kind` ("kernels", "copies", "api_calls", "ranges", "markers",
/// "memory", "assertions", "flows", "counters") as a dict of 1-D arrays whose base is `owner`.
/// Throws py::value_error for another kind.
[[nodiscard]] pybind11::dict event_columns(const trace::trace& t, std::string_view kind,
                                           pybind11::handle owner);

} // namespace tdiag::python
