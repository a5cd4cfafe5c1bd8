// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace tdiag::dtensor::comm {
namespace {

[[noreturn]] void aborted(int rank) {
  diagnostic d;
  d.code = std::string(validation_codes::comm_failed);
  d.title = "a peer rank failed";
  d.message = fmt::format(
      "rank {}: the collective was abandoned because another rank of the group failed", rank);
  throw tdiag::error(std::move(d));
}

struct world_state;

// The shared state of one group. Slots are written by their own rank before a barrier and read by
// the others after it; the barrier's mutex orders every hand-over.
struct group_state {
  explicit group_state(int n, std::shared_ptr<world_state> w)
      : size(n), world(std::move(w)), send(static_cast<std::size_t>(n)),
        recv(static_cast<std::size_t>(n)), color(static_cast<std::size_t>(n)),
        key(static_cast<std::size_t>(n)), child(static_cast<std::size_t>(n)) {}

  void barrier(int rank);

  int size;
  std::shared_ptr<world_state> world;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<int> color;
  std::vector<int> key;
  std::vector<std::shared_ptr<group_state>> child;
};

// Every group made from one world, so an abort reaches ranks waiting in any of them.
struct world_state {
  std::mutex mu;
  bool aborted = false;
  std::vector<std::weak_ptr<group_state>> groups;

  void abort() {
    std::vector<std::shared_ptr<group_state>> live;
    {
      std::lock_guard lock(mu);
      aborted = true;
      for (auto& g : groups) {
        if (auto p = g.lock())
          live.push_back(std::move(p));
      }
    }
    for (auto& g : live) {
      std::lock_guard lock(g->mu);
      g->cv.notify_all();
    }
  }
  bool is_aborted() {
    std::lock_guard lock(mu);
    return aborted;
  }
};

void group_state::barrier(int rank) {
  std::unique_lock lock(mu);
  if (world->is_aborted())
    aborted(rank);
  const auto gen = generation;
  if (++arrived == size) {
    arrived = 0;
    ++generation;
    cv.notify_all();
    return;
  }
  cv.wait(lock, [&] { return generation != gen || world->is_aborted(); });
  if (generation == gen)
    aborted(rank);
}

template <typename T> T combine(T a, T b, reduce_op op) {
  switch (op) {
  case reduce_op::max:
    return std::max(a, b);
  case reduce_op::min:
    return std::min(a, b);
  default:
    return a + b;
  }
}

// out[i] = reduce over ranks r of ptr[r][offset + i].
template <typename T>
void reduce_into(T* out, const std::vector<const void*>& ptrs, std::int64_t offset,
                 std::int64_t count, reduce_op op) {
  const auto n = static_cast<int>(ptrs.size());
  for (std::int64_t i = 0; i < count; ++i) {
    T acc = static_cast<const T*>(ptrs[0])[offset + i];
    for (int r = 1; r < n; ++r)
      acc = combine(acc, static_cast<const T*>(ptrs[static_cast<std::size_t>(r)])[offset + i], op);
    if (op == reduce_op::avg)
      acc = static_cast<T>(acc / static_cast<T>(n));
    out[i] = acc;
  }
}

void reduce_typed(void* out, const std::vector<const void*>& ptrs, std::int64_t offset,
                  std::int64_t count, dtype type, reduce_op op) {
  switch (type) {
  case dtype::float32:
    reduce_into(static_cast<float*>(out), ptrs, offset, count, op);
    break;
  case dtype::float64:
    reduce_into(static_cast<double*>(out), ptrs, offset, count, op);
    break;
  case dtype::int64:
    reduce_into(static_cast<std::int64_t*>(out), ptrs, offset, count, op);
    break;
  case dtype::int32:
    reduce_into(static_cast<std::int32_t*>(out), ptrs, offset, count, op);
    break;
  default:
    reduce_into(static_cast<std::uint8_t*>(out), ptrs, offset, count, op);
    break;
  }
}

class thread_communicator final : public communicator {
public:
  thread_communicator(int rank, std::shared_ptr<group_state> g)
      : communicator(rank, g->size), g_(std::move(g)) {}
  [[nodiscard]] group_state& group() const noexcept { return *g_; }

private:
  void post(const void* send, void* recv = nullptr) {
    g_->send[static_cast<std::size_t>(rank())] = send;
    g_->recv[static_cast<std::size_t>(rank())] = recv;
    g_->barrier(rank());
  }

  void do_all_gather(const void* send, void* recv, std::int64_t count, dtype type) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    post(send);
    for (int r = 0; r < size(); ++r) {
      if (bytes)
        std::memcpy(static_cast<char*>(recv) + static_cast<std::size_t>(r) * bytes,
                    g_->send[static_cast<std::size_t>(r)], bytes);
    }
    g_->barrier(rank());
  }

  void do_reduce_scatter(const void* send, void* recv, std::int64_t count, dtype type,
                         reduce_op op) override {
    post(send);
    reduce_typed(recv, g_->send, count * rank(), count, type, op);
    g_->barrier(rank());
  }

  void do_all_reduce(void* data, std::int64_t count, dtype type, reduce_op op) override {
    std::vector<char> result(static_cast<std::size_t>(count) * element_size(type));
    post(data);
    reduce_typed(result.data(), g_->send, 0, count, type, op);
    g_->barrier(rank()); // every rank has read every input before any is overwritten
    if (!result.empty())
      std::memcpy(data, result.data(), result.size());
    g_->barrier(rank());
  }

  void do_all_to_all(const void* send, void* recv, std::int64_t count, dtype type) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    post(send);
    for (int s = 0; s < size(); ++s) {
      if (bytes) {
        std::memcpy(static_cast<char*>(recv) + static_cast<std::size_t>(s) * bytes,
                    static_cast<const char*>(g_->send[static_cast<std::size_t>(s)]) +
                        static_cast<std::size_t>(rank()) * bytes,
                    bytes);
      }
    }
    g_->barrier(rank());
  }

  void do_broadcast(void* data, std::int64_t count, dtype type, int root) override {
    const auto bytes = static_cast<std::size_t>(count) * element_size(type);
    post(data);
    if (rank() != root && bytes)
      std::memcpy(data, g_->send[static_cast<std::size_t>(root)], bytes);
    g_->barrier(rank());
  }

  void do_barrier() override { g_->barrier(rank()); }

  std::unique_ptr<communicator> do_split(int color, int key) override {
    const auto me = static_cast<std::size_t>(rank());
    g_->color[me] = color;
    g_->key[me] = key;
    g_->barrier(rank());
    std::vector<std::pair<int, int>> members; // (key, parent rank)
    for (int r = 0; r < size(); ++r) {
      if (g_->color[static_cast<std::size_t>(r)] == color)
        members.emplace_back(g_->key[static_cast<std::size_t>(r)], r);
    }
    std::sort(members.begin(), members.end());
    const int leader = members.front().second;
    if (leader == rank()) {
      auto child = std::make_shared<group_state>(static_cast<int>(members.size()), g_->world);
      {
        std::lock_guard lock(g_->world->mu);
        g_->world->groups.push_back(child);
      }
      g_->child[me] = std::move(child);
    }
    g_->barrier(rank());
    auto child = g_->child[static_cast<std::size_t>(leader)];
    int new_rank = 0;
    while (members[static_cast<std::size_t>(new_rank)].second != rank())
      ++new_rank;
    g_->barrier(rank()); // every member holds the child before the leader's slot is cleared
    if (leader == rank())
      g_->child[me].reset();
    return std::make_unique<thread_communicator>(new_rank, std::move(child));
  }

  [[nodiscard]] std::string do_name() const override { return "thread"; }

  std::shared_ptr<group_state> g_;
};

} // namespace

std::vector<std::unique_ptr<communicator>> make_thread_communicators(int n) {
  if (n < 1) {
    diagnostic d;
    d.code = std::string(validation_codes::comm_failed);
    d.title = "invalid group size";
    d.message = fmt::format("a thread group needs at least one rank, not {}", n);
    throw tdiag::error(std::move(d));
  }
  auto world = std::make_shared<world_state>();
  auto g = std::make_shared<group_state>(n, world);
  world->groups.push_back(g);
  std::vector<std::unique_ptr<communicator>> out;
  for (int r = 0; r < n; ++r)
    out.push_back(std::make_unique<thread_communicator>(r, g));
  return out;
}

void abort_group(communicator& c) {
  if (auto* t = dynamic_cast<thread_communicator*>(&c))
    t->group().world->abort();
}

void run_thread_ranks(int n, const std::function<void(communicator&)>& fn) {
  auto comms = make_thread_communicators(n);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(*comms[static_cast<std::size_t>(r)]);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        abort_group(*comms[static_cast<std::size_t>(r)]);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  // Prefer the error that started it over the peers' "abandoned" errors.
  std::exception_ptr first;
  for (auto& e : errors) {
    if (!e)
      continue;
    try {
      std::rethrow_exception(e);
    } catch (const tdiag::error& err) {
      if (err.report().diagnostics.front().title == "a peer rank failed") {
        if (!first)
          first = e;
        continue;
      }
      std::rethrow_exception(e);
    } catch (...) {
      std::rethrow_exception(e);
    }
  }
  if (first)
    std::rethrow_exception(first);
}

} // namespace tdiag::dtensor::comm
