// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/chrome_export.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/event_fields.hpp>

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
      : t_(t), file_(out), target_(target), escaped_(t.strings.size()) {}

  void write(const chrome_export_options& options, chrome_export_stats& stats) {
    out_.begin_object();
    out_.member("displayTimeUnit", "ns");
    out_.key("otherData");
    out_.begin_object();
    out_.member("format", t_.metadata.format);
    out_.member("source", t_.metadata.source_path);
    out_.member("time_origin_ns", t_.metadata.time_origin_ns);
    out_.key("dropped_records");
    out_.unsigned_integer(t_.metadata.dropped_records);
    out_.end_object();
    out_.key("traceEvents");
    out_.begin_array();
    metadata(stats);
    kernels(stats);
    copies(stats);
    if (options.api_calls)
      api_calls(stats);
    ranges_and_instants(stats);
    if (options.flows)
      flows(stats);
    memory(options, stats);
    counters(stats);
    out_.line_break();
    out_.end_array();
    out_.end_object();
    out_.line_break();
    const std::string rest = out_.take();
    store(rest);
  }

private:
  // --- low-level output ---------------------------------------------------------------------
  void store(std::string_view bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
      throw_export_error(target_, errno);
  }
  // Called between events: the document streams out in pieces of about 1 MiB.
  void maybe_flush() {
    if (out_.written().size() >= (1u << 20)) {
      store(out_.written());
      out_.discard_written();
    }
  }
  // A string id as a JSON literal, escaped once per id.
  const std::string& str(string_id id) {
    if (id >= escaped_.size())
      id = no_string;
    auto& e = escaped_[id];
    if (!e) {
      e.emplace();
      tdiag::detail::append_json_string(*e, t_.strings.name(id));
    }
    return *e;
  }
  void name(string_id id) {
    out_.key("name");
    out_.raw(str(id));
  }
  // Microseconds with three decimals: nanoseconds exactly, as Chrome's "ts" and "dur" expect.
  void ts(std::int64_t ns) {
    const bool negative = ns < 0;
    const std::uint64_t u =
        negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    microseconds("ts", negative ? "-" : "", u);
  }
  void dur(std::uint64_t ns) { microseconds("dur", "", ns); }
  void microseconds(std::string_view key, std::string_view sign, std::uint64_t ns) {
    char text[32];
    const auto end = fmt::format_to_n(text, sizeof text, "{}{}.{:03}", sign, ns / 1000, ns % 1000);
    out_.key(key);
    out_.raw(std::string_view(text, end.out - text));
  }
  void uint(std::string_view key, std::uint64_t v) {
    out_.key(key);
    out_.unsigned_integer(v);
  }
  void begin_event(std::string_view ph) {
    maybe_flush();
    out_.line_break();
    out_.begin_object();
    out_.member("ph", ph);
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
  void where(lane_id l) {
    out_.member("pid", pid(l));
    uint("tid", tid(l));
  }
  void metadata_event(std::string_view what, std::int64_t pid, const lane_id* lane) {
    maybe_flush();
    out_.line_break();
    out_.begin_object();
    out_.member("name", what);
    out_.member("ph", "M");
    if (lane != nullptr)
      where(*lane);
    else
      out_.member("pid", pid);
    out_.key("args");
    out_.begin_object();
  }

  void metadata(chrome_export_stats& stats) {
    std::set<std::int64_t> named;
    for (lane_id l = 0; l < t_.lanes.size(); ++l) {
      const auto& ln = t_.lanes.at(l);
      const std::int64_t p = pid(l);
      if (named.insert(p).second) {
        metadata_event("process_name", p, nullptr);
        out_.member("name", ln.kind == lane_kind::host_thread ? fmt::format("Process {}", ln.group)
                            : ln.group >= 0                   ? fmt::format("GPU {}", ln.group)
                                                              : std::string("Host memory"));
        out_.end_object();
        out_.end_object();
        // GPUs above host processes, as Perfetto users expect from Kineto traces.
        metadata_event("process_sort_index", p, nullptr);
        uint("sort_index", ln.kind == lane_kind::host_thread ? 1000 + l : l);
        out_.end_object();
        out_.end_object();
        stats.metadata += 2;
      }
      if (ln.kind == lane_kind::device_memory)
        continue;
      metadata_event("thread_name", p, &l);
      out_.member("name", ln.name != no_string               ? std::string(t_.name(ln.name))
                          : ln.kind == lane_kind::gpu_stream ? fmt::format("stream {}", ln.id)
                                                             : fmt::format("thread {}", ln.id));
      out_.end_object();
      out_.end_object();
      ++stats.metadata;
    }
  }

  // --- events -------------------------------------------------------------------------------
  // An "X" event, its "args" still to come (args()).
  template <typename Record>
  void begin_complete(std::string_view cat, string_id event_name, const Record& r) {
    begin_event("X");
    out_.member("cat", cat);
    name(event_name);
    where(r.lane);
    ts(r.start);
    dur(duration_of(r));
  }
  // An "i" event, its "args" still to come (args()).
  void begin_instant(std::string_view cat, string_id event_name, std::string_view literal_name,
                     lane_id l, std::int64_t time) {
    begin_event("i");
    out_.member("s", "t");
    out_.member("cat", cat);
    if (event_name != no_string)
      name(event_name);
    else
      out_.member("name", literal_name);
    where(l);
    ts(time);
  }

  // Ends the event with its "args": the fields event_fields<Record> marks for Chrome, in table
  // order, then what `extra(key)` adds (derived values; `key(name)` opens each); without any,
  // the event has no "args".
  template <typename Record, typename Extra> void args(const Record& r, Extra&& extra) {
    bool open = false;
    auto key = [&](std::string_view k) {
      if (!open) {
        out_.key("args");
        out_.begin_object();
        open = true;
      }
      out_.key(k);
    };
    for_each_event_field<Record>([&](const field_info&, auto index) {
      constexpr field_info f = event_fields<Record>[decltype(index)::value];
      if constexpr (f.chrome != chrome_arg::none) {
        const auto v = read_field<Record, decltype(index)::value>(r);
        if constexpr (f.count > 1) {
          key(f.chrome_name);
          out_.begin_array();
          for (std::size_t e = 0; e < f.count; ++e)
            out_.unsigned_integer(read_field<Record, decltype(index)::value>(r, e));
          out_.end_array();
        } else if constexpr (f.is_float()) {
          if (f.chrome != chrome_arg::positive || (v > 0 && std::isfinite(v)))
            key(f.chrome_name), out_.number(static_cast<double>(v));
        } else if (f.chrome != chrome_arg::nonzero || v != 0) {
          key(f.chrome_name);
          if constexpr (f.unit == field_unit::string_ref)
            out_.raw(str(v));
          else if constexpr (f.is_signed())
            out_.integer(v);
          else
            out_.unsigned_integer(v);
        }
      }
    });
    extra(key);
    if (open)
      out_.end_object();
    out_.end_object();
  }
  template <typename Record> void args(const Record& r) {
    args(r, [](auto&&) {});
  }

  void kernels(chrome_export_stats& stats) {
    for (const auto& k : t_.kernels.all()) {
      begin_complete("kernel", k.name, k);
      args(k, [&](auto&& key) {
        key("shared memory");
        out_.unsigned_integer(std::uint64_t{k.shared_static} + k.shared_dynamic);
      });
      ++stats.kernels;
    }
  }

  void copies(chrome_export_stats& stats) {
    static constexpr const char* kinds[] = {"Unknown", "HtoD", "DtoH",  "DtoD",
                                            "HtoH",    "PtoP", "Memset"};
    for (const auto& c : t_.copies.all()) {
      const auto kind_index = static_cast<std::size_t>(c.kind);
      const char* kind = kind_index < std::size(kinds) ? kinds[kind_index] : "Unknown";
      const bool memset = c.kind == copy_kind::memset;
      begin_event("X");
      out_.member("cat", memset ? "gpu_memset" : "gpu_memcpy");
      if (c.name != no_string)
        name(c.name);
      else
        out_.member("name", memset ? std::string("Memset") : fmt::format("Memcpy {}", kind));
      where(c.lane);
      ts(c.start);
      dur(duration_of(c));
      args(c, [&](auto&& key) { key("kind"), out_.string(kind); });
      ++stats.copies;
    }
  }

  void api_calls(chrome_export_stats& stats) {
    static constexpr const char* cats[] = {"cuda_runtime", "cuda_driver", "cpu_op",
                                           "python_function", "other"};
    for (const auto& a : t_.api_calls.all()) {
      const auto ci = static_cast<std::size_t>(a.kind);
      begin_complete(ci < std::size(cats) ? cats[ci] : "other", a.name, a);
      args(a);
      ++stats.api_calls;
    }
  }

  void ranges_and_instants(chrome_export_stats& stats) {
    static constexpr const char* cats[] = {"user_annotation", "gpu_user_annotation",
                                           "user_annotation", "annotation", "other"};
    for (const auto& r : t_.ranges.all()) {
      const auto ci = static_cast<std::size_t>(r.kind);
      begin_complete(ci < std::size(cats) ? cats[ci] : "other", r.name, r);
      args(r);
      ++stats.ranges;
    }
    for (const auto& m : t_.markers.all()) {
      begin_instant("marker", m.name, {}, m.lane, m.time);
      args(m);
      ++stats.instants;
    }
    for (const auto& a : t_.assertions.all()) {
      begin_instant("assertion", no_string, fmt::format("assertion failed: {}", t_.name(a.site)),
                    a.lane, a.time);
      args(a);
      ++stats.instants;
    }
  }

  void flows(chrome_export_stats& stats) {
    std::uint64_t synthetic_id = std::uint64_t{1} << 40;
    for (const auto& f : t_.flows.all()) {
      const std::uint64_t id = f.correlation != 0 ? f.correlation : synthetic_id++;
      begin_event("s");
      uint("id", id);
      out_.member("cat", "ac2g");
      out_.member("name", "ac2g");
      where(f.lane);
      ts(f.time);
      out_.end_object();
      begin_event("f");
      out_.member("bp", "e");
      uint("id", id);
      out_.member("cat", "ac2g");
      out_.member("name", "ac2g");
      where(f.target_lane);
      ts(f.target_time);
      out_.end_object();
      ++stats.flows;
    }
  }

  void counters(chrome_export_stats& stats) {
    for (const auto& c : t_.counters.all()) {
      if (!std::isfinite(c.value))
        continue;
      begin_event("C");
      name(c.name);
      out_.member("pid", pid(c.lane));
      ts(c.time);
      out_.key("args");
      out_.begin_object();
      out_.key("value");
      out_.number(c.value);
      out_.end_object();
      out_.end_object();
      ++stats.counters;
    }
  }

  void memory_counter(lane_id lane, std::int64_t time, std::uint64_t allocated,
                      std::uint64_t reserved) {
    begin_event("C");
    out_.member("name", "Memory");
    out_.member("pid", pid(lane));
    ts(time);
    out_.key("args");
    out_.begin_object();
    out_.member("allocated", static_cast<std::int64_t>(allocated));
    out_.member("reserved", static_cast<std::int64_t>(reserved));
    out_.end_object();
    out_.end_object();
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
          begin_instant("memory", no_string, "out of memory", lane, e->time);
          out_.key("args");
          out_.begin_object();
          uint("requested bytes", e->size);
          uint("device free bytes", t_.detail_of(*e).device_free);
          out_.end_object();
          out_.end_object();
          ++stats.instants;
          break;
        case memory_action::snapshot:
          begin_instant("memory", no_string, "snapshot", lane, e->time);
          out_.end_object();
          ++stats.instants;
          break;
        default:
          break;
        }
        const auto& d = t_.detail_of(*e);
        if (d.total_allocated >= 0)
          allocated = static_cast<std::uint64_t>(d.total_allocated);
        if (d.total_reserved >= 0)
          reserved = static_cast<std::uint64_t>(d.total_reserved);
        if (!options.memory_counters)
          continue;
        memory_counter(lane, e->time, allocated, reserved);
        ++stats.counters;
      }
    }
  }

  const trace& t_;
  std::FILE* file_;
  std::string target_;
  std::vector<std::optional<std::string>> escaped_;
  tdiag::detail::json_out out_{tdiag::detail::json_style::compact};
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
