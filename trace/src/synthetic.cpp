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

} // namespace

trace make_synthetic_trace(const synthetic_options& o) {
  trace t;
  splitmix64 r{o.seed};
  t.metadata.format = "synthetic";
  t.metadata.time_origin_ns = 1'764'000'000'000'000'000;

  std::vector<string_id> names;
  for (std::uint32_t i = 0; i < std::max(o.kernel_names, 1u); ++i)
    names.push_back(t.strings.intern(kernel_name(i)));
  const string_id launch = t.strings.intern("cudaLaunchKernel");
  const string_id memcpy_call = t.strings.intern("cudaMemcpyAsync");
  const string_id copy_name = t.strings.intern("Memcpy HtoD (Pageable -> Device)");
  const string_id step_name = t.strings.intern("ProfilerStep#");
  const string_id allocated = t.strings.intern("allocated bytes");

  std::vector<lane_id> gpu_lanes;
  const std::uint32_t devices = std::max(o.devices, 1u);
  const std::uint32_t streams = std::max(o.streams_per_device, 1u);
  for (std::uint32_t d = 0; d < devices; ++d)
    for (std::uint32_t s = 0; s < streams; ++s) {
      const lane_id l = t.lanes.gpu(d, 7 + s);
      t.lanes.set_name(l, t.strings.intern(fmt::format("stream {}", 7 + s)));
      gpu_lanes.push_back(l);
    }
  std::vector<lane_id> host_lanes;
  for (std::uint32_t h = 0; h < std::max(o.host_threads, 1u); ++h) {
    const lane_id l = t.lanes.host(4242, 1000 + h);
    t.lanes.set_name(l, t.strings.intern(h == 0 ? "python main" : fmt::format("worker {}", h)));
    host_lanes.push_back(l);
  }
  std::vector<lane_id> memory_lanes;
  for (std::uint32_t d = 0; d < devices; ++d)
    memory_lanes.push_back(t.lanes.memory(d));

  // A few allocation sites: stacks of 3 frames.
  std::vector<stack_id> sites;
  for (std::uint32_t i = 0; i < 8; ++i) {
    std::array<frame_id, 3> frames{
        t.stacks.intern_frame({t.strings.intern(fmt::format("layer_{}", i)),
                               t.strings.intern("model.py"), 10 + i * 7}),
        t.stacks.intern_frame({t.strings.intern("forward"), t.strings.intern("model.py"), 120}),
        t.stacks.intern_frame({t.strings.intern("train_step"), t.strings.intern("train.py"), 42})};
    sites.push_back(t.stacks.intern_stack(frames));
  }

  std::vector<std::int64_t> stream_free(gpu_lanes.size(), 0);
  std::vector<std::int64_t> host_time(host_lanes.size(), 0);
  std::vector<std::uint64_t> live; // addresses alive
  std::int64_t total = 0;
  std::uint32_t correlation = 1;
  std::uint64_t next_address = 0x7f0000000000ull;

  for (std::size_t i = 0; i < o.kernels; ++i) {
    const std::size_t h = r.below(host_lanes.size());
    host_time[h] += 2'000 + static_cast<std::int64_t>(r.below(3'000));
    api_event call;
    call.start = host_time[h];
    call.end = call.start + 1'500 + static_cast<std::int64_t>(r.below(1'000));
    call.lane = host_lanes[h];
    call.name = launch;
    call.process = 4242;
    call.thread = 1000 + h;
    call.correlation = correlation;
    call.kind = api_kind::runtime;
    call.cbid = 211;
    t.api_calls.push_back(call);

    const std::size_t g = r.below(gpu_lanes.size());
    const lane& gl = t.lanes.at(gpu_lanes[g]);
    kernel_event k;
    k.start = std::max(stream_free[g], call.end + 3'000) + static_cast<std::int64_t>(r.below(500));
    k.end = k.start + 2'000 +
            static_cast<std::int64_t>(r.below(8) == 0 ? r.below(400'000) : r.below(40'000));
    stream_free[g] = k.end;
    k.lane = gpu_lanes[g];
    const std::size_t name_index = (i * 7 + r.below(3)) % names.size();
    k.name = names[name_index];
    k.device = static_cast<std::int32_t>(gl.group);
    k.context = 1;
    k.stream = gl.id;
    k.grid[0] = 108u << (name_index % 4);
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.shared_static = (name_index % 3) * 4096;
    k.registers = 32 + (name_index % 4) * 8;
    k.correlation = correlation++;
    t.kernels.push_back(k);

    if (r.below(100) < o.copies_per_100_kernels) {
      api_event c = call;
      c.start = call.end + 100;
      c.end = c.start + 4'000;
      c.name = memcpy_call;
      c.correlation = correlation;
      host_time[h] = c.end;
      t.api_calls.push_back(c);
      copy_event cp;
      cp.start = std::max(stream_free[g], c.end + 2'000);
      cp.end = cp.start + 10'000 + static_cast<std::int64_t>(r.below(50'000));
      stream_free[g] = cp.end;
      cp.lane = gpu_lanes[g];
      cp.name = copy_name;
      cp.bytes = std::uint64_t{1} << (12 + r.below(14));
      cp.device = k.device;
      cp.context = 1;
      cp.stream = gl.id;
      cp.kind = copy_kind::htod;
      cp.src_kind = memory_kind::pageable;
      cp.dst_kind = memory_kind::device;
      cp.correlation = correlation++;
      t.copies.push_back(cp);
    }
    if (r.below(100) < o.allocations_per_100_kernels) {
      memory_event m;
      m.time = call.start;
      m.device = k.device;
      m.lane = memory_lanes[static_cast<std::size_t>(k.device)];
      m.stream = gl.id;
      const bool free_one = !live.empty() && r.below(2) == 0;
      if (free_one) {
        const std::size_t victim = r.below(live.size());
        m.action = memory_action::free_completed;
        m.address = live[victim];
        m.size = 1u << 20;
        live[victim] = live.back();
        live.pop_back();
        total -= 1 << 20;
      } else {
        m.action = memory_action::alloc;
        m.address = next_address;
        next_address += 1u << 20;
        m.size = 1u << 20;
        m.stack = sites[r.below(sites.size())];
        live.push_back(m.address);
        total += 1 << 20;
      }
      m.total_allocated = total;
      m.total_reserved = static_cast<std::int64_t>(next_address - 0x7f0000000000ull);
      t.memory.push_back(m);
      t.counters.push_back({m.time, m.lane, allocated, static_cast<double>(total)});
    }
    if (i % 1000 == 0) {
      range_event step;
      step.start = host_time[0];
      step.lane = host_lanes[0];
      step.name = step_name;
      step.kind = range_kind::step;
      step.end = step.start + 1'000'000;
      t.ranges.push_back(step);
      t.markers.push_back({host_time[0], host_lanes[0], t.strings.intern("step begin"),
                           t.strings.intern("marker"), 0});
    }
  }
  if (o.kernels > 0) {
    assertion_event a;
    a.time = stream_free[0];
    a.lane = gpu_lanes[0];
    a.site = t.strings.intern("kernels.cu:42: index < size");
    a.message = t.strings.intern("index 1024 out of bounds for size 1000");
    a.block[0] = 3;
    a.thread[0] = 17;
    a.launch_id = 99;
    t.assertions.push_back(a);
  }
  if (o.with_flows)
    t.link_flows_by_correlation();
  if (o.with_allocator_state) {
    allocator_state s;
    s.time = stream_free.empty() ? 0 : stream_free[0];
    segment seg;
    seg.address = 0x7f0000000000ull;
    seg.total_size = 64u << 20;
    seg.type = segment_type::large;
    seg.stack = sites[0];
    seg.blocks.push_back(
        {seg.address, 32u << 20, (32u << 20) - 512, block_state::active_allocated, sites[1]});
    seg.blocks.push_back({seg.address + (32u << 20), 32u << 20, 0, block_state::inactive, 0});
    s.segments.push_back(seg);
    t.final_allocator_state = s;
  }
  t.finalize();
  return t;
}

} // namespace tdiag::trace
