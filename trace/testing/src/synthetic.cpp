// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/splitmix.hpp>
#include <tensordiag/trace/synthetic.hpp>

#include <fmt/format.h>

#include <array>
#include <vector>

namespace tdiag::trace {
namespace {

std::string kernel_name(std::uint32_t i) {
  static constexpr std::array<const char*, 6> ops = {"gemm",    "elementwise", "reduce",
                                                     "softmax", "layer_norm",  "attention"};
  return fmt::format("void at::native::{}_kernel<{}, {}, at::native::detail::Policy<{}, {}>>"
                     "(at::native::TensorIterator&, at::native::{}_functor<float> const&, "
                     "unsigned int, int)",
                     ops[i % ops.size()], i, i * 7 % 13, 128 << (i % 3), 4 + i % 5,
                     ops[(i + 1) % ops.size()]);
}

// The generator's state, one method per kind of event, in the order the random draws happen
// (the trace is a pure function of the options, seed included).
class synthetic_builder {
public:
  explicit synthetic_builder(const synthetic_options& o) : o_(o), r_{o.seed} {
    t_.metadata.format = "synthetic";
    t_.metadata.time_origin_ns = 1'764'000'000'000'000'000;
    for (std::uint32_t i = 0; i < std::max(o.kernel_names, 1u); ++i)
      names_.push_back(t_.strings.intern(kernel_name(i)));
    launch_ = t_.strings.intern("cudaLaunchKernel");
    memcpy_call_ = t_.strings.intern("cudaMemcpyAsync");
    copy_name_ = t_.strings.intern("Memcpy HtoD (Pageable -> Device)");
    step_name_ = t_.strings.intern("ProfilerStep#");
    allocated_ = t_.strings.intern("allocated bytes");
    make_lanes();
    make_sites();
    stream_free_.assign(gpu_lanes_.size(), 0);
    host_time_.assign(host_lanes_.size(), 0);
  }

  trace build() {
    for (std::size_t i = 0; i < o_.kernels; ++i) {
      const std::size_t h = r_.below(host_lanes_.size());
      const api_event call = add_launch_call(h);
      const std::size_t g = r_.below(gpu_lanes_.size());
      const std::int32_t device = add_kernel(i, call, g);
      if (r_.below(100) < o_.copies_per_100_kernels)
        add_copy(call, h, g, device);
      if (r_.below(100) < o_.allocations_per_100_kernels)
        add_memory_event(call.start, device, t_.lanes.at(gpu_lanes_[g]).id);
      if (i % 1000 == 0)
        add_step();
    }
    finish();
    return std::move(t_);
  }

private:
  void make_lanes() {
    const std::uint32_t devices = std::max(o_.devices, 1u);
    const std::uint32_t streams = std::max(o_.streams_per_device, 1u);
    for (std::uint32_t d = 0; d < devices; ++d)
      for (std::uint32_t s = 0; s < streams; ++s) {
        const lane_id l = t_.lanes.gpu(d, 7 + s);
        t_.lanes.set_name(l, t_.strings.intern(fmt::format("stream {}", 7 + s)));
        gpu_lanes_.push_back(l);
      }
    for (std::uint32_t h = 0; h < std::max(o_.host_threads, 1u); ++h) {
      const lane_id l = t_.lanes.host(4242, 1000 + h);
      t_.lanes.set_name(l, t_.strings.intern(h == 0 ? "python main" : fmt::format("worker {}", h)));
      host_lanes_.push_back(l);
    }
    for (std::uint32_t d = 0; d < devices; ++d)
      memory_lanes_.push_back(t_.lanes.memory(d));
  }

  // A few allocation sites: stacks of 3 frames.
  void make_sites() {
    for (std::uint32_t i = 0; i < 8; ++i) {
      std::array<frame_id, 3> frames{
          t_.stacks.intern_frame({t_.strings.intern(fmt::format("layer_{}", i)),
                                  t_.strings.intern("model.py"), 10 + i * 7}),
          t_.stacks.intern_frame(
              {t_.strings.intern("forward"), t_.strings.intern("model.py"), 120}),
          t_.stacks.intern_frame(
              {t_.strings.intern("train_step"), t_.strings.intern("train.py"), 42})};
      sites_.push_back(t_.stacks.intern_stack(frames));
    }
  }

  api_event add_launch_call(std::size_t h) {
    host_time_[h] += 2'000 + static_cast<std::int64_t>(r_.below(3'000));
    api_event call;
    call.start = host_time_[h];
    call.end = call.start + 1'500 + static_cast<std::int64_t>(r_.below(1'000));
    call.lane = host_lanes_[h];
    call.name = launch_;
    call.process = 4242;
    call.thread = 1000 + h;
    call.correlation = correlation_;
    call.kind = api_kind::runtime;
    call.cbid = 211;
    t_.api_calls.push_back(call);
    return call;
  }

  // Returns the kernel's device.
  std::int32_t add_kernel(std::size_t i, const api_event& call, std::size_t g) {
    const lane& gl = t_.lanes.at(gpu_lanes_[g]);
    kernel_event k;
    k.start =
        std::max(stream_free_[g], call.end + 3'000) + static_cast<std::int64_t>(r_.below(500));
    k.end = k.start + 2'000 +
            static_cast<std::int64_t>(r_.below(8) == 0 ? r_.below(400'000) : r_.below(40'000));
    stream_free_[g] = k.end;
    k.lane = gpu_lanes_[g];
    const std::size_t name_index = (i * 7 + r_.below(3)) % names_.size();
    k.name = names_[name_index];
    k.device = static_cast<std::int32_t>(gl.group);
    k.context = 1;
    k.stream = gl.id;
    k.grid[0] = 108u << (name_index % 4);
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.shared_static = (name_index % 3) * 4096;
    k.registers = 32 + (name_index % 4) * 8;
    k.correlation = correlation_++;
    t_.kernels.push_back(k);
    return k.device;
  }

  void add_copy(const api_event& call, std::size_t h, std::size_t g, std::int32_t device) {
    api_event c = call;
    c.start = call.end + 100;
    c.end = c.start + 4'000;
    c.name = memcpy_call_;
    c.correlation = correlation_;
    host_time_[h] = c.end;
    t_.api_calls.push_back(c);
    copy_event cp;
    cp.start = std::max(stream_free_[g], c.end + 2'000);
    cp.end = cp.start + 10'000 + static_cast<std::int64_t>(r_.below(50'000));
    stream_free_[g] = cp.end;
    cp.lane = gpu_lanes_[g];
    cp.name = copy_name_;
    cp.bytes = std::uint64_t{1} << (12 + r_.below(14));
    cp.device = device;
    cp.context = 1;
    cp.stream = t_.lanes.at(gpu_lanes_[g]).id;
    cp.kind = copy_kind::htod;
    cp.src_kind = memory_kind::pageable;
    cp.dst_kind = memory_kind::device;
    cp.correlation = correlation_++;
    t_.copies.push_back(cp);
  }

  // Allocates or frees one 1 MiB block (half the time a free, once something is alive).
  void add_memory_event(std::int64_t time, std::int32_t device, std::uint32_t stream) {
    memory_event m;
    m.time = time;
    m.device = device;
    m.lane = memory_lanes_[static_cast<std::size_t>(device)];
    m.stream = stream;
    const bool free_one = !live_.empty() && r_.below(2) == 0;
    if (free_one) {
      const std::size_t victim = r_.below(live_.size());
      m.action = memory_action::free_completed;
      m.address = live_[victim];
      m.size = 1u << 20;
      live_[victim] = live_.back();
      live_.pop_back();
      total_ -= 1 << 20;
    } else {
      m.action = memory_action::alloc;
      m.address = next_address_;
      next_address_ += 1u << 20;
      m.size = 1u << 20;
      m.stack = sites_[r_.below(sites_.size())];
      live_.push_back(m.address);
      total_ += 1 << 20;
    }
    memory_detail d;
    d.total_allocated = total_;
    d.total_reserved = static_cast<std::int64_t>(next_address_ - 0x7f0000000000ull);
    m.detail = t_.add_memory_detail(d);
    t_.memory.push_back(m);
    t_.counters.push_back({m.time, m.lane, allocated_, static_cast<double>(total_)});
  }

  void add_step() {
    range_event step;
    step.start = host_time_[0];
    step.lane = host_lanes_[0];
    step.name = step_name_;
    step.kind = range_kind::step;
    step.end = step.start + 1'000'000;
    t_.ranges.push_back(step);
    t_.markers.push_back({host_time_[0], host_lanes_[0], t_.strings.intern("step begin"),
                          t_.strings.intern("marker"), 0});
  }

  // One device assertion, the flows and a final allocator state, as the options ask.
  void finish() {
    if (o_.kernels > 0) {
      assertion_event a;
      a.time = stream_free_[0];
      a.lane = gpu_lanes_[0];
      a.site = t_.strings.intern("kernels.cu:42: index < size");
      a.message = t_.strings.intern("index 1024 out of bounds for size 1000");
      a.block[0] = 3;
      a.thread[0] = 17;
      a.launch_id = 99;
      t_.assertions.push_back(a);
    }
    if (o_.with_flows)
      t_.link_flows_by_correlation();
    if (o_.with_allocator_state) {
      allocator_state s;
      s.time = stream_free_.empty() ? 0 : stream_free_[0];
      segment seg;
      seg.address = 0x7f0000000000ull;
      seg.total_size = 64u << 20;
      seg.type = segment_type::large;
      seg.stack = sites_[0];
      seg.blocks.push_back(
          {seg.address, 32u << 20, (32u << 20) - 512, block_state::active_allocated, sites_[1]});
      seg.blocks.push_back({seg.address + (32u << 20), 32u << 20, 0, block_state::inactive, 0});
      s.segments.push_back(seg);
      t_.final_allocator_state = s;
    }
    t_.finalize();
  }

  const synthetic_options& o_;
  splitmix64 r_;
  trace t_;
  std::vector<string_id> names_;
  string_id launch_{}, memcpy_call_{}, copy_name_{}, step_name_{}, allocated_{};
  std::vector<lane_id> gpu_lanes_, host_lanes_, memory_lanes_;
  std::vector<stack_id> sites_;
  std::vector<std::int64_t> stream_free_, host_time_;
  std::vector<std::uint64_t> live_; // addresses alive
  std::int64_t total_ = 0;
  std::uint32_t correlation_ = 1;
  std::uint64_t next_address_ = 0x7f0000000000ull;
};

} // namespace

trace make_synthetic_trace(const synthetic_options& o) {
  return synthetic_builder(o).build();
}

} // namespace tdiag::trace
