// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/chrome_export.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

namespace tdiag::trace {
namespace {

[[noreturn]] void throw_export_error(std::string_view target, int err) {
  diagnostic d;
  d.code = codes::cannot_write_chrome;
  d.title = "cannot write Chrome trace";
  d.message = fmt::format("cannot write Chrome trace '{}'{}{}", target, err ? ": " : "",
                          err ? std::strerror(err) : "");
  d.add_field("path", std::string(target));
  d.hint = "check the output path, free disk space and permissions";
  throw error(std::move(d));
}

// Host memory (device -1) gets a pid no real device or process uses.
constexpr std::int64_t host_memory_pid = 0x7FFFFFF0;

class chrome_writer {
public:
  chrome_writer(const trace& t, std::FILE* out, std::string_view target)
      : t_(t), out_(out), target_(target), escaped_(t.strings.size()) {}

  // --- low-level output ---------------------------------------------------------------------
  void raw(std::string_view s) {
    buf_ += s;
    if (buf_.size() >= (1u << 20))
      flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size())
      throw_export_error(target_, errno);
    buf_.clear();
  }
  // A string id as a JSON literal, escaped once per id.
  const std::string& str(string_id id) {
    if (id >= escaped_.size())
      id = no_string;
    auto& e = escaped_[id];
    if (!e) {
      e.emplace();
      detail::append_json_string(*e, t_.strings.name(id));
    }
    return *e;
  }
  static std::string literal(std::string_view text) {
    std::string s;
    detail::append_json_string(s, text);
    return s;
  }
  static std::string ts(std::int64_t ns) {
    const bool negative = ns < 0;
    const std::uint64_t u =
        negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    return fmt::format("{}{}.{:03}", negative ? "-" : "", u / 1000, u % 1000);
  }
  static std::string dur(std::uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }
  void begin_event() {
    raw(first_ ? "\n" : ",\n");
    first_ = false;
  }

  // --- lanes --------------------------------------------------------------------------------
  std::int64_t pid(lane_id l) const {
    if (l >= t_.lanes.size())
      return 0;
    const auto& ln = t_.lanes.at(l);
    if (ln.kind == lane_kind::host_thread)
      return ln.group;
    return ln.group >= 0 ? ln.group : host_memory_pid;
  }
  std::uint64_t tid(lane_id l) const {
    if (l >= t_.lanes.size())
      return 0;
    const auto& ln = t_.lanes.at(l);
    return ln.kind == lane_kind::device_memory ? 0 : ln.id;
  }
  std::string where(lane_id l) { return fmt::format("\"pid\":{},\"tid\":{}", pid(l), tid(l)); }

  void metadata(chrome_export_stats& stats) {
    std::set<std::int64_t> named;
    for (lane_id l = 0; l < t_.lanes.size(); ++l) {
      const auto& ln = t_.lanes.at(l);
      const std::int64_t p = pid(l);
      if (named.insert(p).second) {
        std::string name;
        if (ln.kind == lane_kind::host_thread)
          name = fmt::format("Process {}", ln.group);
        else
          name = ln.group >= 0 ? fmt::format("GPU {}", ln.group) : std::string("Host memory");
        begin_event();
        raw(fmt::format("{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":{}"
                        "}}}}",
                        p, literal(name)));
        begin_event();
        // GPUs above host processes, as Perfetto users expect from Kineto traces.
        raw(fmt::format("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{"
                        "\"sort_index\":{}}}}}",
                        p, ln.kind == lane_kind::host_thread ? 1000 + l : l));
        stats.metadata += 2;
      }
      if (ln.kind == lane_kind::device_memory)
        continue;
      std::string name = ln.name != no_string               ? std::string(t_.name(ln.name))
                         : ln.kind == lane_kind::gpu_stream ? fmt::format("stream {}", ln.id)
                                                            : fmt::format("thread {}", ln.id);
      begin_event();
      raw(fmt::format("{{\"name\":\"thread_name\",\"ph\":\"M\",{},\"args\":{{\"name\":{}}}}}",
                      where(l), literal(name)));
      ++stats.metadata;
    }
  }

  // --- events -------------------------------------------------------------------------------
  template <typename Record>
  void complete(std::string_view cat, string_id name, const Record& r, std::string_view args) {
    begin_event();
    raw(fmt::format("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},{},\"ts\":{},\"dur\":{}", cat,
                    str(name), where(r.lane), ts(r.start), dur(duration_of(r))));
    if (!args.empty())
      raw(fmt::format(",\"args\":{{{}}}", args));
    raw("}");
  }
  void instant(std::string_view cat, std::string_view name_json, lane_id l, std::int64_t time,
               std::string_view args) {
    begin_event();
    raw(fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"{}\",\"name\":{},{},\"ts\":{}", cat,
                    name_json, where(l), ts(time)));
    if (!args.empty())
      raw(fmt::format(",\"args\":{{{}}}", args));
    raw("}");
  }

  void write(const chrome_export_options& options, chrome_export_stats& stats) {
    raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{");
    raw(fmt::format("\"format\":{},\"source\":{},\"time_origin_ns\":{},\"dropped_records\":{}",
                    literal(t_.metadata.format), literal(t_.metadata.source_path),
                    t_.metadata.time_origin_ns, t_.metadata.dropped_records));
    raw("},\"traceEvents\":[");
    metadata(stats);

    for (const auto& k : t_.kernels.all()) {
      std::string args = fmt::format(
          "\"device\":{},\"context\":{},\"stream\":{},\"correlation\":{},\"registers per "
          "thread\":{},\"shared memory\":{},\"static shared memory\":{},\"dynamic shared "
          "memory\":{},\"grid\":[{},{},{}],\"block\":[{},{},{}]",
          k.device, k.context, k.stream, k.correlation, k.registers,
          std::uint64_t{k.shared_static} + k.shared_dynamic, k.shared_static, k.shared_dynamic,
          k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]);
      if (k.launch_id != 0)
        args += fmt::format(",\"tensordiag launch id\":{}", k.launch_id);
      complete("kernel", k.name, k, args);
      ++stats.kernels;
    }
    for (const auto& c : t_.copies.all()) {
      static constexpr const char* kinds[] = {"Unknown", "HtoD", "DtoH",  "DtoD",
                                              "HtoH",    "PtoP", "Memset"};
      const auto kind_index = static_cast<std::size_t>(c.kind);
      const char* kind = kind_index < std::size(kinds) ? kinds[kind_index] : "Unknown";
      string_id name = c.name;
      std::string fallback;
      const bool memset = c.kind == copy_kind::memset;
      const std::string args = fmt::format(
          "\"device\":{},\"context\":{},\"stream\":{},\"correlation\":{},\"bytes\":{},\"kind\":"
          "\"{}\"",
          c.device, c.context, c.stream, c.correlation, c.bytes, kind);
      if (name == no_string) {
        begin_event();
        raw(fmt::format("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},{},\"ts\":{},\"dur\":{},"
                        "\"args\":{{{}}}}}",
                        memset ? "gpu_memset" : "gpu_memcpy",
                        literal(memset ? "Memset" : fmt::format("Memcpy {}", kind)), where(c.lane),
                        ts(c.start), dur(duration_of(c)), args));
      } else {
        complete(memset ? "gpu_memset" : "gpu_memcpy", name, c, args);
      }
      ++stats.copies;
    }
    if (options.api_calls)
      for (const auto& a : t_.api_calls.all()) {
        static constexpr const char* cats[] = {"cuda_runtime", "cuda_driver", "cpu_op",
                                               "python_function", "other"};
        const auto ci = static_cast<std::size_t>(a.kind);
        std::string args;
        if (a.correlation != 0)
          args = fmt::format("\"correlation\":{}", a.correlation);
        if (a.cbid != 0)
          args += fmt::format("{}\"cbid\":{}", args.empty() ? "" : ",", a.cbid);
        complete(ci < std::size(cats) ? cats[ci] : "other", a.name, a, args);
        ++stats.api_calls;
      }
    for (const auto& r : t_.ranges.all()) {
      static constexpr const char* cats[] = {"user_annotation", "gpu_user_annotation",
                                             "user_annotation", "annotation", "other"};
      const auto ci = static_cast<std::size_t>(r.kind);
      complete(ci < std::size(cats) ? cats[ci] : "other", r.name, r, {});
      ++stats.ranges;
    }
    for (const auto& m : t_.markers.all()) {
      instant(m.category != no_string ? "marker" : "marker", str(m.name), m.lane, m.time,
              m.category != no_string ? fmt::format("\"category\":{}", str(m.category)) : "");
      ++stats.instants;
    }
    for (const auto& a : t_.assertions.all()) {
      std::string args = fmt::format(
          "\"site\":{},\"block\":[{},{},{}],\"thread\":[{},{},{}],\"device\":{},\"launch id\":{}",
          str(a.site), a.block[0], a.block[1], a.block[2], a.thread[0], a.thread[1], a.thread[2],
          a.device, a.launch_id);
      if (a.message != no_string)
        args += fmt::format(",\"message\":{}", str(a.message));
      instant("assertion", literal(fmt::format("assertion failed: {}", t_.name(a.site))), a.lane,
              a.time, args);
      ++stats.instants;
    }
    if (options.flows) {
      std::uint64_t synthetic_id = std::uint64_t{1} << 40;
      for (const auto& f : t_.flows.all()) {
        const std::uint64_t id = f.correlation != 0 ? f.correlation : synthetic_id++;
        begin_event();
        raw(fmt::format(
            "{{\"ph\":\"s\",\"id\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\",{},\"ts\":{}}}", id,
            where(f.lane), ts(f.time)));
        begin_event();
        raw(fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\","
                        "{},\"ts\":{}}}",
                        id, where(f.target_lane), ts(f.target_time)));
        ++stats.flows;
      }
    }
    memory(options, stats);
    for (const auto& c : t_.counters.all()) {
      if (!std::isfinite(c.value))
        continue;
      begin_event();
      raw(fmt::format("{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"ts\":{},\"args\":{{\"value\":{}}}}}",
                      str(c.name), pid(c.lane), ts(c.time), detail::format_json_double(c.value)));
      ++stats.counters;
    }
    raw("\n]}\n");
    flush();
  }

  // Allocated / reserved bytes per device, from the events' totals when the source has them
  // (Kineto), else by replaying allocations and segments.
  void memory(const chrome_export_options& options, chrome_export_stats& stats) {
    std::unordered_map<lane_id, std::vector<const memory_event*>> by_lane;
    for (const auto& m : t_.memory.all())
      by_lane[m.lane].push_back(&m);
    for (auto& [lane, events] : by_lane) {
      std::stable_sort(
          events.begin(), events.end(),
          [](const memory_event* a, const memory_event* b) { return a->time < b->time; });
      // Unsigned, wrapping arithmetic: hostile sizes must not overflow a signed sum.
      std::uint64_t allocated = 0;
      std::uint64_t reserved = 0;
      std::unordered_map<std::uint64_t, std::uint64_t> live;
      for (const memory_event* e : events) {
        const std::uint64_t size = e->size;
        switch (e->action) {
        case memory_action::alloc:
          allocated += size;
          live[e->address] = size;
          break;
        case memory_action::free_completed: {
          auto it = live.find(e->address);
          allocated -= size != 0 ? size : it != live.end() ? it->second : 0;
          if (it != live.end())
            live.erase(it);
          break;
        }
        case memory_action::segment_alloc:
        case memory_action::segment_map:
          reserved += size;
          break;
        case memory_action::segment_free:
        case memory_action::segment_unmap:
          reserved -= size;
          break;
        case memory_action::oom:
          instant("memory", literal("out of memory"), lane, e->time,
                  fmt::format("\"requested bytes\":{},\"device free bytes\":{}", e->size,
                              e->device_free));
          ++stats.instants;
          break;
        case memory_action::snapshot:
          instant("memory", literal("snapshot"), lane, e->time, {});
          ++stats.instants;
          break;
        default:
          break;
        }
        if (e->total_allocated >= 0)
          allocated = static_cast<std::uint64_t>(e->total_allocated);
        if (e->total_reserved >= 0)
          reserved = static_cast<std::uint64_t>(e->total_reserved);
        if (!options.memory_counters)
          continue;
        begin_event();
        raw(fmt::format("{{\"ph\":\"C\",\"name\":\"Memory\",\"pid\":{},\"ts\":{},\"args\":{{"
                        "\"allocated\":{},\"reserved\":{}}}}}",
                        pid(lane), ts(e->time), static_cast<std::int64_t>(allocated),
                        static_cast<std::int64_t>(reserved)));
        ++stats.counters;
      }
    }
  }

private:
  const trace& t_;
  std::FILE* out_;
  std::string target_;
  std::vector<std::optional<std::string>> escaped_;
  std::string buf_;
  bool first_ = true;
};

} // namespace

chrome_export_stats write_chrome_trace(const trace& t, std::FILE* out,
                                       const chrome_export_options& options) {
  chrome_export_stats stats;
  chrome_writer w(t, out, "<stream>");
  w.write(options, stats);
  if (std::fflush(out) != 0)
    throw_export_error("<stream>", errno);
  return stats;
}

chrome_export_stats write_chrome_trace(const trace& t, const std::filesystem::path& path,
                                       const chrome_export_options& options) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out)
    throw_export_error(path.string(), errno);
  chrome_export_stats stats;
  try {
    chrome_writer w(t, out, path.string());
    w.write(options, stats);
  } catch (...) {
    std::fclose(out);
    throw;
  }
  if (std::fclose(out) != 0)
    throw_export_error(path.string(), errno);
  return stats;
}

} // namespace tdiag::trace
