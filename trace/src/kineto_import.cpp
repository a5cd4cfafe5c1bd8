// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "kineto_fields.hpp"
#include "kineto_stream.hpp"
#include "saturate.hpp"

namespace tdiag::trace {
using clock_type = std::chrono::steady_clock;

namespace detail {
// The event loop; declared here so kineto_import_events.cpp can stay a separate file if it
// grows. Everything the builder needs is in this translation unit.
class kineto_builder {
public:
  kineto_builder(trace& t, kineto_stats& stats) : t_(t), stats_(stats) {
    t_.metadata.format = "kineto-json";
  }

  void event(od::object& obj) {
    try {
      read_event(obj);
    } catch (const bad_field& f) {
      fail_field(fmt::format("traceEvents[{}].{}", stats_.events, f.path), f);
    }
    // A 62 MB gzip can hold 20 GiB of events: the model grows within the memory budget.
    if ((stats_.events & 0xFFFF) == 0)
      check_memory_budget(t_.metadata.source_path,
                          fmt::format("the model of its first {} events", stats_.events),
                          t_.memory_bytes());
  }

  /// One line naming the file and the field: "x.json: traceEvents[7].args.Bytes: expected a JSON
  /// integer, got \"123\"" (TDIAG-TR-125).
  [[noreturn]] void fail_field(const std::string& path, const bad_field& f) const {
    diagnostic d;
    d.code = codes::kineto_bad_number;
    d.title = "Kineto field is not a number";
    d.message = fmt::format("{}: {}: expected {}, got {}", t_.metadata.source_path, path,
                            f.expected, printable(f.token, 64));
    d.add_field("file", t_.metadata.source_path);
    d.add_field("path", path);
    d.hint = "write times, ids and sizes as plain JSON numbers, as the PyTorch profiler does";
    throw input_error(std::move(d));
  }

  void set_base(std::int64_t base_ns) { base_ns_ = base_ns; }

  void finish() {
    // A thread_name names the host thread and the GPU stream of its (pid, tid), if they exist:
    // one look-up each, so 250k names over 250k lanes stay linear (log).
    for (const auto& [key, name] : thread_names_) {
      const auto id = static_cast<std::uint64_t>(key.second);
      for (const auto l : {t_.lanes.find_host(key.first, id), t_.lanes.find_gpu(key.first, id)})
        if (l != no_lane)
          t_.lanes.set_name(l, name);
    }
    stats_.skipped_events += pending_flows_.size();
    t_.metadata.time_origin_ns = clamp_i64(wide_int{base_ns_} + wide_int{rebase_us_} * 1000);
    if (rebase_us_ != 0)
      t_.metadata.properties.emplace_back("kineto.ts_rebase_us", fmt::format("{}", rebase_us_));
  }

private:
  void read_event(od::object& obj) {
    std::string_view ph, cat, name;
    time_value ts, dur;
    std::uint64_t id = 0;
    bool has_id = false;
    track_key pid, tid;
    event_args args;
    std::string_view deferred_args;
    for (auto field : obj) {
      od::field f;
      check(std::move(field).get(f));
      const auto key = f.key();
      od::value v = f.value();
      switch (key.raw()[0]) {
      case 'p':
        if (key == "ph")
          ph = take(v.get_string());
        else if (key == "pid")
          pid = read_track(v, "pid");
        break;
      case 'c':
        if (key == "cat")
          cat = take(v.get_string());
        break;
      case 'n':
        if (key == "name")
          name = take(v.get_string());
        break;
      case 't':
        if (key == "ts")
          ts = require_time(v, "ts");
        else if (key == "tid")
          tid = read_track(v, "tid");
        break;
      case 'd':
        if (key == "dur")
          dur = require_time(v, "dur");
        break;
      case 'i':
        if (key == "id") {
          id = read_u64(v, "id");
          has_id = true;
        }
        break;
      case 'a':
        if (key == "args") {
          od::object a = take(v.get_object());
          if (!ph.empty())
            read_args(a, args);
          else
            deferred_args = take(a.raw_json()); // args before "ph": parse later (rare)
        }
        break;
      default:
        break;
      }
    }
    if (!deferred_args.empty())
      reparse_args(deferred_args, args);
    ++stats_.events;
    if (ts.fractional && !fractional_ts_) {
      fractional_ts_ = true;
      t_.metadata.properties.emplace_back("kineto.fractional_ts", "1");
    }
    const auto start = on_axis(ts);
    const auto end = sat_add(start, std::max<std::int64_t>(0, as_duration(dur)));
    if (ph.size() != 1) {
      ++stats_.skipped_events;
      return;
    }
    switch (ph[0]) {
    case 'X':
      complete(cat, name, start, end, pid, tid, args);
      break;
    case 'i':
    case 'I':
      instant(cat, name, start, pid, tid, args);
      break;
    case 's':
    case 'f':
    case 't':
      flow(ph[0], cat, has_id ? id : 0, start, pid, tid);
      break;
    case 'M':
      metadata(name, pid, tid, args);
      break;
    case 'C':
      counter(name, start, pid, tid, args);
      break;
    default:
      ++stats_.skipped_events;
      break;
    }
  }

  // Epoch-microsecond timestamps (1.7e15 us) exceed the model's +-2^60 ns: past 2^48 us (9
  // years) the axis starts at the whole us of the first such ts, and time_origin_ns says so.
  std::int64_t on_axis(const time_value& t) {
    if (!rebased_ && (t.us > (std::int64_t{1} << 48) || t.us < -(std::int64_t{1} << 48))) {
      rebased_ = true;
      rebase_us_ = t.us;
    }
    return clamp_time((wide_int{t.us} - rebase_us_) * 1000 + t.frac_ns);
  }
  static std::int64_t as_duration(const time_value& t) {
    return clamp_time(wide_int{t.us} * 1000 + t.frac_ns);
  }

  // ts and dur must be JSON numbers: a string "123", NaN or Infinity is an error, never 0.
  static time_value require_time(od::value v, std::string_view field) {
    if (auto t = read_time(v))
      return *t;
    throw bad_field{field, std::string(token_text(v)), "a finite JSON number of microseconds"};
  }

  std::int64_t track_number(const track_key& k) {
    if (!k.is_text)
      return k.number;
    // String pids/tids ("Spans", "Traces") become stable negative ids below -1.
    return -2 - static_cast<std::int64_t>(t_.strings.intern(k.text));
  }
  lane_id host_lane(const track_key& pid, const track_key& tid) {
    const auto p = track_number(pid), t = track_number(tid);
    if (p == last_host_.first && t == last_host_.second)
      return last_host_lane_;
    last_host_ = {p, t};
    last_host_lane_ = t_.lanes.host(p, static_cast<std::uint64_t>(t));
    return last_host_lane_;
  }
  lane_id gpu_lane(std::int64_t device, std::uint64_t stream) {
    if (device == last_gpu_.first && stream == last_gpu_.second)
      return last_gpu_lane_;
    last_gpu_ = {device, stream};
    last_gpu_lane_ = t_.lanes.gpu(device, stream);
    return last_gpu_lane_;
  }
  string_id intern(std::string_view s) { return t_.strings.intern(s); }

  void complete(std::string_view cat, std::string_view name, std::int64_t start, std::int64_t end,
                const track_key& pid, const track_key& tid, const event_args& a) {
    const bool is_memset = cat == "gpu_memset";
    if (cat == "kernel") {
      kernel_event k;
      k.start = start;
      k.end = end;
      k.device = static_cast<std::int32_t>(a.has_device ? a.device : track_number(pid));
      k.stream = a.has_stream ? a.stream : static_cast<std::uint64_t>(track_number(tid));
      k.lane = gpu_lane(k.device, k.stream);
      k.name = intern(name);
      k.context = static_cast<std::uint32_t>(a.context);
      std::memcpy(k.grid, a.grid, sizeof k.grid);
      std::memcpy(k.block, a.block, sizeof k.block);
      k.shared_static = static_cast<std::uint32_t>(a.shared_memory); // Kineto gives the total
      k.registers = static_cast<std::uint32_t>(a.registers);
      k.correlation = static_cast<std::uint32_t>(a.correlation);
      t_.kernels.push_back(k);
    } else if (is_memset || cat == "gpu_memcpy") {
      copy_event c;
      c.start = start;
      c.end = end;
      c.device = static_cast<std::int32_t>(a.has_device ? a.device : track_number(pid));
      c.stream = a.has_stream ? a.stream : static_cast<std::uint64_t>(track_number(tid));
      c.lane = gpu_lane(c.device, c.stream);
      c.name = intern(name);
      c.bytes = a.bytes, c.bandwidth_gbps = static_cast<float>(a.bandwidth_gbps);
      c.context = static_cast<std::uint32_t>(a.context);
      c.correlation = static_cast<std::uint32_t>(a.correlation);
      c.kind = parse_copy_kind(name, is_memset);
      // "Memcpy HtoD (Pageable -> Device)" / "Memset (Device)"
      if (const auto open = name.find('('); open != std::string_view::npos) {
        const auto inside = name.substr(open + 1);
        const auto arrow = inside.find("-> ");
        if (arrow != std::string_view::npos) {
          c.src_kind = parse_memory_kind(inside);
          c.dst_kind = parse_memory_kind(inside.substr(arrow + 3));
        } else {
          c.dst_kind = parse_memory_kind(inside);
        }
      }
      t_.copies.push_back(c);
    } else if (cat == "cuda_sync") {
      // Stream/Event/Context Sync: the GPU waits; HTA counts these as GPU rows of their stream.
      range_event r;
      r.start = start;
      r.end = end;
      const auto device = a.has_device ? a.device : track_number(pid);
      r.lane =
          gpu_lane(device, a.has_stream ? a.stream : static_cast<std::uint64_t>(track_number(tid)));
      r.name = intern(name);
      r.kind = range_kind::gpu_sync;
      r.correlation = static_cast<std::uint32_t>(a.correlation);
      keep_sync_wait(a, t_);
      t_.ranges.push_back(r);
    } else if (cat == "gpu_user_annotation") {
      range_event r;
      r.start = start;
      r.end = end;
      r.lane = gpu_lane(track_number(pid), static_cast<std::uint64_t>(track_number(tid)));
      r.name = intern(name);
      r.kind = range_kind::gpu_annotation;
      t_.ranges.push_back(r);
    } else if (cat == "user_annotation" || cat == "Trace" || cat == "overhead") {
      range_event r;
      r.start = start;
      r.end = end;
      r.lane = host_lane(pid, tid);
      r.name = intern(name);
      r.kind = cat != "user_annotation"            ? range_kind::other
               : name.starts_with("ProfilerStep#") ? range_kind::step
                                                   : range_kind::user_annotation;
      r.correlation = static_cast<std::uint32_t>(a.external_id);
      t_.ranges.push_back(r);
    } else {
      api_event e;
      e.start = start;
      e.end = end;
      e.lane = host_lane(pid, tid);
      e.name = intern(name);
      e.process = track_number(pid);
      e.thread = static_cast<std::uint64_t>(track_number(tid));
      e.correlation = static_cast<std::uint32_t>(a.correlation);
      e.cbid = static_cast<std::uint32_t>(a.cbid);
      e.kind = cat == "cuda_runtime"      ? api_kind::runtime
               : cat == "cuda_driver"     ? api_kind::driver
               : cat == "cpu_op"          ? api_kind::cpu_op
               : cat == "python_function" ? api_kind::python
                                          : api_kind::other;
      t_.api_calls.push_back(e);
    }
  }

  void instant(std::string_view cat, std::string_view name, std::int64_t time, const track_key& pid,
               const track_key& tid, const event_args& a) {
    if (name == "[memory]") {
      memory_event m;
      m.time = time;
      m.device = a.device_type == 1 ? static_cast<std::int32_t>(a.device_id) : -1;
      m.lane = t_.lanes.memory(m.device);
      m.action = a.mem_bytes >= 0 ? memory_action::alloc : memory_action::free_completed;
      m.address = a.addr;
      // Negated as unsigned: -INT64_MIN does not fit an int64.
      const auto magnitude = static_cast<std::uint64_t>(a.mem_bytes);
      m.size = a.mem_bytes >= 0 ? magnitude : std::uint64_t{0} - magnitude;
      m.total_allocated = a.total_allocated;
      m.total_reserved = a.total_reserved;
      m.correlation = static_cast<std::uint32_t>(a.external_id);
      t_.memory.push_back(m);
      return;
    }
    marker_event m;
    m.time = time;
    m.lane = host_lane(pid, tid);
    m.name = intern(name);
    m.category = intern(cat);
    t_.markers.push_back(m);
  }

  void flow(char ph, std::string_view cat, std::uint64_t id, std::int64_t time,
            const track_key& pid, const track_key& tid) {
    const bool launch = cat == "ac2g";
    // ac2g ends sit on GPU tracks (pid = device, tid = stream) or, for some, on CPU threads:
    // either way the lane keyed by (pid, tid) of that kind exists already when the kernel does.
    lane_id lane;
    if (ph == 'f' && launch && !pid.is_text && pid.number >= 0 && pid.number < 64)
      lane = gpu_lane(pid.number, static_cast<std::uint64_t>(track_number(tid)));
    else
      lane = host_lane(pid, tid);
    const std::uint64_t key = (id << 1) | (launch ? 1u : 0u);
    auto [it, inserted] = pending_flows_.try_emplace(key);
    auto& p = it->second;
    if (ph == 's') {
      p.has_start = true;
      p.flow.time = time;
      p.flow.lane = lane;
    } else {
      p.has_end = true;
      p.flow.target_time = time;
      p.flow.target_lane = lane;
    }
    if (p.has_start && p.has_end) {
      p.flow.correlation = static_cast<std::uint32_t>(id);
      p.flow.kind = launch ? flow_kind::launch : flow_kind::other;
      t_.flows.push_back(p.flow);
      pending_flows_.erase(it);
    }
  }

  void metadata(std::string_view name, const track_key& pid, const track_key& tid,
                const event_args& a) {
    ++stats_.metadata_events;
    if (name == "thread_name" && !a.name.empty())
      thread_names_.emplace_back(std::pair{track_number(pid), track_number(tid)}, intern(a.name));
    else if (name == "process_name" && !a.name.empty())
      t_.metadata.properties.emplace_back(fmt::format("process.{}", track_number(pid)),
                                          std::string(a.name));
  }

  void counter(std::string_view name, std::int64_t time, const track_key& pid, const track_key& tid,
               const event_args& a) {
    // Chrome counters carry their series in args; Kineto's only one we keep is a plain value.
    counter_event c;
    c.time = time;
    c.lane = host_lane(pid, tid);
    c.name = intern(name);
    c.value = static_cast<double>(a.bytes);
    t_.counters.push_back(c);
  }

  void reparse_args(std::string_view raw, event_args& a) {
    simdjson::padded_string copy(raw);
    od::document d = take(side_parser_.iterate(copy));
    od::object o = take(d.get_object());
    read_args(o, a);
  }

  struct pending_flow {
    flow_event flow;
    bool has_start = false, has_end = false;
  };

  trace& t_;
  kineto_stats& stats_;
  std::unordered_map<std::uint64_t, pending_flow> pending_flows_;
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, string_id>> thread_names_;
  std::pair<std::int64_t, std::int64_t> last_host_{INT64_MIN, INT64_MIN};
  lane_id last_host_lane_ = 0;
  std::pair<std::int64_t, std::uint64_t> last_gpu_{INT64_MIN, 0};
  lane_id last_gpu_lane_ = 0;
  bool fractional_ts_ = false;
  bool rebased_ = false;
  std::int64_t rebase_us_ = 0, base_ns_ = 0;
  od::parser side_parser_;
};
} // namespace detail

namespace {

using namespace detail;

// Everything at the top level but traceEvents: the time base, device names, versions.
void read_top_level(od::object& top, detail::kineto_builder& builder, trace& t) {
  for (auto field : top) {
    od::field f;
    check(std::move(field).get(f));
    const auto key = f.key();
    od::value v = f.value();
    if (key == "traceEvents")
      continue;
    if (key == "baseTimeNanoseconds") {
      builder.set_base(read_i64(v, "baseTimeNanoseconds"));
    } else if (key == "distributedInfo") {
      // {"backend": "nccl", "rank": 0, "world_size": 128}: kept as distributed.<key>.
      od::object info = take(v.get_object());
      for (auto item : info) {
        od::field g;
        check(std::move(item).get(g));
        const char* graw = g.key().raw();
        const std::string name = "distributed." + std::string(graw, std::strcspn(graw, "\""));
        od::value gv = g.value();
        od::json_type gt = take(gv.type());
        if (gt == od::json_type::string)
          t.metadata.properties.emplace_back(name, std::string(take(gv.get_string())));
        else if (gt == od::json_type::number)
          t.metadata.properties.emplace_back(name,
                                             fmt::format("{}", read_i64(gv, "distributedInfo")));
      }
    } else if (key == "deviceProperties") {
      od::array devices = take(v.get_array());
      for (auto dev : devices) {
        od::object o = take(dev.get_object());
        std::string_view name;
        if (o.find_field_unordered("name").get_string().get(name) == simdjson::SUCCESS &&
            !name.empty())
          t.metadata.properties.emplace_back("device.name", std::string(name));
      }
    } else {
      od::json_type vt = take(v.type());
      const char* raw = key.raw();
      const std::string k(raw, std::strcspn(raw, "\""));
      if (vt == od::json_type::string)
        t.metadata.properties.emplace_back(k, std::string(take(v.get_string())));
      else if (vt == od::json_type::number)
        t.metadata.properties.emplace_back(k, std::string(v.raw_json_token()));
    }
  }
}

class span_source final : public detail::byte_source {
public:
  explicit span_source(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t read(char* dst, std::size_t n) override {
    n = std::min(n, bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

class gzip_source final : public detail::byte_source {
public:
  gzip_source(std::span<const std::byte> bytes, std::string_view source) : z_(bytes, source) {}
  std::size_t read(char* dst, std::size_t n) override {
    const auto t0 = clock_type::now();
    const auto got = z_.read(dst, n);
    seconds += std::chrono::duration<double>(clock_type::now() - t0).count();
    return got;
  }
  double seconds = 0;

private:
  detail::gzip_stream z_;
};

void parse_stream(detail::byte_source& src, std::string_view source, trace& t, kineto_stats& stats,
                  std::size_t window) {
  detail::kineto_builder builder(t, stats);
  detail::stream_callbacks callbacks;
  callbacks.on_event = [&](od::object& obj) { builder.event(obj); };
  callbacks.on_top_level = [&](od::object& top) {
    try {
      read_top_level(top, builder, t);
    } catch (const bad_field& f) {
      builder.fail_field(std::string(f.path), f);
    }
  };
  stats.json_bytes = detail::stream_trace_events(src, source, callbacks, window);
  builder.finish();
}

std::string_view skip_ws(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

bool looks_like_trace_json(std::string_view text) {
  text = skip_ws(text);
  if (text.starts_with("["))
    return skip_ws(text.substr(1)).starts_with("{");
  if (!text.starts_with("{"))
    return false;
  for (const auto* key :
       {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\"", "\"displayTimeUnit\""})
    if (text.find(key) != std::string_view::npos)
      return true;
  return false;
}

} // namespace

bool sniff_kineto(std::span<const std::byte> head) noexcept {
  if (detail::is_gzip(head)) {
    char buf[4096];
    const auto n = detail::gunzip_prefix(head, buf, sizeof buf);
    return looks_like_trace_json({buf, n});
  }
  return looks_like_trace_json({reinterpret_cast<const char*>(head.data()), head.size()});
}

load_result import_kineto(std::span<const std::byte> bytes, std::string_view source,
                          const load_options& options, kineto_stats* stats_out,
                          std::size_t window) {
  kineto_stats stats;
  load_result out;
  out.trace.metadata.source_path = std::string(source);
  const auto t1 = clock_type::now();
  double inflate = 0;
  if (detail::is_gzip(bytes)) {
    stats.compressed_bytes = bytes.size();
    gzip_source src(bytes, source);
    parse_stream(src, source, out.trace, stats, window);
    inflate = src.seconds;
  } else {
    span_source src(bytes);
    parse_stream(src, source, out.trace, stats, window);
  }
  const auto t2 = clock_type::now();
  if (options.finalize)
    out.trace.finalize();
  const auto t3 = clock_type::now();
  // Inflation is interleaved with parsing (window by window); its share is timed apart.
  stats.inflate_seconds = inflate;
  stats.parse_seconds = std::chrono::duration<double>(t2 - t1).count() - inflate;
  stats.finalize_seconds = std::chrono::duration<double>(t3 - t2).count();
  out.trace.metadata.properties.emplace_back("kineto.events", fmt::format("{}", stats.events));
  if (stats.skipped_events != 0) {
    diagnostic w;
    w.level = severity::note;
    w.code = codes::kineto_skipped;
    w.title = "Kineto events skipped";
    w.message =
        fmt::format("{}: {} of {} events skipped (unknown phase or a flow without its other end)",
                    source, stats.skipped_events, stats.events);
    out.warnings.push_back(std::move(w));
  }
  if (stats_out)
    *stats_out = stats;
  return out;
}

load_result import_kineto_file(const std::filesystem::path& path, const load_options& options,
                               kineto_stats* stats) {
  // The one file reader: "-" and pipes, the memory budget, TDIAG-CORE-004 when unreadable.
  const std::string bytes = read_input_file(path);
  return import_kineto(std::as_bytes(std::span(bytes)), path.string(), options, stats);
}

importer kineto_importer() {
  return {"kineto-json", [](std::span<const std::byte> head) { return sniff_kineto(head); },
          [](const std::filesystem::path& path, const load_options& options) {
            return import_kineto_file(path, options);
          }};
}

} // namespace tdiag::trace
