// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/splitmix.hpp>
#include <tensordiag/trace/synthetic_job.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

namespace tdiag::trace {

namespace {

constexpr std::int64_t us = 1000;

// Compute kernels of a transformer layer with their usual durations (us).
constexpr std::pair<const char*, std::int64_t> compute_kernels[] = {
    {"ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", 140},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", 30},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16>", 25},
    {"flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t>>",
     120},
    {"ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x5_nn", 60},
    {"void at::native::vectorized_elementwise_kernel<4, "
     "at::native::CUDAFunctor_add<c10::BFloat16>>",
     15},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>", 40},
    {"triton_poi_fused__to_copy_add_mul_0", 12},
};
constexpr const char* compute_ops[] = {
    "aten::mm",    "aten::gelu", "aten::layer_norm", "aten::_flash_attention_forward",
    "aten::addmm", "aten::add",  "aten::_softmax",   "aten::_to_copy"};

struct group_names {
  string_id name = no_string, ranks = no_string;
};

// One rank's trace as it is written, on the rank's own (shifted) clock.
class rank_writer {
public:
  rank_writer(int rank, std::int64_t clock_error, const synthetic_job_options& o)
      : rank_(rank), error_(clock_error) {
    t_.metadata.format = "kineto-json";
    t_.metadata.source_path = fmt::format("synthetic/rank-{}.json", rank);
    t_.metadata.time_origin_ns = 1'700'000'000'000'000'000;
    t_.metadata.properties.emplace_back("distributed.rank", fmt::format("{}", rank));
    host_ = t_.lanes.host(1000 + rank, 1);
    compute_ = t_.lanes.gpu(rank % 8, 7);
    comm_ = t_.lanes.gpu(rank % 8, 20);
    launch_ = t_.strings.intern("cudaLaunchKernel");
    for (const auto& [name, dur] : compute_kernels)
      kernel_names_.push_back(t_.strings.intern(name));
    for (const auto* op : compute_ops)
      op_names_.push_back(t_.strings.intern(op));
    nccl_ =
        t_.strings.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, "
                          "ncclWork*)");
    c10d_ = t_.strings.intern("c10d::allreduce_");
    nccl_op_ = t_.strings.intern("nccl:all_reduce");
    allreduce_ = t_.strings.intern("allreduce");
    (void)o;
  }

  trace& t() { return t_; }

  // A host call [start, start + dur) on the job clock, written on the rank's clock.
  void host(string_id name, api_kind kind, std::int64_t start, std::int64_t dur,
            std::uint32_t correlation = 0) {
    api_event a;
    a.start = start + error_;
    a.end = start + dur + error_;
    a.lane = host_;
    a.name = name;
    a.process = 1000 + rank_;
    a.thread = 1;
    a.kind = kind;
    a.correlation = correlation;
    t_.api_calls.push_back(a);
  }

  void range(string_id name, range_kind kind, std::int64_t start, std::int64_t end) {
    range_event r;
    r.start = start + error_;
    r.end = end + error_;
    r.lane = host_;
    r.name = name;
    r.kind = kind;
    t_.ranges.push_back(r);
  }

  void kernel(string_id name, bool comm, std::int64_t start, std::int64_t end,
              std::uint32_t correlation) {
    kernel_event k;
    k.start = start + error_;
    k.end = end + error_;
    k.lane = comm ? comm_ : compute_;
    k.name = name;
    k.device = rank_ % 8;
    k.stream = comm ? 20 : 7;
    k.correlation = correlation;
    t_.kernels.push_back(k);
  }

  std::uint32_t next_correlation() { return ++correlation_; }

  group_names group(const std::string& name, const std::string& ranks) {
    return {t_.strings.intern(name), t_.strings.intern(ranks)};
  }

  void collective_info_of(std::uint32_t correlation, group_names g, std::int64_t size,
                          std::int64_t seq) {
    t_.collectives.push_back({correlation, g.name, g.ranks, allreduce_, size, seq});
  }

  std::vector<string_id> kernel_names_, op_names_;
  string_id launch_ = no_string, nccl_ = no_string, c10d_ = no_string, nccl_op_ = no_string;
  string_id allreduce_ = no_string;

private:
  trace t_;
  int rank_;
  std::int64_t error_;
  lane_id host_ = 0, compute_ = 0, comm_ = 0;
  std::uint32_t correlation_ = 0;
};

struct rank_state {
  std::int64_t host = 0; ///< the host thread's time (job clock)
  std::int64_t gpu = 0;  ///< when the GPU is free (job clock)
};

class job_simulator {
public:
  explicit job_simulator(const synthetic_job_options& o) : o_(o), rng_{o.seed} {
    writers_.reserve(o.ranks);
    for (std::uint32_t r = 0; r < o.ranks; ++r) {
      const auto span = static_cast<std::uint64_t>(2 * o.max_clock_shift_ns + 1);
      job_.clock_error_ns.push_back(static_cast<std::int64_t>(rng_.below(span)) -
                                    o.max_clock_shift_ns);
      writers_.emplace_back(static_cast<int>(r), job_.clock_error_ns.back(), o);
      // Exact capacities: 64 ranks of 1M events must not carry half as much again in slack.
      const auto per_step = o.layers * (o.kernels_per_layer + 1) + 2;
      writers_.back().t().kernels.reserve(o.steps * per_step + o.delays.size());
      writers_.back().t().api_calls.reserve(
          o.steps * (o.layers * (2 * o.kernels_per_layer + 3) + 6) + 2 * o.delays.size());
      writers_.back().t().collectives.reserve(o.steps * (o.layers + 2));
      state_.push_back({1000 * us, 1000 * us});
    }
    const auto tp = std::max<std::uint32_t>(1, o.tensor_parallel);
    for (std::uint32_t r = 0; r < o.ranks; ++r) {
      auto& w = writers_[r];
      tp_.push_back(w.group(fmt::format("{}", 1 + r / tp), ranks_text(r / tp * tp, 1, tp)));
      dp_.push_back(
          w.group(fmt::format("{}", 1000 + r % tp), ranks_text(r % tp, tp, o.ranks / tp)));
      world_.push_back(w.group("0", ranks_text(0, 1, o.ranks)));
      step_names_.emplace_back();
      for (std::uint32_t s = 1; s <= o.steps; ++s)
        step_names_.back().push_back(w.t().strings.intern(fmt::format("ProfilerStep#{}", s)));
      loader_.push_back(
          w.t().strings.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
      planted_.push_back(w.t().strings.intern("planted_slow_kernel"));
    }
  }

  synthetic_job run() {
    const auto tp = std::max<std::uint32_t>(1, o_.tensor_parallel);
    for (std::uint32_t s = 1; s <= o_.steps; ++s) {
      std::vector<std::int64_t> step_start;
      for (auto& st : state_) { // the step starts after last step's loss reached the host
        st.host = std::max(st.host, st.gpu) + 20 * us;
        step_start.push_back(st.host);
      }
      for (std::size_t l = 0; l < o_.layers; ++l) {
        for (std::uint32_t r = 0; r < o_.ranks; ++r)
          layer(r, static_cast<int>(s), l);
        for (std::uint32_t g = 0; g < o_.ranks / tp; ++g)
          all_reduce(members(g * tp, 1, tp), tp_, 80 * us);
      }
      for (std::uint32_t j = 0; j < tp && o_.ranks / tp > 1; ++j)
        all_reduce(members(j, tp, o_.ranks / tp), dp_, 900 * us);
      all_reduce(members(0, 1, o_.ranks), world_, 20 * us);
      for (std::uint32_t r = 0; r < o_.ranks; ++r)
        writers_[r].range(step_names_[r][s - 1], range_kind::step, step_start[r],
                          std::max(state_[r].host, state_[r].gpu));
    }
    for (auto& w : writers_) {
      w.t().finalize();
      job_.traces.push_back(std::move(w.t()));
    }
    return std::move(job_);
  }

private:
  static std::string ranks_text(std::uint32_t first, std::uint32_t stride, std::uint32_t count) {
    std::string out = "[";
    for (std::uint32_t i = 0; i < count; ++i)
      out += fmt::format("{}{}", i ? ", " : "", first + i * stride);
    return out + "]";
  }
  static std::vector<std::uint32_t> members(std::uint32_t first, std::uint32_t stride,
                                            std::uint32_t count) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < count; ++i)
      out.push_back(first + i * stride);
    return out;
  }

  // A compute kernel launched now from an aten operator.
  void compute(std::uint32_t r, std::size_t which, std::int64_t dur) {
    auto& w = writers_[r];
    auto& st = state_[r];
    const auto corr = w.next_correlation();
    w.host(w.op_names_[which], api_kind::cpu_op, st.host, 14 * us);
    w.host(w.launch_, api_kind::runtime, st.host + 4 * us, 6 * us, corr);
    const auto start = std::max(st.gpu, st.host + 13 * us);
    w.kernel(w.kernel_names_[which], false, start, start + dur, corr);
    st.gpu = start + dur;
    st.host += 16 * us;
  }

  void layer(std::uint32_t r, int step, std::size_t l) {
    const auto n = std::size(compute_kernels);
    for (std::size_t k = 0; k < o_.kernels_per_layer; ++k) {
      const auto which = (l + k) % n;
      const auto base = compute_kernels[which].second * us;
      compute(r, which,
              base + static_cast<std::int64_t>(rng_.below(
                         static_cast<std::uint64_t>(base / 20 + 1)))); // a few % of noise
    }
    for (const auto& d : o_.delays) {
      if (d.rank != static_cast<int>(r) || d.step != step || d.layer != l)
        continue;
      auto& st = state_[r];
      if (d.what == planted_delay::kind::kernel) {
        auto& w = writers_[r];
        const auto corr = w.next_correlation();
        w.host(w.op_names_[0], api_kind::cpu_op, st.host, 14 * us);
        w.host(w.launch_, api_kind::runtime, st.host + 4 * us, 6 * us, corr);
        const auto start = std::max(st.gpu, st.host + 13 * us);
        w.kernel(planted_[r], false, start, start + d.ns, corr);
        st.gpu = start + d.ns;
        st.host += 16 * us;
      } else { // the host waits for the GPU (.item()), then the data loader holds it
        st.host = std::max(st.host, st.gpu);
        writers_[r].host(loader_[r], api_kind::cpu_op, st.host, d.ns);
        st.host += d.ns;
      }
    }
  }

  // Every member launches, the last arrival starts the transfer, all end together.
  void all_reduce(const std::vector<std::uint32_t>& ranks, const std::vector<group_names>& group,
                  std::int64_t dur) {
    std::int64_t last = 0;
    std::vector<std::int64_t> arrival;
    std::vector<std::uint32_t> corr;
    for (const auto r : ranks) {
      auto& w = writers_[r];
      auto& st = state_[r];
      corr.push_back(w.next_correlation());
      w.host(w.c10d_, api_kind::cpu_op, st.host, 20 * us);
      w.host(w.nccl_op_, api_kind::cpu_op, st.host + 2 * us, 16 * us);
      w.host(w.launch_, api_kind::runtime, st.host + 6 * us, 8 * us, corr.back());
      arrival.push_back(std::max(st.gpu, st.host + 16 * us));
      last = std::max(last, arrival.back());
      st.host += 22 * us;
    }
    const auto end = last + dur;
    const auto seq = seq_[{ranks[0], group[ranks[0]].name}]++;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const auto r = ranks[i];
      const auto jitter = static_cast<std::int64_t>(
                              rng_.below(static_cast<std::uint64_t>(2 * o_.end_jitter_ns + 1))) -
                          o_.end_jitter_ns;
      auto& w = writers_[r];
      w.kernel(w.nccl_, true, arrival[i], end + jitter, corr[i]);
      w.collective_info_of(corr[i], group[r], static_cast<std::int64_t>(ranks.size()),
                           o_.with_seq ? seq : -1);
      state_[r].gpu = end + jitter;
    }
  }

  const synthetic_job_options& o_;
  splitmix64 rng_;
  synthetic_job job_;
  std::vector<rank_writer> writers_;
  std::vector<rank_state> state_;
  std::vector<group_names> tp_, dp_, world_;
  std::vector<std::vector<string_id>> step_names_;
  std::vector<string_id> loader_, planted_;
  std::map<std::pair<std::uint32_t, string_id>, std::int64_t> seq_; // by first member
};

} // namespace

synthetic_job make_synthetic_job(const synthetic_job_options& options) {
  return job_simulator(options).run();
}

std::size_t layers_for_events(const synthetic_job_options& options, std::size_t events_per_rank) {
  const auto per_layer = 3 * options.kernels_per_layer + 4;
  const auto per_step = events_per_rank / std::max<std::uint32_t>(1, options.steps);
  return std::max<std::size_t>(1, per_step / per_layer);
}

} // namespace tdiag::trace
