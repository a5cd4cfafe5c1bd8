// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Kineto event loop: one traceEvents element at a time into the trace's stores.
#include "kineto_builder.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>
#include <tuple>

#include "import_budget.hpp"

namespace tdiag::trace::detail {

namespace {

// Kineto before 2021-06 named the categories in capitals, and its launch flows "async".
std::string_view current_category(std::string_view cat) {
  if (cat.empty() || cat[0] < 'A' || cat[0] > 'Z')
    return cat;
  if (cat == "Kernel")
    return "kernel";
  if (cat == "Memcpy")
    return "gpu_memcpy";
  if (cat == "Memset")
    return "gpu_memset";
  if (cat == "Runtime")
    return "cuda_runtime";
  if (cat == "Operator")
    return "cpu_op";
  if (cat == "Python")
    return "python_function";
  return cat;
}

// A GPU track's tid: the stream number, also where Kineto 2021 wrote "stream 7".
std::optional<std::uint64_t> stream_in_text(const track_key& tid) {
  constexpr std::string_view prefix = "stream ";
  if (!tid.is_text || !tid.text.starts_with(prefix))
    return std::nullopt;
  std::uint64_t n = 0;
  const auto digits = tid.text.substr(prefix.size());
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || ptr != digits.data() + digits.size())
    return std::nullopt;
  return n;
}

std::int64_t as_duration(const time_value& t) {
  return clamp_time(wide_int{t.us} * 1000 + t.frac_ns);
}

// ts and dur must be numbers (a string whose whole text is one counts): NaN, Infinity or
// "12 us" is an error, never 0.
time_value require_time(od::value v, std::string_view field, text_numbers& seen) {
  if (auto t = read_time(v, field, seen))
    return *t;
  throw bad_field{field, std::string(token_text(v)), "a finite JSON number of microseconds"};
}

} // namespace

kineto_builder::kineto_builder(trace& t, kineto_stats& stats, const byte_source& input)
    : t_(t), stats_(stats), input_(input) {
  t_.metadata.format = "kineto-json";
}

void kineto_builder::event(od::object& obj, std::uint64_t parsed) {
  const auto index = stats_.events;
  try {
    read_event(obj);
  } catch (const bad_field& f) {
    fail_field(fmt::format("traceEvents[{}].{}", index, f.path), f);
  }
  if (numbers_.count != 0 && stats_.first_text_number.empty())
    stats_.first_text_number = fmt::format("traceEvents[{}].{}", index, numbers_.first_path);
  // A 62 MB gzip can hold 20 GiB of events: the model, extrapolated from the share of the input
  // read, must fit the memory budget.
  if ((stats_.events & 0xFFFF) == 0) {
    import_progress p;
    p.code = codes::kineto_too_large;
    p.title = "Kineto trace needs more memory than is available";
    p.file = t_.metadata.source_path;
    p.events_counted = stats_.events;
    p.share_read = input_.share_read(parsed);
    p.bytes_so_far = t_.memory_bytes();
    check_import_budget(p);
  }
}

void kineto_builder::fail_field(const std::string& path, const bad_field& f) const {
  throw_input_error(
      codes::kineto_bad_number, "Kineto field is not a number",
      fmt::format("{}: {}: expected {}, got {}", t_.metadata.source_path, path, f.expected,
                  what_was_written(f)),
      "write times, ids and sizes as plain JSON numbers, as the PyTorch profiler does",
      {{"file", t_.metadata.source_path}, {"path", path}});
}

void kineto_builder::finish() {
  // A thread_name names the host thread and the GPU stream of its (pid, tid), if they exist:
  // one look-up each, so 250k names over 250k lanes stay linear (log).
  for (const auto& [key, name] : thread_names_) {
    const auto id = static_cast<std::uint64_t>(key.second);
    for (const auto l : {t_.lanes.find_host(key.first, id), t_.lanes.find_gpu(key.first, id)})
      if (l != no_lane)
        t_.lanes.set_name(l, name);
  }
  // An end whose partner never came draws no arrow: it carried nothing else.
  stats_.unpaired_flows += pending_flows_.size();
  stats_.skipped_events += pending_flows_.size();
  stats_.text_numbers = numbers_.count;
  t_.metadata.time_origin_ns = clamp_i64(wide_int{base_ns_} + wide_int{rebase_us_} * 1000);
  if (rebase_us_ != 0)
    t_.metadata.properties.emplace_back("kineto.ts_rebase_us", fmt::format("{}", rebase_us_));
}

void kineto_builder::read_event(od::object& obj) {
  std::string_view ph, cat, name;
  time_value ts, dur;
  bool has_ts = false, has_dur = false;
  std::uint64_t id = 0;
  bool has_id = false;
  track_key pid, tid;
  event_args args;
  std::string_view deferred_args;
  for_each_field(obj, [&](od::raw_json_string key, od::value v) {
    switch (key.raw()[0]) {
    case 'p':
      if (key == "ph")
        ph = read_string(v, "ph");
      else if (key == "pid")
        pid = read_track(v, "pid");
      break;
    case 'c':
      if (key == "cat")
        cat = read_string(v, "cat");
      break;
    case 'n':
      if (key == "name")
        name = read_string(v, "name");
      break;
    case 't':
      if (key == "ts") {
        ts = require_time(v, "ts", numbers_);
        has_ts = true;
      } else if (key == "tid")
        tid = read_track(v, "tid");
      break;
    case 'd':
      if (key == "dur") {
        dur = require_time(v, "dur", numbers_);
        has_dur = true;
      }
      break;
    case 'i':
      if (key == "id") {
        id = read_u64(v, "id", numbers_);
        has_id = true;
      }
      break;
    case 'a':
      if (key == "args" && !take(v.is_null())) {
        od::object a = read_object(v, "args");
        if (ph == "C")
          read_counter_args(a, args, numbers_);
        else if (!ph.empty())
          read_args(a, args, numbers_);
        else
          deferred_args = take(a.raw_json()); // args before "ph": parse later (rare)
      }
      break;
    default:
      break;
    }
  });
  if (!deferred_args.empty())
    reparse_args(deferred_args, ph == "C", args);
  ++stats_.events;
  if (ts.fractional && !fractional_ts_) {
    fractional_ts_ = true;
    t_.metadata.properties.emplace_back("kineto.fractional_ts", "1");
  }
  if (ph.size() != 1) {
    skip_phase(ph);
    return;
  }
  // An event without its time is skipped and counted, never put at 0 (metadata has none).
  if (!has_ts && ph[0] != 'M') {
    skip(stats_.missing_ts_events);
    return;
  }
  const auto on = on_axis(ts);
  if (!on && ph[0] != 'M') {
    skip(stats_.ts_out_of_range_events);
    return;
  }
  const auto start = on.value_or(0);
  const auto length = as_duration(dur);
  // Within the model's +-2^60 ns, as the start is: job offsets are added to both.
  const auto end = clamp_time(wide_int{start} + std::max<std::int64_t>(0, length));
  switch (ph[0]) {
  case 'X':
    // Kept with duration 0, and said: a kernel without its time would read as an idle GPU.
    if (!has_dur)
      ++stats_.missing_durations;
    else if (length < 0)
      ++stats_.negative_durations;
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
    skip_phase(ph);
    break;
  }
}

void kineto_builder::skip(std::size_t& reason) {
  ++stats_.skipped_events;
  ++reason;
}

void kineto_builder::skip_phase(std::string_view ph) {
  skip(stats_.unknown_phase_events);
  // The distinct phases, as written (a handful in any real trace; bounded for hostile ones).
  const auto shown = printable(ph, 8);
  if (known_phases_.size() < 16 && known_phases_.insert(shown).second)
    stats_.unknown_phases += (stats_.unknown_phases.empty() ? "'" : ", '") + shown + "'";
}

// Epoch-microsecond timestamps (1.7e15 us) exceed the model's +-2^60 ns: past 2^48 us (9
// years) the axis starts at the whole us of the first such ts, and time_origin_ns says so.
// Empty past the model's +-2^60 ns (36 years) from there: such a time is not clamped onto the
// axis' edge, where it would stretch the span; the event is skipped and counted.
std::optional<std::int64_t> kineto_builder::on_axis(const time_value& t) {
  if (!rebased_ && (t.us > (std::int64_t{1} << 48) || t.us < -(std::int64_t{1} << 48))) {
    rebased_ = true;
    rebase_us_ = t.us;
    if (placed_)
      move_placed_onto_axis();
  }
  const wide_int ns = (wide_int{t.us} - rebase_us_) * 1000 + t.frac_ns;
  if (ns > time_limit || ns < -time_limit)
    return std::nullopt;
  placed_ = true;
  return static_cast<std::int64_t>(ns);
}

namespace {

// `r`'s times moved by -shift ns, or false where one would leave the model's +-2^60 ns.
template <typename Record> bool shifted(Record& r, wide_int shift) noexcept {
  bool ok = true;
  auto move = [&](std::int64_t& time) {
    const wide_int ns = wide_int{time} - shift;
    ok = ok && ns <= time_limit && ns >= -time_limit;
    time = static_cast<std::int64_t>(ok ? ns : 0);
  };
  if constexpr (requires { r.start; })
    move(r.start), move(r.end);
  else
    move(r.time);
  if constexpr (requires { r.target_time; })
    move(r.target_time);
  return ok;
}

} // namespace

// The axis moved to the first epoch-like ts after events were placed from 0: they move onto
// it, and those it leaves past +-2^60 ns are skipped and counted as such a ts is when it comes
// later. Where an event sits in the file does not decide whether it is kept.
void kineto_builder::move_placed_onto_axis() {
  const wide_int shift = wide_int{rebase_us_} * 1000;
  // Sync waits name their range by index: renumbered to the ranges kept, dropped with theirs.
  std::vector<std::uint32_t> range_index(t_.ranges.size(), trace::dropped_range);
  std::uint32_t kept_ranges = 0;
  for (std::size_t i = 0; i < range_index.size(); ++i) {
    auto copy = t_.ranges[i];
    if (shifted(copy, shift))
      range_index[i] = kept_ranges++;
  }
  t_.move_sync_waits(range_index);
  std::size_t dropped = 0;
  t_.for_each_store([&](auto& store) {
    const auto before = store.size();
    store.keep_if(
        [&](const auto& r) {
          auto copy = r;
          return shifted(copy, shift);
        },
        [&](auto& r) { (void)shifted(r, shift); });
    dropped += before - store.size();
  });
  // A flow waiting for its other end holds the time of the end it has.
  for (auto it = pending_flows_.begin(); it != pending_flows_.end();) {
    auto& f = it->second;
    marker_event end; // a record with one `time`
    bool ok = true;
    for (auto [has, time] :
         {std::pair{f.has_start, &f.flow.time}, std::pair{f.has_end, &f.flow.target_time}})
      if (has) {
        end.time = *time;
        ok = ok && shifted(end, shift);
        *time = end.time;
      }
    if (ok) {
      ++it;
    } else {
      ++dropped;
      it = pending_flows_.erase(it);
    }
  }
  for (std::size_t i = 0; i < dropped; ++i)
    skip(stats_.ts_out_of_range_events);
}

std::int64_t kineto_builder::track_number(const track_key& k) {
  if (!k.is_text)
    return k.number;
  // String pids/tids ("Spans", "Traces") become stable negative ids below -1.
  return -2 - static_cast<std::int64_t>(t_.strings.intern(k.text));
}

lane_id kineto_builder::host_lane(const track_key& pid, const track_key& tid) {
  const auto p = track_number(pid), t = track_number(tid);
  if (p == last_host_.first && t == last_host_.second)
    return last_host_lane_;
  last_host_ = {p, t};
  last_host_lane_ = t_.lanes.host(p, static_cast<std::uint64_t>(t));
  return last_host_lane_;
}

lane_id kineto_builder::gpu_lane(std::int64_t device, std::uint64_t stream) {
  if (device == last_gpu_.first && stream == last_gpu_.second)
    return last_gpu_lane_;
  last_gpu_ = {device, stream};
  last_gpu_lane_ = t_.lanes.gpu(device, stream);
  return last_gpu_lane_;
}

std::optional<std::int32_t> kineto_builder::device_number(std::int64_t device) {
  if (device < INT32_MIN || device > INT32_MAX) {
    skip(stats_.bad_device_events); // never truncated onto another device
    return std::nullopt;
  }
  return static_cast<std::int32_t>(device);
}

std::optional<std::tuple<std::int32_t, std::uint64_t, lane_id>>
kineto_builder::gpu_place(const event_args& a, const track_key& pid, const track_key& tid) {
  const auto device = device_number(a.has_device ? a.device : track_number(pid));
  if (!device)
    return std::nullopt;
  const auto stream = a.has_stream ? a.stream : gpu_stream(tid);
  return std::tuple{*device, stream, gpu_lane(*device, stream)};
}

std::uint64_t kineto_builder::gpu_stream(const track_key& tid) {
  if (const auto n = stream_in_text(tid))
    return *n;
  return static_cast<std::uint64_t>(track_number(tid));
}

void kineto_builder::complete(std::string_view written_cat, std::string_view name,
                              std::int64_t start, std::int64_t end, const track_key& pid,
                              const track_key& tid, const event_args& a) {
  const auto cat = current_category(written_cat);
  const bool is_memset = cat == "gpu_memset";
  // Stream/Event/Context syncs too: the GPU waits; HTA counts them as GPU rows of their stream.
  const bool gpu_row = cat == "kernel" || is_memset || cat == "gpu_memcpy" || cat == "cuda_sync";
  const auto place = gpu_row ? gpu_place(a, pid, tid) : std::nullopt;
  if (gpu_row && !place)
    return;
  if (cat == "kernel") {
    a.check_dims();
    kernel_event k;
    k.start = start;
    k.end = end;
    std::tie(k.device, k.stream, k.lane) = *place;
    k.name = intern(name);
    k.context = static_cast<std::uint32_t>(a.context);
    std::memcpy(k.grid, a.grid, sizeof k.grid);
    std::memcpy(k.block, a.block, sizeof k.block);
    k.shared_static = static_cast<std::uint32_t>(a.shared_memory); // Kineto gives the total
    k.registers = static_cast<std::uint32_t>(a.registers);
    k.correlation = static_cast<std::uint32_t>(a.correlation);
    keep_collective(a, t_);
    t_.kernels.push_back(k);
  } else if (is_memset || cat == "gpu_memcpy") {
    copy_event c;
    c.start = start;
    c.end = end;
    std::tie(c.device, c.stream, c.lane) = *place;
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
    range_event r;
    r.start = start;
    r.end = end;
    r.lane = std::get<2>(*place);
    r.name = intern(name);
    r.kind = range_kind::gpu_sync;
    r.correlation = static_cast<std::uint32_t>(a.correlation);
    keep_sync_wait(a, t_);
    t_.ranges.push_back(r);
  } else if (cat == "gpu_user_annotation") {
    range_event r;
    r.start = start;
    r.end = end;
    const auto device = device_number(track_number(pid));
    if (!device)
      return;
    r.lane = gpu_lane(*device, gpu_stream(tid));
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

void kineto_builder::instant(std::string_view cat, std::string_view name, std::int64_t time,
                             const track_key& pid, const track_key& tid, const event_args& a) {
  if (name == "[memory]") {
    memory_event m;
    m.time = time;
    if (a.device_type == 1) {
      const auto device = device_number(a.device_id);
      if (!device)
        return;
      m.device = *device;
    } else {
      m.device = -1;
    }
    m.lane = t_.lanes.memory(m.device);
    m.action = a.mem_bytes >= 0 ? memory_action::alloc : memory_action::free_completed;
    m.address = a.addr;
    // Negated as unsigned: -INT64_MIN does not fit an int64.
    const auto magnitude = static_cast<std::uint64_t>(a.mem_bytes);
    m.size = a.mem_bytes >= 0 ? magnitude : std::uint64_t{0} - magnitude;
    stats_.unreadable_memory_values += a.negative_totals;
    m.detail = t_.add_memory_detail({.total_allocated = a.total_allocated, // -1: unknown
                                     .total_reserved = a.total_reserved,
                                     .correlation = static_cast<std::uint32_t>(a.external_id)});
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

void kineto_builder::flow(char ph, std::string_view cat, std::uint64_t id, std::int64_t time,
                          const track_key& pid, const track_key& tid) {
  const bool launch = cat == "ac2g" || cat == "async"; // "async": Kineto before 2021-06
  // ac2g ends sit on GPU tracks (pid = device, tid = stream) or, for some, on CPU threads:
  // either way the lane keyed by (pid, tid) of that kind exists already when the kernel does.
  lane_id lane;
  if (ph == 'f' && launch && !pid.is_text && pid.number >= 0 && pid.number < 64)
    lane = gpu_lane(pid.number, gpu_stream(tid));
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

void kineto_builder::metadata(std::string_view name, const track_key& pid, const track_key& tid,
                              const event_args& a) {
  ++stats_.metadata_events;
  if (name == "thread_name" && !a.name.empty())
    thread_names_.emplace_back(std::pair{track_number(pid), track_number(tid)}, intern(a.name));
  else if (name == "process_name" && !a.name.empty())
    t_.metadata.properties.emplace_back(fmt::format("process.{}", track_number(pid)),
                                        std::string(a.name));
}

void kineto_builder::counter(std::string_view name, std::int64_t time, const track_key& pid,
                             const track_key& tid, const event_args& a) {
  // Chrome counters carry their series in args: one series keeps the counter's name, several
  // are "name.series" each. What is not a number is counted (a note), never kept as 0.
  stats_.unreadable_counter_values += a.non_numeric_series + a.series_dropped;
  if (a.series_count == 0) {
    if (a.non_numeric_series == 0)
      ++stats_.unreadable_counter_values; // no args: a counter without a value
    return;
  }
  counter_event c;
  c.time = time;
  c.lane = host_lane(pid, tid);
  fmt::memory_buffer full; // "name.series" (several series), formatted on the stack
  for (std::uint32_t i = 0; i < a.series_count; ++i) {
    const auto& [series, value] = a.series[i];
    full.clear();
    if (a.series_count > 1)
      fmt::format_to(std::back_inserter(full), "{}.{}", name, series);
    c.name = intern(a.series_count > 1 ? std::string_view(full.data(), full.size()) : name);
    c.value = value;
    t_.counters.push_back(c);
  }
}

void kineto_builder::reparse_args(std::string_view raw, bool counter_args, event_args& a) {
  simdjson::padded_string copy(raw);
  od::document d = take(side_parser_.iterate(copy));
  od::object o = take(d.get_object());
  if (counter_args) {
    // The series' names point into `copy`: interned before it goes.
    read_counter_args(o, a, numbers_);
    for (std::uint32_t i = 0; i < a.series_count; ++i)
      a.series[i].first = t_.strings.name(t_.strings.intern(a.series[i].first));
  } else {
    read_args(o, a, numbers_);
  }
}

} // namespace tdiag::trace::detail
