// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/communicator.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor::comm {
namespace {

[[noreturn]] void misuse(std::string message) {
  diagnostic d;
  d.code = std::string(validation_codes::comm_failed);
  d.title = "invalid collective call";
  d.message = std::move(message);
  throw tdiag::error(std::move(d));
}

void check(const communicator& c, const char* what, std::int64_t count, dtype type) {
  (void)element_size(type);
  if (count < 0)
    misuse(fmt::format("{} on rank {} of {}: negative count {}", what, c.rank(), c.size(), count));
}

} // namespace

std::size_t element_size(dtype type) {
  switch (type) {
  case dtype::float32:
  case dtype::int32:
    return 4;
  case dtype::float64:
  case dtype::int64:
    return 8;
  case dtype::uint8:
    return 1;
  default:
    misuse(fmt::format("communicators move float32, float64, int64, int32 and uint8, not {}",
                       to_string(type)));
  }
}

void communicator::all_gather(const void* send, void* recv, std::int64_t count, dtype type) {
  check(*this, "all_gather", count, type);
  do_all_gather(send, recv, count, type);
}

void communicator::reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type,
                                  reduce_op op) {
  check(*this, "reduce_scatter", count, type);
  do_reduce_scatter(send, recv, count, type, op);
}

void communicator::all_reduce(void* data, std::int64_t count, dtype type, reduce_op op) {
  check(*this, "all_reduce", count, type);
  do_all_reduce(data, count, type, op);
}

void communicator::all_to_all(const void* send, void* recv, std::int64_t count, dtype type) {
  check(*this, "all_to_all", count, type);
  do_all_to_all(send, recv, count, type);
}

void communicator::broadcast(void* data, std::int64_t count, dtype type, int root) {
  check(*this, "broadcast", count, type);
  if (root < 0 || root >= size_)
    misuse(fmt::format("broadcast root {} outside a group of {}", root, size_));
  do_broadcast(data, count, type, root);
}

void communicator::barrier() {
  do_barrier();
}

std::unique_ptr<communicator> communicator::split(int color, int key) {
  return do_split(color, key);
}

mesh_communicators::mesh_communicators(communicator& world, device_mesh mesh)
    : world_(world), mesh_(std::move(mesh)) {
  if (world.size() != mesh_.num_devices()) {
    misuse(fmt::format("mesh {} needs {} ranks but the communicator has {}", mesh_.to_string(),
                       mesh_.num_devices(), world.size()));
  }
  coordinate_ = mesh_.coordinate(world.rank());
  for (std::size_t m = 0; m < mesh_.ndim(); ++m) {
    // Colour: the row-major index of the coordinate with dim m left out.
    int color = 0;
    for (std::size_t k = 0; k < mesh_.ndim(); ++k) {
      if (k != m)
        color = color * static_cast<int>(mesh_.size(k)) + static_cast<int>(coordinate_[k]);
    }
    dims_.push_back(world.split(color, static_cast<int>(coordinate_[m])));
  }
}

} // namespace tdiag::dtensor::comm
