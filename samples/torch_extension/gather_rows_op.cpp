// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The op's Python binding. After the launch, tdiag::synchronize_and_check() on PyTorch's current
// stream turns a failed device check into tdiag_torch_gather.DeviceAssertionError (a
// RuntimeError) whose text is the tensordiag report; the failing threads only stopped, so the
// stream and the CUDA context stay usable for the next torch op.
#include <tensordiag/assertions/runtime.hpp>
#include <tensordiag/core/report_io.hpp>

#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

#include "gather_rows.h"

namespace {

torch::Tensor gather_rows(const torch::Tensor& src, const torch::Tensor& index, bool registered) {
  TORCH_CHECK(src.is_cuda() && src.dim() == 2 && src.scalar_type() == torch::kFloat,
              "src: a 2-D float32 CUDA tensor");
  TORCH_CHECK(index.is_cuda() && index.dim() == 1 && index.scalar_type() == torch::kLong,
              "index: a 1-D int64 CUDA tensor");
  const auto s = src.contiguous();
  const auto i = index.contiguous();
  auto out = torch::empty({i.size(0), s.size(1)}, s.options());
  if (i.size(0) == 0)
    return out;
  tdiag_sample::gather_args a;
  a.src = s.data_ptr<float>();
  a.index = i.data_ptr<std::int64_t>();
  a.out = out.data_ptr<float>();
  a.rows = s.size(0);
  a.cols = s.size(1);
  a.count = i.size(0);
  a.stream = at::cuda::getCurrentCUDAStream().stream();
  tdiag_sample::launch_gather_rows(a, registered);
  tdiag::synchronize_and_check(a.stream);
  return out;
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  // Leaked on purpose: Python may still raise it while the module is torn down. pybind11 takes a
  // plain function as translator, so the type is a function-local static.
  static auto* error = new pybind11::exception<tdiag::device_assertion_error>(
      m, "DeviceAssertionError", PyExc_RuntimeError);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const tdiag::device_assertion_error& e) {
      const std::string text = tdiag::render(e.report(), tdiag::report_format::text);
      PyErr_SetString(error->ptr(), text.c_str());
    }
  });
  m.def("gather_rows", &gather_rows, pybind11::arg("src"), pybind11::arg("index"),
        pybind11::arg("registered") = false,
        "out[r] = src[index[r]]; a bad index raises DeviceAssertionError with tensordiag's report");
}
