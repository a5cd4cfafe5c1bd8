// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One interface for the collectives redistribution plans use: all_gather, reduce_scatter,
// all_reduce (sum, avg, max, min), all_to_all and broadcast, plus split() into sub-groups and the
// per-mesh-dim groups of a device mesh. Implementations: in-process thread ranks over shared
// memory (thread_communicator.hpp) and NCCL (nccl_communicator.hpp).
#pragma once

#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/placement.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tdiag::dtensor::comm {

/// A group of ranks that run collectives together. Every rank of the group must call the same
/// collectives in the same order (as with NCCL and MPI). Buffers are host memory unless
/// device_memory() is true. Counts are element counts of `type` (float32, float64, int64, int32,
/// uint8). Errors throw tdiag::error with code TDIAG-DT-301 (TDIAG-DT-302 for NCCL).
/// A communicator object is used by one thread (its rank) at a time.
class communicator {
public:
  virtual ~communicator() = default;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// True when buffers must be device memory (NCCL without host staging).
  [[nodiscard]] bool device_memory() const noexcept { return do_device_memory(); }
  /// `thread`, `nccl`, ...
  [[nodiscard]] std::string name() const { return do_name(); }

  /// recv (size() * count elements) receives rank r's `count` elements of send at r * count.
  void all_gather(const void* send, void* recv, std::int64_t count, dtype type);
  /// send holds size() * count elements; rank r receives the reduction of every rank's r-th block.
  void reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type, reduce_op op);
  /// In place: every rank ends with the elementwise reduction over the group (avg divides by
  /// size()).
  void all_reduce(void* data, std::int64_t count, dtype type, reduce_op op);
  /// send and recv hold size() * count elements; block s of rank r's send goes to block r of rank
  /// s's recv.
  void all_to_all(const void* send, void* recv, std::int64_t count, dtype type);
  /// `root`'s data is copied to every rank.
  void broadcast(void* data, std::int64_t count, dtype type, int root);
  /// Returns when every rank of the group has called it.
  void barrier();
  /// Collective over this group: ranks with the same `color` form a new group, ordered by `key`
  /// (ties by rank). Never returns nullptr.
  [[nodiscard]] std::unique_ptr<communicator> split(int color, int key);

protected:
  communicator(int rank, int size) : rank_(rank), size_(size) {}

private:
  virtual void do_all_gather(const void* send, void* recv, std::int64_t count, dtype type) = 0;
  virtual void do_reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type,
                                 reduce_op op) = 0;
  virtual void do_all_reduce(void* data, std::int64_t count, dtype type, reduce_op op) = 0;
  virtual void do_all_to_all(const void* send, void* recv, std::int64_t count, dtype type) = 0;
  virtual void do_broadcast(void* data, std::int64_t count, dtype type, int root) = 0;
  virtual void do_barrier() = 0;
  virtual std::unique_ptr<communicator> do_split(int color, int key) = 0;
  [[nodiscard]] virtual bool do_device_memory() const noexcept { return false; }
  [[nodiscard]] virtual std::string do_name() const = 0;

  int rank_;
  int size_;
};

/// The per-mesh-dim groups of one rank: group m holds the ranks whose mesh coordinates differ
/// only in dim m, ordered by that coordinate (so a group rank is the coordinate, as a shard index
/// is). Built collectively: every rank of `world` constructs it with the same mesh.
class mesh_communicators {
public:
  /// Throws tdiag::error when world.size() != mesh.num_devices().
  mesh_communicators(communicator& world, device_mesh mesh);

  [[nodiscard]] const device_mesh& mesh() const noexcept { return mesh_; }
  [[nodiscard]] communicator& world() const noexcept { return world_; }
  [[nodiscard]] communicator& dim(std::size_t mesh_dim) const { return *dims_.at(mesh_dim); }
  [[nodiscard]] const std::vector<std::int64_t>& coordinate() const noexcept { return coordinate_; }

private:
  communicator& world_;
  device_mesh mesh_;
  std::vector<std::int64_t> coordinate_;
  std::vector<std::unique_ptr<communicator>> dims_;
};

/// Bytes per element of the types communicators move; throws tdiag::error for others.
[[nodiscard]] std::size_t element_size(dtype type);

} // namespace tdiag::dtensor::comm
