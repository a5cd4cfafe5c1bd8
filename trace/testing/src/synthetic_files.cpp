// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/splitmix.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace {
namespace {

using rng = splitmix64;

// Buffered output through tdiag::output_file (a failed write throws TDIAG-CORE-005 naming it).
class out_file {
public:
  explicit out_file(output_file& out) : out_(out) { buf_.reserve(cap); }
  out_file(const out_file&) = delete;
  out_file& operator=(const out_file&) = delete;
  void byte(std::uint8_t b) {
    buf_.push_back(static_cast<char>(b));
    if (buf_.size() >= cap)
      flush();
  }
  void bytes(const void* p, std::size_t n) {
    buf_.append(static_cast<const char*>(p), n);
    if (buf_.size() >= cap)
      flush();
  }
  void text(std::string_view s) { bytes(s.data(), s.size()); }
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  [[nodiscard]] std::uint64_t written() const noexcept { return flushed_ + buf_.size(); }
  void flush() {
    out_.write(buf_);
    flushed_ += buf_.size();
    buf_.clear();
  }

private:
  static constexpr std::size_t cap = std::size_t{4} << 20;
  output_file& out_;
  std::string buf_;
  std::uint64_t flushed_ = 0;
};

// --- pickle ------------------------------------------------------------------------------------

// Protocol-4 opcodes as CPython's pickler emits them, with the memo numbered by MEMOIZE.
class pickler {
public:
  explicit pickler(out_file& out) : o_(out) {
    o_.byte(0x80);
    o_.byte(4);
  }
  void stop() { o_.byte('.'); }
  std::uint32_t memoize() {
    o_.byte(0x94);
    return next_memo_++;
  }
  void get(std::uint32_t memo) {
    if (memo < 256) {
      o_.byte('h');
      o_.le(memo, 1);
    } else {
      o_.byte('j');
      o_.le(memo, 4);
    }
  }
  void integer(std::int64_t v) {
    if (v >= 0 && v < 256) {
      o_.byte('K');
      o_.le(static_cast<std::uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
      o_.byte('M');
      o_.le(static_cast<std::uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      o_.byte('J');
      o_.le(static_cast<std::uint64_t>(v), 4);
    } else {
      int n = 8; // LONG1: the shortest two's complement
      while (n > 1 && ((v >> (8 * (n - 1) - 1)) == 0 || (v >> (8 * (n - 1) - 1)) == -1))
        --n;
      o_.byte(0x8a);
      o_.byte(static_cast<std::uint8_t>(n));
      o_.le(static_cast<std::uint64_t>(v), n);
    }
  }
  /// A str: the first time written and memoized, then fetched from the memo (as Python does
  /// for one str object used many times).
  void str(std::string_view s) {
    for (const auto& [text, memo] : strings_)
      if (text == s)
        return get(memo);
    if (s.size() < 256) {
      o_.byte(0x8c);
      o_.byte(static_cast<std::uint8_t>(s.size()));
    } else {
      o_.byte('X');
      o_.le(s.size(), 4);
    }
    o_.text(s);
    strings_.emplace_back(std::string(s), memoize());
  }
  void boolean(bool b) { o_.byte(b ? 0x88 : 0x89); }
  void none() { o_.byte('N'); }
  std::uint32_t empty_dict() {
    o_.byte('}');
    return memoize();
  }
  std::uint32_t empty_list() {
    o_.byte(']');
    return memoize();
  }
  void mark() { o_.byte('('); }
  void setitems() { o_.byte('u'); }
  void appends() { o_.byte('e'); }
  void tuple2() { o_.byte(0x86); }

private:
  out_file& o_;
  std::uint32_t next_memo_ = 0;
  std::vector<std::pair<std::string, std::uint32_t>> strings_;
};

struct live_block {
  std::uint64_t address, size;
  std::uint32_t stack, stream;
  std::size_t segment;
};
struct live_segment {
  std::uint64_t address, total, used = 0;
  std::uint32_t live = 0, stack = 0;
  bool open = true, freed = false;
};

// One device's caching-allocator model: bump allocation inside 64 MiB segments.
struct device_model {
  std::vector<live_segment> segments;
  std::vector<live_block> live;
  std::uint64_t next_address;
};

constexpr std::uint64_t segment_bytes = std::uint64_t{64} << 20;
constexpr int stack_pool = 48;

// Writes the shared traceback lists once each, as PyTorch's symbolizer shares them.
class stacks {
public:
  explicit stacks(pickler& p) : p_(p) {}
  void emit(std::uint32_t s) {
    if (memo_[s] != none)
      return p_.get(memo_[s]);
    memo_[s] = p_.empty_list();
    p_.mark();
    const int depth = 4 + static_cast<int>(s % 5);
    for (int i = 0; i < depth; ++i) {
      const auto f = (s * 7 + static_cast<std::uint32_t>(i) * 13) % frame_pool;
      if (frame_memo_[f] != none) {
        p_.get(frame_memo_[f]);
        continue;
      }
      frame_memo_[f] = p_.empty_dict();
      p_.mark();
      p_.str("name");
      p_.str(fmt::format("layer{}.forward", f));
      p_.str("filename");
      p_.str(fmt::format("/src/model/block{}.py", f % 9));
      p_.str("line");
      p_.integer(10 + f * 3);
      p_.setitems();
    }
    p_.appends();
  }

private:
  static constexpr std::uint32_t none = 0xffffffffu;
  static constexpr std::uint32_t frame_pool = 64;
  pickler& p_;
  std::vector<std::uint32_t> memo_ = std::vector<std::uint32_t>(stack_pool, none);
  std::vector<std::uint32_t> frame_memo_ = std::vector<std::uint32_t>(frame_pool, none);
};

struct snapshot_writer {
  pickler& p;
  stacks& st;
  rng state;
  std::int64_t time_us = 1'790'857'026'000'000;
  std::uint64_t in_batch = 0;

  void entry(std::string_view action, std::uint64_t addr, std::uint64_t size, std::uint32_t stream,
             std::uint32_t stack) {
    if (in_batch == 1000) {
      p.appends();
      p.mark();
      in_batch = 0;
    }
    ++in_batch;
    time_us += 1 + static_cast<std::int64_t>(state.next() % 4);
    p.empty_dict();
    p.mark();
    p.str("action");
    p.str(action);
    p.str("addr");
    p.integer(static_cast<std::int64_t>(addr));
    p.str("size");
    p.integer(static_cast<std::int64_t>(size));
    p.str("stream");
    p.integer(stream);
    p.str("time_us");
    p.integer(time_us);
    p.str("compile_context");
    p.str("N/A");
    p.str("user_metadata");
    p.str("");
    p.str("frames");
    st.emit(stack);
    p.setitems();
  }

  // One step of the model: mostly alloc / free pairs, new segments when the open one is full,
  // and a fully freed segment given back now and then. Returns the events written.
  int step(device_model& d) {
    const auto r = state.next();
    const bool do_alloc = d.live.size() < 64 || (d.live.size() < 4096 && r % 2 == 0);
    if (do_alloc) {
      const std::uint64_t size = 512 * (1 + (r >> 8) % 4096);
      const auto stack = static_cast<std::uint32_t>((r >> 24) % stack_pool);
      const auto stream = static_cast<std::uint32_t>((r >> 32) % 3);
      int n = 0;
      if (d.segments.empty() || !d.segments.back().open ||
          d.segments.back().used + size > d.segments.back().total) {
        if (!d.segments.empty())
          d.segments.back().open = false;
        d.segments.push_back({d.next_address, segment_bytes});
        d.segments.back().stack = stack;
        d.next_address += segment_bytes * 2;
        entry("segment_alloc", d.segments.back().address, segment_bytes, stream, stack);
        ++n;
      }
      auto& seg = d.segments.back();
      d.live.push_back({seg.address + seg.used, size, stack, stream, d.segments.size() - 1});
      seg.used += size;
      ++seg.live;
      entry("alloc", d.live.back().address, size, stream, stack);
      return n + 1;
    }
    const auto i = static_cast<std::size_t>((r >> 8) % d.live.size());
    const auto b = d.live[i];
    d.live[i] = d.live.back();
    d.live.pop_back();
    entry("free_requested", b.address, b.size, b.stream, b.stack);
    entry("free_completed", b.address, b.size, b.stream, b.stack);
    auto& seg = d.segments[b.segment];
    if (--seg.live == 0 && !seg.open && !seg.freed) {
      seg.freed = true;
      entry("segment_free", seg.address, seg.total, b.stream, seg.stack);
      return 3;
    }
    return 2;
  }
};

void write_block(pickler& p, stacks& st, std::uint64_t addr, std::uint64_t size, bool live,
                 std::uint32_t stack) {
  p.empty_dict();
  p.mark();
  p.str("address");
  p.integer(static_cast<std::int64_t>(addr));
  p.str("size");
  p.integer(static_cast<std::int64_t>(size));
  p.str("requested_size");
  p.integer(static_cast<std::int64_t>(live ? size : 0));
  p.str("state");
  p.str(live ? "active_allocated" : "inactive");
  if (live) {
    p.str("frames");
    st.emit(stack);
  }
  p.setitems();
}

// The segments alive at the end with their blocks (live ones, then the free tail).
void write_segments(pickler& p, stacks& st, std::vector<device_model>& devices) {
  p.str("segments");
  p.empty_list();
  p.mark();
  for (std::size_t dev = 0; dev < devices.size(); ++dev) {
    auto& d = devices[dev];
    std::sort(d.live.begin(), d.live.end(),
              [](const live_block& a, const live_block& b) { return a.address < b.address; });
    std::size_t li = 0;
    for (std::size_t s = 0; s < d.segments.size(); ++s) {
      const auto& seg = d.segments[s];
      if (seg.freed)
        continue;
      p.empty_dict();
      p.mark();
      p.str("device");
      p.integer(static_cast<std::int64_t>(dev));
      p.str("address");
      p.integer(static_cast<std::int64_t>(seg.address));
      p.str("total_size");
      p.integer(static_cast<std::int64_t>(seg.total));
      p.str("stream");
      p.integer(0);
      p.str("segment_type");
      p.str("large");
      p.str("segment_pool_id");
      p.integer(0);
      p.integer(0);
      p.tuple2();
      p.str("is_expandable");
      p.boolean(false);
      p.str("frames");
      st.emit(seg.stack);
      p.str("blocks");
      p.empty_list();
      p.mark();
      std::uint64_t at = seg.address;
      for (; li < d.live.size() && d.live[li].address < seg.address + seg.total; ++li) {
        const auto& b = d.live[li];
        if (b.address > at)
          write_block(p, st, at, b.address - at, false, 0);
        write_block(p, st, b.address, b.size, true, b.stack);
        at = b.address + b.size;
      }
      if (at < seg.address + seg.total)
        write_block(p, st, at, seg.address + seg.total - at, false, 0);
      p.appends();
      p.setitems();
    }
  }
  p.appends();
}

} // namespace

synthetic_file_stats write_synthetic_snapshot(const std::filesystem::path& path,
                                              const synthetic_file_options& o) {
  output_file target(path);
  out_file out(target);
  const auto events = o.events;
  const int devices = static_cast<int>(std::max<std::uint32_t>(o.devices, 1));
  const auto seed = o.seed;
  pickler p(out);
  stacks st(p);
  snapshot_writer w{p, st, rng{seed}, 1'790'857'026'000'000, 0};
  std::vector<device_model> models(static_cast<std::size_t>(devices));
  p.empty_dict();
  p.mark();
  p.str("device_traces");
  p.empty_list();
  p.mark();
  std::uint64_t written = 0;
  for (int d = 0; d < devices; ++d) {
    auto& m = models[static_cast<std::size_t>(d)];
    m.next_address = 0x7f0000000000ull + static_cast<std::uint64_t>(d) * (std::uint64_t{1} << 36);
    const std::uint64_t until = events * static_cast<std::uint64_t>(d + 1) / devices;
    p.empty_list();
    p.mark();
    w.in_batch = 0;
    while (written < until)
      written += static_cast<std::uint64_t>(w.step(m));
    p.appends();
  }
  p.appends();
  write_segments(p, st, models);
  p.str("allocator_settings");
  p.empty_dict();
  p.mark();
  p.str("PYTORCH_CUDA_ALLOC_CONF");
  p.str("expandable_segments:False");
  p.str("max_split_size");
  p.integer(-1);
  p.setitems();
  p.str("external_annotations");
  p.empty_list();
  p.setitems();
  p.stop();
  out.flush();
  target.commit();
  return {written, out.written()};
}

namespace {

// --- Kineto ------------------------------------------------------------------------------------

struct kineto_writer {
  out_file& o;
  rng state;
  std::uint64_t count = 0;
  bool first = true;

  void event(std::string_view json) {
    o.text(first ? "\n" : ",\n");
    first = false;
    o.text(json);
    ++count;
  }
  static std::string ts(std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }
};

constexpr std::string_view kernel_names[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    "ampere_sgemm_128x64_tn",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10>",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};
constexpr std::string_view op_names[] = {"aten::add",    "aten::mm",      "aten::mean",
                                         "aten::linear", "aten::softmax", "nccl:all_reduce"};

} // namespace

synthetic_file_stats write_synthetic_kineto(const std::filesystem::path& path,
                                            const synthetic_file_options& o) {
  output_file target(path);
  out_file out(target);
  const auto events = o.events;
  const int devices = static_cast<int>(std::max<std::uint32_t>(o.devices, 1));
  const auto seed = o.seed;
  kineto_writer w{out, rng{seed}, 0, true};
  out.text(R"({"schemaVersion": 1, "deviceProperties": [)");
  for (int d = 0; d < devices; ++d)
    out.text(fmt::format(R"({}{{"id": {}, "name": "NVIDIA H200", "totalGlobalMem": 150109880320}})",
                         d == 0 ? "" : ", ", d));
  out.text(R"(], "displayTimeUnit": "ms", "baseTimeNanoseconds": 1790857026000000000, )"
           R"("traceEvents": [)");
  constexpr int host_pid = 4242;
  w.event(fmt::format(R"({{"name": "process_name", "ph": "M", "ts": 0, "pid": {}, "tid": 0, )"
                      R"("args": {{"name": "python3"}}}})",
                      host_pid));
  std::int64_t now = 5'343'872'463'000'000;             // ns
  std::vector<std::int64_t> gpu_free(devices * 2, now); // per (device, stream)
  std::uint32_t correlation = 1, external = 1;
  for (std::uint64_t step = 1; w.count < events; ++step) {
    const std::int64_t step_start = now;
    const int ops = 16 + static_cast<int>(w.state.next() % 16);
    for (int i = 0; i < ops && w.count < events; ++i) {
      const auto r = w.state.next();
      const int tid = 100 + static_cast<int>(r % 2);
      const int dev = static_cast<int>((r >> 4) % devices);
      const int stream = 7 + static_cast<int>((r >> 8) % 2);
      const auto k = (r >> 12) % std::size(kernel_names);
      const std::int64_t op_dur = 20'000 + static_cast<std::int64_t>((r >> 20) % 30'000);
      const std::int64_t launch = now + 5'000;
      const std::int64_t launch_dur = 4'000 + static_cast<std::int64_t>((r >> 28) % 3'000);
      auto& free_at = gpu_free[static_cast<std::size_t>(dev * 2 + stream - 7)];
      const std::int64_t k_start = std::max(free_at, launch + launch_dur + 2'000);
      const std::int64_t k_dur = 3'000 + static_cast<std::int64_t>((r >> 36) % 400'000);
      free_at = k_start + k_dur;
      const auto ext = external++;
      const auto corr = correlation++;
      w.event(fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": {}, "tid": {}, )"
                          R"("ts": {}, "dur": {}, "args": {{"External id": {}}}}})",
                          op_names[k], host_pid, tid, w.ts(now), w.ts(op_dur), ext));
      const bool copy = (r >> 44) % 8 == 0;
      w.event(fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "{}", "pid": {}, )"
                          R"("tid": {}, "ts": {}, "dur": {}, "args": {{"External id": {}, )"
                          R"("cbid": {}, "correlation": {}}}}})",
                          copy ? "cudaMemcpyAsync" : "cudaLaunchKernel", host_pid, tid,
                          w.ts(launch), w.ts(launch_dur), ext, copy ? 41 : 211, corr));
      w.event(fmt::format(R"({{"ph": "s", "id": {}, "pid": {}, "tid": {}, "ts": {}, )"
                          R"("cat": "ac2g", "name": "ac2g"}})",
                          corr, host_pid, tid, w.ts(launch)));
      if (copy)
        w.event(fmt::format("{{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD "
                            "(Pinned -> Device)\", \"pid\": {}, \"tid\": {}, \"ts\": {}, "
                            "\"dur\": {}, \"args\": {{\"External id\": {}, \"device\": {}, "
                            "\"context\": 1, \"stream\": {}, \"correlation\": {}, "
                            "\"bytes\": {}}}}}",
                            dev, stream, w.ts(k_start), w.ts(k_dur), ext, dev, stream, corr,
                            (r >> 40) % (64 << 20)));
      else
        w.event(fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": {}, )"
                            R"("tid": {}, "ts": {}, "dur": {}, "args": {{"External id": {}, )"
                            R"("device": {}, "context": 1, "stream": {}, "correlation": {}, )"
                            R"("registers per thread": 64, "shared memory": 0, )"
                            R"("grid": [{}, 1, 1], "block": [256, 1, 1]}}}})",
                            kernel_names[k], dev, stream, w.ts(k_start), w.ts(k_dur), ext, dev,
                            stream, corr, 1 + (r >> 48) % 2048));
      w.event(fmt::format(R"({{"ph": "f", "id": {}, "pid": {}, "tid": {}, "ts": {}, )"
                          R"("cat": "ac2g", "name": "ac2g", "bp": "e"}})",
                          corr, dev, stream, w.ts(k_start)));
      if ((r >> 52) % 4 == 0)
        w.event(fmt::format(R"({{"ph": "i", "cat": "cpu_instant_event", "s": "t", )"
                            R"("name": "[memory]", "pid": {}, "tid": {}, "ts": {}, )"
                            R"("args": {{"Total Reserved": 2097152000, "Total Allocated": {}, )"
                            R"("Bytes": {}, "Device Id": {}, "Device Type": 1, "Addr": {}}}}})",
                            host_pid, tid, w.ts(now + 1'000), 1'000'000'000 + (r >> 20) % 999,
                            512 * (1 + (r >> 30) % 1024), dev,
                            0x7f0000000000ull + ((r >> 16) % (1ull << 32)) * 512));
      now += op_dur + 1'000;
    }
    w.event(fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", )"
                        R"("pid": {}, "tid": 100, "ts": {}, "dur": {}}})",
                        step, host_pid, w.ts(step_start), w.ts(now - step_start)));
  }
  out.text("\n]}\n");
  out.flush();
  target.commit();
  return {w.count, out.written()};
}

} // namespace tdiag::trace
