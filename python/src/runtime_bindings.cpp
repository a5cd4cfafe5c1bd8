// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Runtime checks of real distributed tensors (dtensor_checks/runtime) for tensordiag.torch:
// check_local_tensor over the ranks LocalTensorMode simulates in one process (one thread per
// rank, thread communicators), or over a real job, through a communicator whose collectives are
// a Python object's methods (torch.distributed on the job's process group). Only conversions
// here: the checks and their messages are the library's.
#include <tensordiag/core/report_merge.hpp>
#include <tensordiag/dtensor_checks/comm/communicator.hpp>
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::runtime;

dtype dtype_of(const std::string& name) {
  const auto t = parse_dtype(name);
  if (!t)
    throw py::value_error(fmt::format("unknown dtype '{}'", name));
  return *t;
}

check_options options_of(const std::string& name, bool replicas, bool shapes, bool nonfinite) {
  check_options o;
  o.tensor_name = name;
  o.replicas = replicas;
  o.shapes = shapes;
  o.nonfinite = nonfinite;
  o.partials = false; // needs the reference values only the program has
  return o;
}

// A rank's local data, copied out of the Python buffer while the GIL is held.
struct owned_local {
  std::string bytes;
  local_tensor view;
};

owned_local local_of(const py::buffer& data, const shape_t& shape, const std::string& type) {
  const py::buffer_info info = data.request();
  owned_local out;
  out.view.type = dtype_of(type);
  out.view.shape = shape;
  const auto expected = out.view.bytes();
  const auto have = static_cast<std::int64_t>(info.size * info.itemsize);
  if (have != expected)
    throw py::value_error(
        fmt::format("local data holds {} bytes, its shape and dtype need {}", have, expected));
  out.bytes.assign(static_cast<const char*>(info.ptr), static_cast<std::size_t>(have));
  out.view.data = out.bytes.data();
  return out;
}

/// The ranks LocalTensorMode simulates: one thread per rank, each running the collective check.
report check_simulated(const std::vector<py::buffer>& locals, const std::vector<shape_t>& shapes,
                       const std::string& type, const tensor_spec& spec, const device_mesh& mesh,
                       const std::string& name, bool replicas, bool shapes_check, bool nonfinite) {
  if (locals.size() != shapes.size() ||
      static_cast<std::int64_t>(locals.size()) != mesh.num_devices())
    throw py::value_error(
        fmt::format("{} local tensors for a mesh of {} ranks", locals.size(), mesh.num_devices()));
  std::vector<owned_local> owned;
  for (std::size_t r = 0; r < locals.size(); ++r)
    owned.push_back(local_of(locals[r], shapes[r], type));
  const auto options = options_of(name, replicas, shapes_check, nonfinite);
  std::vector<report> reports(owned.size());
  std::mutex failure_lock;
  std::exception_ptr failure;
  {
    py::gil_scoped_release release;
    comm::run_thread_ranks(static_cast<int>(owned.size()), [&](comm::communicator& world) {
      try {
        const comm::mesh_communicators comms(world, mesh);
        const auto backend = make_host_scan_backend();
        reports[static_cast<std::size_t>(world.rank())] = check_local_tensor(
            owned[static_cast<std::size_t>(world.rank())].view, spec, comms, *backend, options);
      } catch (...) {
        const std::lock_guard lock(failure_lock);
        if (!failure)
          failure = std::current_exception();
        comm::abort_group(world);
      }
    });
  }
  if (failure)
    std::rethrow_exception(failure);
  return merge_reports(reports);
}

/// Collectives as the methods of a Python object (tensordiag.torch._runtime.TorchCommunicator):
/// each takes and returns bytes. Called with the GIL held, from the thread that owns the rank.
class python_communicator final : public comm::communicator {
public:
  python_communicator(py::object impl, int rank, int size)
      : communicator(rank, size), impl_(std::move(impl)) {}

private:
  static py::bytes bytes_of(const void* p, std::int64_t count, dtype type) {
    return py::bytes(static_cast<const char*>(p),
                     static_cast<std::size_t>(count) * comm::element_size(type));
  }
  static void copy_back(const py::object& result, void* out, std::size_t bytes) {
    const std::string data = result.cast<std::string>();
    if (data.size() != bytes)
      throw py::value_error(
          fmt::format("a collective returned {} bytes, {} expected", data.size(), bytes));
    std::memcpy(out, data.data(), bytes);
  }
  std::size_t size_of(std::int64_t count, dtype type) const {
    return static_cast<std::size_t>(count) * comm::element_size(type);
  }

  void do_all_gather(const void* send, void* recv, std::int64_t count, dtype type) override {
    copy_back(impl_.attr("all_gather")(bytes_of(send, count, type), std::string(to_string(type))),
              recv, size_of(count, type) * static_cast<std::size_t>(size()));
  }
  void do_reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type,
                         reduce_op op) override {
    copy_back(impl_.attr("reduce_scatter")(bytes_of(send, count * size(), type),
                                           std::string(to_string(type)),
                                           std::string(to_string(op))),
              recv, size_of(count, type));
  }
  void do_all_reduce(void* data, std::int64_t count, dtype type, reduce_op op) override {
    copy_back(impl_.attr("all_reduce")(bytes_of(data, count, type), std::string(to_string(type)),
                                       std::string(to_string(op))),
              data, size_of(count, type));
  }
  void do_all_to_all(const void* send, void* recv, std::int64_t count, dtype type) override {
    copy_back(impl_.attr("all_to_all")(bytes_of(send, count * size(), type),
                                       std::string(to_string(type))),
              recv, size_of(count, type) * static_cast<std::size_t>(size()));
  }
  void do_broadcast(void* data, std::int64_t count, dtype type, int root) override {
    copy_back(
        impl_.attr("broadcast")(bytes_of(data, count, type), std::string(to_string(type)), root),
        data, size_of(count, type));
  }
  void do_barrier() override { impl_.attr("barrier")(); }
  std::unique_ptr<communicator> do_split(int color, int key) override {
    const py::tuple child = impl_.attr("split")(color, key);
    return std::make_unique<python_communicator>(child[0], child[1].cast<int>(),
                                                 child[2].cast<int>());
  }
  [[nodiscard]] std::string do_name() const override { return "torch.distributed"; }

  py::object impl_;
};

report check_with(py::object impl, int rank, int size, const py::buffer& data, const shape_t& shape,
                  const std::string& type, const tensor_spec& spec, const device_mesh& mesh,
                  const std::string& name, bool replicas, bool shapes_check, bool nonfinite) {
  const owned_local local = local_of(data, shape, type);
  python_communicator world(std::move(impl), rank, size);
  const comm::mesh_communicators comms(world, mesh);
  const auto backend = make_host_scan_backend();
  return check_local_tensor(local.view, spec, comms, *backend,
                            options_of(name, replicas, shapes_check, nonfinite));
}

} // namespace

void bind_runtime(py::module_& m) {
  m.def("check_simulated", &check_simulated, py::arg("locals"), py::arg("shapes"), py::arg("dtype"),
        py::arg("spec"), py::arg("mesh"), py::arg("name"), py::arg("replicas") = true,
        py::arg("shapes_check") = true, py::arg("nonfinite") = true,
        "Runtime checks over every simulated rank's local data (one thread per rank); the "
        "merged report.");
  m.def("check_with", &check_with, py::arg("communicator"), py::arg("rank"), py::arg("size"),
        py::arg("data"), py::arg("shape"), py::arg("dtype"), py::arg("spec"), py::arg("mesh"),
        py::arg("name"), py::arg("replicas") = true, py::arg("shapes_check") = true,
        py::arg("nonfinite") = true,
        "Runtime checks of this rank's local data, collective over a Python communicator; this "
        "rank's report.");
}

} // namespace tdiag::python
