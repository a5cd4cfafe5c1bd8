// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Importing a Kineto trace: sniffing, the byte sources (plain or gzip), the top-level fields;
// the events go through kineto_builder (kineto_builder.cpp).
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "kineto_builder.hpp"
#include "kineto_fields.hpp"
#include "kineto_stream.hpp"

namespace tdiag::trace {
using clock_type = std::chrono::steady_clock;

namespace {

using namespace detail;

// Everything at the top level but traceEvents: the time base, device names, versions.
void read_top_level(od::object& top, detail::kineto_builder& builder, trace& t) {
  for_each_field(top, [&](od::raw_json_string key, od::value v) {
    if (key == "traceEvents")
      return;
    if (key == "baseTimeNanoseconds") {
      builder.set_base(read_i64(v, "baseTimeNanoseconds", builder.numbers()));
    } else if (key == "distributedInfo") {
      // {"backend": "nccl", "rank": 0, "world_size": 128}: kept as distributed.<key>.
      od::object info = read_object(v, "distributedInfo");
      for_each_field(info, [&](od::raw_json_string gkey, od::value gv) {
        const char* graw = gkey.raw();
        const std::string name = "distributed." + std::string(graw, std::strcspn(graw, "\""));
        od::json_type gt = take(gv.type());
        if (gt == od::json_type::string)
          t.metadata.properties.emplace_back(name, std::string(take(gv.get_string())));
        else if (gt == od::json_type::number)
          t.metadata.properties.emplace_back(
              name, fmt::format("{}", read_i64(gv, "distributedInfo", builder.numbers())));
      });
    } else if (key == "deviceProperties" || key == "computeProperties") {
      // computeProperties: the name Kineto used before 2021 for the same list.
      const bool old_name = key == "computeProperties";
      od::array devices = read_array(v, old_name ? "computeProperties" : "deviceProperties");
      for (auto dev : devices) {
        od::object o = read_object(take(std::move(dev)),
                                   old_name ? "computeProperties[]" : "deviceProperties[]");
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
  });
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
  [[nodiscard]] double share_read(std::uint64_t parsed) const noexcept override {
    return bytes_.empty() ? 1.0 : std::min(1.0, double(parsed) / double(bytes_.size()));
  }

private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

// A regular file read window by window: the JSON text is never whole in memory (a 10M-event
// trace is 1.75 GB of it).
class file_source final : public detail::byte_source {
public:
  explicit file_source(input_file& in) : in_(in) {}
  std::size_t read(char* dst, std::size_t n) override {
    const auto got = in_.read_at(pos_, std::as_writable_bytes(std::span(dst, n)));
    pos_ += got;
    return got;
  }
  [[nodiscard]] double share_read(std::uint64_t parsed) const noexcept override {
    return in_.size() == 0 ? 1.0 : std::min(1.0, double(parsed) / double(in_.size()));
  }

private:
  input_file& in_;
  std::uint64_t pos_ = 0;
};

class gzip_source final : public detail::byte_source {
public:
  gzip_source(std::span<const std::byte> bytes, std::string_view source)
      : z_(bytes, source), size_(bytes.size()) {}
  std::size_t read(char* dst, std::size_t n) override {
    const auto t0 = clock_type::now();
    const auto got = z_.read(dst, n);
    seconds += std::chrono::duration<double>(clock_type::now() - t0).count();
    inflated_ += got;
    return got;
  }
  // The compressed bytes consumed, less the share of the text inflated but not yet parsed.
  [[nodiscard]] double share_read(std::uint64_t parsed) const noexcept override {
    if (size_ == 0 || inflated_ == 0)
      return 1.0;
    const double parsed_share = std::min(1.0, double(parsed) / double(inflated_));
    return double(z_.consumed()) * parsed_share / double(size_);
  }
  double seconds = 0;

private:
  detail::gzip_stream z_;
  std::size_t size_;
  std::uint64_t inflated_ = 0;
};

void parse_stream(detail::byte_source& src, std::string_view source, trace& t, kineto_stats& stats,
                  std::size_t window) {
  detail::kineto_builder builder(t, stats, src);
  detail::stream_callbacks callbacks;
  callbacks.on_event = [&](od::object& obj, std::uint64_t parsed) { builder.event(obj, parsed); };
  callbacks.on_top_level = [&](od::object& top) {
    try {
      read_top_level(top, builder, t);
    } catch (const bad_field& f) {
      builder.fail_field(std::string(f.path), f);
    }
    if (builder.numbers().count != 0 && stats.first_text_number.empty())
      stats.first_text_number = std::string(builder.numbers().first_path);
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

bool is_trace_key(std::string_view key) {
  return key == "traceEvents" || key == "schemaVersion" || key == "deviceProperties" ||
         key == "computeProperties" || key == "displayTimeUnit" || key == "distributedInfo" ||
         key == "baseTimeNanoseconds";
}

// The end of the JSON string that starts at text[i] (a '"'), past its closing quote, or npos.
std::size_t string_end(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i + 1;
  }
  return std::string_view::npos;
}

// The top-level object's keys, walked by parsing `text` (the file's first bytes) with the
// values skipped whatever their size: true at a key of a trace, false when the object closes
// without one or the text stops being JSON. A prefix that ends inside a value is JSON so far
// whose keys said nothing yet (benchmark harnesses put a large "metadata" object first): the
// importer reads on, and says TDIAG-TR-123 when no traceEvents comes.
bool top_level_keys_say_trace(std::string_view text) {
  constexpr auto npos = std::string_view::npos;
  const auto ws = [&](std::size_t i) {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
      ++i;
    return i;
  };
  std::size_t i = 1; // past the '{'
  while (true) {
    i = ws(i);
    if (i == text.size())
      return true;
    if (text[i] == '}' || text[i] != '"')
      return false;
    const auto key_end = string_end(text, i);
    if (key_end == npos)
      return true;
    if (is_trace_key(text.substr(i + 1, key_end - i - 2)))
      return true;
    i = ws(key_end);
    if (i == text.size())
      return true;
    if (text[i] != ':')
      return false;
    // The value: to the ',' or '}' at depth 0.
    int depth = 0;
    for (i = ws(i + 1); i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        i = string_end(text, i);
        if (i == npos)
          return true;
        --i;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      } else if (depth == 0 && (c == ',' || c == '}')) {
        break;
      }
    }
    if (i == text.size())
      return true;
    if (text[i] == '}')
      return false;
    ++i; // the ','
  }
}

bool looks_like_trace_json(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF"))
    text.remove_prefix(3); // a UTF-8 byte order mark (event_stream passes it over)
  text = skip_ws(text);
  if (text.starts_with("["))
    return skip_ws(text.substr(1)).starts_with("{");
  if (!text.starts_with("{"))
    return false;
  return top_level_keys_say_trace(text);
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

namespace {

// The skipped events other than unpaired flows, by reason, when more than unknown phases.
std::vector<std::string> skip_reasons(const kineto_stats& stats) {
  std::vector<std::string> out;
  if (stats.missing_ts_events + stats.ts_out_of_range_events + stats.bad_device_events == 0)
    return out;
  if (stats.missing_ts_events != 0)
    out.push_back(fmt::format("{} without a ts", stats.missing_ts_events));
  if (stats.ts_out_of_range_events != 0)
    out.push_back(fmt::format("{} with a ts more than 2^60 ns from the trace's axis",
                              stats.ts_out_of_range_events));
  if (stats.bad_device_events != 0)
    out.push_back(
        fmt::format("{} with a device number that does not fit 32 bits", stats.bad_device_events));
  if (stats.unknown_phase_events != 0)
    out.push_back(fmt::format("{} of an unknown phase", stats.unknown_phase_events));
  return out;
}

// What the import read differently from what the file says, one line per reason. A flow end
// without its partner carries nothing (it is counted in the metadata, not said); events of a
// phase the model has no place for, and durations that are not there, are what a user loses.
void add_import_notes(const kineto_stats& stats, std::string_view source, load_result& out) {
  auto& props = out.trace.metadata.properties;
  if (stats.unpaired_flows != 0)
    props.emplace_back("kineto.unpaired_flows", fmt::format("{}", stats.unpaired_flows));
  const auto say = [&](severity level, std::string_view code, std::string_view title,
                       std::string message) {
    diagnostic d;
    d.level = level;
    d.code = std::string(code);
    d.title = std::string(title);
    d.message = fmt::format("{}: {}", source, message);
    d.add_field("file", std::string(source));
    out.warnings.push_back(std::move(d));
  };
  const bool one_phase = stats.unknown_phases.find(',') == std::string::npos;
  const auto phases =
      fmt::format("{} {} {} no place in the trace model", one_phase ? "phase" : "phases",
                  stats.unknown_phases, one_phase ? "has" : "have");
  const auto by_reason = skip_reasons(stats);
  if (!by_reason.empty())
    say(severity::warning, codes::kineto_skipped, "Kineto events skipped",
        fmt::format("{} of {} events skipped: {}{}", stats.skipped_events - stats.unpaired_flows,
                    stats.events, fmt::join(by_reason, ", "),
                    stats.unknown_phase_events != 0 ? fmt::format(" ({})", phases) : ""));
  else if (stats.unknown_phase_events != 0)
    say(severity::warning, codes::kineto_skipped, "Kineto events skipped",
        fmt::format("{} of {} events skipped: {}", stats.unknown_phase_events, stats.events,
                    phases));
  if (stats.unreadable_counter_values + stats.unreadable_memory_values != 0)
    say(severity::note, codes::kineto_unread_values, "Kineto values left unknown",
        fmt::format("{} values left unknown, not read as 0: {} counter (ph C) args that are not "
                    "numbers (or counters without one), {} [memory] totals below 0",
                    stats.unreadable_counter_values + stats.unreadable_memory_values,
                    stats.unreadable_counter_values, stats.unreadable_memory_values));
  if (stats.missing_durations + stats.negative_durations != 0)
    say(severity::warning, codes::kineto_bad_duration, "Kineto events without a duration",
        fmt::format("{} complete events (ph X) kept with duration 0: {} without a dur, {} with "
                    "a negative one",
                    stats.missing_durations + stats.negative_durations, stats.missing_durations,
                    stats.negative_durations));
  if (stats.text_numbers != 0)
    say(severity::note, codes::kineto_text_numbers, "Kineto numbers written as strings",
        fmt::format("{} numbers written as JSON strings were read as numbers (the first at {})",
                    stats.text_numbers, stats.first_text_number));
}

// The import of the text `src` gives; `gzip`, when it inflates, times its share.
load_result import_from(detail::byte_source& src, const gzip_source* gzip, std::string_view source,
                        const load_options& options, kineto_stats& stats, std::size_t window) {
  load_result out;
  out.trace.metadata.source_path = std::string(source);
  const auto t1 = clock_type::now();
  parse_stream(src, source, out.trace, stats, window);
  const auto t2 = clock_type::now();
  if (options.finalize)
    out.trace.finalize();
  const auto t3 = clock_type::now();
  // Inflation is interleaved with parsing (window by window); its share is timed apart.
  stats.inflate_seconds = gzip != nullptr ? gzip->seconds : 0.0;
  stats.parse_seconds = std::chrono::duration<double>(t2 - t1).count() - stats.inflate_seconds;
  stats.finalize_seconds = std::chrono::duration<double>(t3 - t2).count();
  out.trace.metadata.properties.emplace_back("kineto.events", fmt::format("{}", stats.events));
  add_import_notes(stats, source, out);
  return out;
}

} // namespace

load_result import_kineto(std::span<const std::byte> bytes, std::string_view source,
                          const load_options& options, kineto_stats* stats_out,
                          std::size_t window) {
  kineto_stats stats;
  load_result out;
  if (detail::is_gzip(bytes)) {
    stats.compressed_bytes = bytes.size();
    gzip_source src(bytes, source);
    out = import_from(src, &src, source, options, stats, window);
  } else {
    span_source src(bytes);
    out = import_from(src, nullptr, source, options, stats, window);
  }
  if (stats_out)
    *stats_out = stats;
  return out;
}

load_result import_kineto_file(const std::filesystem::path& path, const load_options& options,
                               kineto_stats* stats_out) {
  // The one file reader: "-" and pipes, the memory budget, TDIAG-CORE-004 when unreadable. A
  // gzip (a few percent of its text) and a stream are read whole; a regular JSON file streams.
  input_file in(path);
  std::array<std::byte, 2> head{};
  if (!in.seekable() || detail::is_gzip(std::span(head).first(in.read_at(0, head)))) {
    const std::string bytes = in.read_all();
    return import_kineto(std::as_bytes(std::span(bytes)), in.name(), options, stats_out);
  }
  kineto_stats stats;
  file_source src(in);
  auto out = import_from(src, nullptr, in.name(), options, stats, kineto_window_bytes);
  if (stats_out)
    *stats_out = stats;
  return out;
}

importer kineto_importer() {
  return {"kineto-json", [](std::span<const std::byte> head) { return sniff_kineto(head); },
          [](const std::filesystem::path& path, const load_options& options) {
            return import_kineto_file(path, options);
          },
          [](std::span<const std::byte> bytes, std::string_view source,
             const load_options& options) { return import_kineto(bytes, source, options); }};
}

} // namespace tdiag::trace
