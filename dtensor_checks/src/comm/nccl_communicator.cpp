// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/nccl_communicator.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include <cstring>

namespace tdiag::dtensor::comm {
namespace {

[[noreturn]] void fail(std::string message) {
  diagnostic d;
  d.code = std::string(validation_codes::nccl_failed);
  d.title = "NCCL communicator failed";
  d.message = std::move(message);
  throw tdiag::error(std::move(d));
}

void check(ncclResult_t r, const char* what, int rank) {
  if (r != ncclSuccess)
    fail(fmt::format("rank {}: {} failed: {}", rank, what, ncclGetErrorString(r)));
}

void check(cudaError_t e, const char* what, int rank) {
  if (e != cudaSuccess)
    fail(fmt::format("rank {}: {} failed: {}", rank, what, cudaGetErrorString(e)));
}

ncclDataType_t nccl_type(dtype t) {
  switch (t) {
  case dtype::float32:
    return ncclFloat32;
  case dtype::float64:
    return ncclFloat64;
  case dtype::int64:
    return ncclInt64;
  case dtype::int32:
    return ncclInt32;
  default:
    return ncclUint8;
  }
}

ncclRedOp_t nccl_op(reduce_op op) {
  switch (op) {
  case reduce_op::sum:
    return ncclSum;
  case reduce_op::avg:
    return ncclAvg;
  case reduce_op::max:
    return ncclMax;
  case reduce_op::min:
    return ncclMin;
  }
  return ncclSum;
}

// A device buffer that lives for one call.
struct device_buffer {
  void* ptr = nullptr;
  device_buffer(std::size_t bytes, int rank) {
    if (bytes)
      check(cudaMalloc(&ptr, bytes), "cudaMalloc of a staging buffer", rank);
  }
  ~device_buffer() {
    if (ptr)
      (void)cudaFree(ptr);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

class nccl_communicator final : public communicator {
public:
  nccl_communicator(int rank, int size, ncclComm_t comm, nccl_options options, bool owns_stream)
      : communicator(rank, size), comm_(comm), options_(options), owns_stream_(owns_stream) {}
  ~nccl_communicator() override {
    (void)ncclCommDestroy(comm_);
    if (owns_stream_)
      (void)cudaStreamDestroy(stream());
  }
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

private:
  [[nodiscard]] cudaStream_t stream() const noexcept {
    return static_cast<cudaStream_t>(options_.stream);
  }

  void sync() { check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize", rank()); }

  // Runs `fn(send_dev, recv_dev)`; with host buffers, stages them through device memory.
  template <typename Fn>
  void staged(const void* send, std::size_t send_bytes, void* recv, std::size_t recv_bytes, Fn fn) {
    if (!options_.host_buffers) {
      fn(send, recv);
      sync();
      return;
    }
    device_buffer s(send_bytes, rank());
    device_buffer r(recv_bytes, rank());
    if (send_bytes)
      check(cudaMemcpyAsync(s.ptr, send, send_bytes, cudaMemcpyHostToDevice, stream()),
            "staging to the device", rank());
    fn(s.ptr, r.ptr);
    if (recv_bytes)
      check(cudaMemcpyAsync(recv, r.ptr, recv_bytes, cudaMemcpyDeviceToHost, stream()),
            "staging to the host", rank());
    sync();
  }

  void do_all_gather(const void* send, void* recv, std::int64_t count, dtype type) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    staged(send, bytes, recv, bytes * static_cast<std::size_t>(size()),
           [&](const void* s, void* r) {
             check(ncclAllGather(s, r, static_cast<std::size_t>(count), nccl_type(type), comm_,
                                 stream()),
                   "ncclAllGather", rank());
           });
  }

  void do_reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type,
                         reduce_op op) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    staged(send, bytes * static_cast<std::size_t>(size()), recv, bytes,
           [&](const void* s, void* r) {
             check(ncclReduceScatter(s, r, static_cast<std::size_t>(count), nccl_type(type),
                                     nccl_op(op), comm_, stream()),
                   "ncclReduceScatter", rank());
           });
  }

  void do_all_reduce(void* data, std::int64_t count, dtype type, reduce_op op) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    staged(data, bytes, data, bytes, [&](const void* s, void* r) {
      check(ncclAllReduce(s, r, static_cast<std::size_t>(count), nccl_type(type), nccl_op(op),
                          comm_, stream()),
            "ncclAllReduce", rank());
    });
  }

  void do_all_to_all(const void* send, void* recv, std::int64_t count, dtype type) override {
    const auto block = static_cast<std::size_t>(count) * element_size(type);
    const auto total = block * static_cast<std::size_t>(size());
    staged(send, total, recv, total, [&](const void* s, void* r) {
      check(ncclGroupStart(), "ncclGroupStart", rank());
      for (int peer = 0; peer < size(); ++peer) {
        const auto at = block * static_cast<std::size_t>(peer);
        check(ncclSend(static_cast<const char*>(s) + at, static_cast<std::size_t>(count),
                       nccl_type(type), peer, comm_, stream()),
              "ncclSend", rank());
        check(ncclRecv(static_cast<char*>(r) + at, static_cast<std::size_t>(count), nccl_type(type),
                       peer, comm_, stream()),
              "ncclRecv", rank());
      }
      check(ncclGroupEnd(), "ncclGroupEnd", rank());
    });
  }

  void do_broadcast(void* data, std::int64_t count, dtype type, int root) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    staged(data, bytes, data, bytes, [&](const void* s, void* r) {
      check(ncclBroadcast(s, r, static_cast<std::size_t>(count), nccl_type(type), root, comm_,
                          stream()),
            "ncclBroadcast", rank());
    });
  }

  void do_barrier() override {
    device_buffer one(sizeof(int), rank());
    check(cudaMemsetAsync(one.ptr, 0, sizeof(int), stream()), "cudaMemsetAsync", rank());
    check(ncclAllReduce(one.ptr, one.ptr, 1, ncclInt32, ncclSum, comm_, stream()),
          "ncclAllReduce (barrier)", rank());
    sync();
  }

  std::unique_ptr<communicator> do_split(int color, int key) override {
    ncclComm_t child = nullptr;
    check(ncclCommSplit(comm_, color, key, &child, nullptr), "ncclCommSplit", rank());
    int child_rank = 0;
    int child_size = 0;
    check(ncclCommUserRank(child, &child_rank), "ncclCommUserRank", rank());
    check(ncclCommCount(child, &child_size), "ncclCommCount", rank());
    return std::make_unique<nccl_communicator>(child_rank, child_size, child, options_, false);
  }

  [[nodiscard]] bool do_device_memory() const noexcept override { return !options_.host_buffers; }
  [[nodiscard]] std::string do_name() const override { return "nccl"; }

  ncclComm_t comm_;
  nccl_options options_;
  bool owns_stream_;
};

} // namespace

std::unique_ptr<communicator> make_nccl_communicator(int rank, int size, id_store& store,
                                                     const nccl_options& options) {
  if (rank < 0 || rank >= size)
    fail(fmt::format("rank {} outside a job of {} ranks", rank, size));
  check(cudaSetDevice(options.device), "cudaSetDevice", rank);
  ncclUniqueId id;
  if (rank == 0) {
    check(ncclGetUniqueId(&id), "ncclGetUniqueId", rank);
    if (size > 1)
      store.publish(std::string_view(id.internal, sizeof(id.internal)), size - 1);
  } else {
    const auto blob = store.fetch(sizeof(id.internal), options.id_timeout);
    std::memcpy(id.internal, blob.data(), sizeof(id.internal));
  }
  auto opts = options;
  bool owns = false;
  if (opts.stream == nullptr) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", rank);
    opts.stream = s;
    owns = true;
  }
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank", rank);
  return std::make_unique<nccl_communicator>(rank, size, comm, opts, owns);
}

int nccl_version() noexcept {
  int v = 0;
  (void)ncclGetVersion(&v);
  return v;
}

} // namespace tdiag::dtensor::comm
