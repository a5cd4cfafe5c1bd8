// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "kineto_fields.hpp"

#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace tdiag::trace::detail {

std::string_view token_text(od::value v) {
  std::string_view token = v.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t' || token.back() == ',' || token.back() == '}' ||
                            token.back() == ']'))
    token.remove_suffix(1);
  return token;
}

namespace {
constexpr std::string_view integer_expected = "a JSON integer";

[[noreturn]] void throw_bad(od::value v, std::string_view path, std::string_view expected) {
  throw bad_field{path, std::string(token_text(v)), expected};
}
} // namespace

std::string_view read_string(od::value v, std::string_view path) {
  std::string_view out;
  if (v.get_string().get(out) == simdjson::SUCCESS)
    return out;
  if (take(v.is_null()))
    return {};
  throw_bad(v, path, "a JSON string");
}

od::object read_object(od::value v, std::string_view path) {
  od::object out;
  if (v.get_object().get(out) != simdjson::SUCCESS)
    throw_bad(v, path, "a JSON object");
  return out;
}

od::array read_array(od::value v, std::string_view path) {
  od::array out;
  if (v.get_array().get(out) != simdjson::SUCCESS)
    throw_bad(v, path, "a JSON array");
  return out;
}

namespace {

// A JSON number of any type, or the value of a "0x1f" string (ROCm writes stream ids so).
struct integer_value {
  enum class kind : std::uint8_t { u64, i64, f64 } type = kind::u64;
  std::uint64_t u = 0;
  std::int64_t i = 0;
  double d = 0;
};

// The JSON number grammar, on the whole of `text`: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
// (so " 12", "12 us", "0x1f", "+1", "1." and "" are not numbers).
bool is_json_number(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const auto begin = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      ++i;
    return i > begin;
  };
  if (i < text.size() && text[i] == '-')
    ++i;
  if (i < text.size() && text[i] == '0')
    ++i;
  else if (!digits())
    return false;
  if (i < text.size() && text[i] == '.' && (++i, !digits()))
    return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-'))
      ++i;
    if (!digits())
      return false;
  }
  return i == text.size();
}

integer_value number_of(od::value v, std::string_view path, text_numbers& seen) {
  od::json_type type{};
  if (v.type().get(type) != simdjson::SUCCESS)
    throw_bad(v, path, integer_expected); // NaN, Infinity, other bare words
  integer_value out;
  od::number n;
  if (type == od::json_type::number && v.get_number().get(n) == simdjson::SUCCESS) {
    if (n.is_uint64())
      out.u = n.get_uint64();
    else if (n.is_int64())
      out.type = integer_value::kind::i64, out.i = n.get_int64();
    else
      out.type = integer_value::kind::f64, out.d = n.get_double();
    return out;
  }
  std::string_view text;
  if (type == od::json_type::string && v.get_string().get(text) == simdjson::SUCCESS) {
    const char* last = text.data() + text.size();
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      const auto [ptr, ec] = std::from_chars(text.data() + 2, last, out.u, 16);
      if (ec == std::errc{} && ptr == last)
        return out;
    } else if (is_json_number(text)) {
      seen.seen(path);
      // Past 64 bits from_chars fails with its pointer at the end: the double path saturates.
      if (const auto u = std::from_chars(text.data(), last, out.u);
          text[0] != '-' && u.ec == std::errc{} && u.ptr == last)
        return out;
      if (const auto i = std::from_chars(text.data(), last, out.i);
          i.ec == std::errc{} && i.ptr == last) {
        out.type = integer_value::kind::i64;
        return out;
      }
      // A float, or an integer past 64 bits: through double, saturated as a JSON number is.
      out.type = integer_value::kind::f64;
      out.d = std::strtod(std::string(text).c_str(), nullptr);
      return out;
    }
  }
  throw_bad(v, path, integer_expected);
}
} // namespace

track_key read_track(od::value v, std::string_view path) {
  track_key k;
  od::json_type type{};
  if (v.type().get(type) != simdjson::SUCCESS ||
      (type != od::json_type::string && type != od::json_type::number))
    throw_bad(v, path, "a JSON number or string");
  if (type == od::json_type::string) {
    k.text = take(v.get_string());
    k.is_text = true;
  } else {
    text_numbers none; // a JSON number here: no string to count
    k.number = read_i64(v, path, none);
  }
  return k;
}

std::uint64_t read_u64(od::value v, std::string_view path, text_numbers& seen) {
  const auto n = number_of(v, path, seen);
  switch (n.type) {
  case integer_value::kind::u64:
    return n.u;
  case integer_value::kind::i64:
    return static_cast<std::uint64_t>(n.i); // -1 stays all ones, as Kineto means it
  case integer_value::kind::f64:
    break;
  }
  return to_u64(n.d);
}
std::int64_t read_i64(od::value v, std::string_view path, text_numbers& seen) {
  const auto n = number_of(v, path, seen);
  switch (n.type) {
  case integer_value::kind::u64:
    return signed_size(n.u);
  case integer_value::kind::i64:
    return n.i;
  case integer_value::kind::f64:
    break;
  }
  return to_i64(n.d);
}

namespace {
// "1682725898079292", "4203669603187.439", "-12.5", "1.5e3": integer part and up to three
// fraction digits exactly, the rest rounded half up. Exponents go through double.
std::optional<time_value> parse_time_token(std::string_view text) {
  time_value out;
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  i += negative ? 1 : 0;
  const auto digits_begin = i;
  std::int64_t whole = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (whole > std::numeric_limits<std::int64_t>::max() / 100)
      return std::nullopt;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == digits_begin)
    return std::nullopt;
  std::int64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    out.fractional = true;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits < 3)
        frac = frac * 10 + (text[i] - '0');
      else if (frac_digits == 3)
        round_up = text[i] >= '5';
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    const std::string copy(text);
    const double d = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(d) || std::fabs(d) > 9e15)
      return std::nullopt;
    out.fractional = true;
    const double f = std::floor(d);
    out.us = static_cast<std::int64_t>(f);
    out.frac_ns = static_cast<std::int32_t>(std::llround((d - f) * 1000.0));
    if (out.frac_ns >= 1000)
      out.us += 1, out.frac_ns -= 1000;
    return out;
  }
  for (int k = frac_digits; k < 3; ++k)
    frac *= 10;
  frac += round_up ? 1 : 0;
  if (frac >= 1000)
    whole += 1, frac -= 1000;
  if (negative && frac != 0) {
    out.us = -whole - 1;
    out.frac_ns = static_cast<std::int32_t>(1000 - frac);
  } else {
    out.us = negative ? -whole : whole;
    out.frac_ns = static_cast<std::int32_t>(frac);
  }
  return out;
}
} // namespace

std::optional<time_value> read_time(od::value v, std::string_view path, text_numbers& seen) {
  od::json_type type{};
  if (v.type().get(type) != simdjson::SUCCESS)
    return std::nullopt;
  std::string_view text;
  if (type == od::json_type::string && v.get_string().get(text) == simdjson::SUCCESS &&
      is_json_number(text)) {
    auto t = parse_time_token(text);
    if (t)
      seen.seen(path);
    return t;
  }
  if (type != od::json_type::number)
    return std::nullopt;
  return parse_time_token(token_text(v));
}
double read_f64(od::value v, std::string_view path, text_numbers& seen) {
  od::json_type type{};
  double d = 0;
  std::string_view text;
  if (v.type().get(type) == simdjson::SUCCESS && type == od::json_type::string &&
      v.get_string().get(text) == simdjson::SUCCESS && is_json_number(text)) {
    d = std::strtod(std::string(text).c_str(), nullptr);
    if (std::isfinite(d)) {
      seen.seen(path);
      return d;
    }
  } else if (type == od::json_type::number && v.get_double().get(d) == simdjson::SUCCESS &&
             std::isfinite(d)) {
    return d;
  }
  throw_bad(v, path, "a finite JSON number");
}

namespace {
// A launch's grid or block: [x, y, z]. A string is kept aside as written: Inductor writes the
// grid of each Triton launch's cpu_op as Python ("grid(100,)"), and only a kernel's dims are
// read (kineto_builder refuses a string there).
void read_dims(od::value v, std::uint32_t (&out)[3], std::string_view path, text_numbers& seen,
               event_args& args) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) {
    std::string_view text;
    if (v.get_string().get(text) != simdjson::SUCCESS)
      throw_bad(v, path, "an array of integers");
    if (!args.bad_dims)
      args.bad_dims = bad_field{path, std::string(token_text(v)), "an array of integers"};
    return;
  }
  std::size_t i = 0;
  for (auto item : a) {
    od::value x;
    check(item.get(x));
    const auto n = read_u64(x, path, seen);
    if (i < 3)
      out[i] = static_cast<std::uint32_t>(n);
    ++i;
  }
}

// A string, or an array as written ("Process Group Ranks" is "[0, 1]" or [0, 1]).
std::string_view read_text(od::value v, std::string_view path) {
  od::json_type type{};
  std::string_view text;
  if (v.type().get(type) == simdjson::SUCCESS) {
    if (type == od::json_type::string && v.get_string().get(text) == simdjson::SUCCESS)
      return text;
    od::array a;
    if (type == od::json_type::array && v.get_array().get(a) == simdjson::SUCCESS &&
        a.raw_json().get(text) == simdjson::SUCCESS)
      return text;
  }
  throw_bad(v, path, "a JSON string");
}

std::int64_t read_total(od::value v, std::string_view path, text_numbers& seen, event_args& a) {
  const auto n = read_i64(v, path, seen);
  if (n >= 0)
    return n;
  ++a.negative_totals;
  return -1;
}

} // namespace

void read_counter_args(od::object obj, event_args& a, text_numbers& seen) {
  for_each_field(obj, [&](od::raw_json_string key, od::value v) {
    double value = 0;
    try {
      value = read_f64(v, "args.<counter series>", seen);
    } catch (const bad_field&) {
      ++a.non_numeric_series; // null, true, a list, an object, "abc"; NaN, Infinity
      return;
    }
    if (a.series_count == event_args::max_series) {
      ++a.series_dropped;
      return;
    }
    // The key as written, up to its closing quote (an escaped quote does not end it; escapes
    // stay as written: counter names hold none in real traces).
    const char* raw = key.raw();
    std::size_t n = 0;
    while (raw[n] != '"')
      n += raw[n] == '\\' ? 2 : 1;
    a.series[a.series_count++] = {std::string_view(raw, n), value};
  });
}

void event_args::check_dims() const {
  if (bad_dims)
    throw *bad_dims;
}

void read_args(od::object obj, event_args& a, text_numbers& seen) {
  for_each_field(obj, [&](od::raw_json_string key, od::value v) {
    switch (key.raw()[0]) {
    case 'c':
      if (key == "correlation")
        a.correlation = read_u64(v, "args.correlation", seen);
      else if (key == "context")
        a.context = read_u64(v, "args.context", seen);
      else if (key == "cbid")
        a.cbid = read_u64(v, "args.cbid", seen);
      break;
    case 'w':
      if (key == "wait_on_cuda_event_record_corr_id")
        a.wait_record = read_i64(v, "args.wait_on_cuda_event_record_corr_id", seen);
      else if (key == "wait_on_stream")
        a.wait_stream = read_i64(v, "args.wait_on_stream", seen);
      break;
    case 'E':
      if (key == "External id")
        a.external_id = read_u64(v, "args.External id", seen);
      break;
    case 'e':
      if (key == "external id") // Kineto before 2021-06
        a.external_id = read_u64(v, "args.external id", seen);
      break;
    case 'd':
      if (key == "device") {
        a.device = read_i64(v, "args.device", seen);
        a.has_device = true;
      }
      break;
    case 's':
      if (key == "stream") {
        a.stream = read_u64(v, "args.stream", seen);
        a.has_stream = true;
      } else if (key == "shared memory")
        a.shared_memory = read_i64(v, "args.shared memory", seen);
      else if (key == "sort_index")
        a.sort_index = read_i64(v, "args.sort_index", seen);
      break;
    case 'r':
      if (key == "registers per thread")
        a.registers = read_i64(v, "args.registers per thread", seen);
      break;
    case 'g':
      if (key == "grid")
        read_dims(v, a.grid, "args.grid", seen, a);
      break;
    case 'b':
      if (key == "block")
        read_dims(v, a.block, "args.block", seen, a);
      else if (key == "bytes")
        a.bytes = read_u64(v, "args.bytes", seen);
      break;
    case 'A':
      if (key == "Addr")
        a.addr = read_u64(v, "args.Addr", seen);
      break;
    case 'B':
      if (key == "Bytes")
        a.mem_bytes = read_i64(v, "args.Bytes", seen);
      break;
    case 'T':
      if (key == "Total Allocated")
        a.total_allocated = read_total(v, "args.Total Allocated", seen, a);
      else if (key == "Total Reserved")
        a.total_reserved = read_total(v, "args.Total Reserved", seen, a);
      break;
    case 'D':
      if (key == "Device Type")
        a.device_type = read_i64(v, "args.Device Type", seen);
      else if (key == "Device Id")
        a.device_id = read_i64(v, "args.Device Id", seen);
      break;
    case 'm':
      if (key == "memory bandwidth (GB/s)")
        a.bandwidth_gbps = read_f64(v, "args.memory bandwidth (GB/s)", seen);
      break;
    case 'P':
      if (key == "Process Group Name")
        a.group = read_text(v, "args.Process Group Name");
      else if (key == "Process Group Ranks")
        a.group_ranks = read_text(v, "args.Process Group Ranks");
      break;
    case 'G':
      if (key == "Group size")
        a.group_size = read_i64(v, "args.Group size", seen);
      break;
    case 'S':
      if (key == "Seq")
        a.seq = read_i64(v, "args.Seq", seen);
      break;
    case 'C':
      if (key == "Collective name")
        a.collective = read_text(v, "args.Collective name");
      break;
    case 'n':
      if (key == "name") {
        std::string_view s;
        if (v.get_string().get(s) == simdjson::SUCCESS)
          a.name = s;
      }
      break;
    default:
      break;
    }
  });
}

void keep_sync_wait(const event_args& a, trace& t) {
  if (a.wait_record <= 0 && a.wait_stream < 0)
    return;
  t.sync_waits.push_back({static_cast<std::uint32_t>(t.ranges.size()),
                          static_cast<std::uint32_t>(std::max<std::int64_t>(a.wait_record, 0)),
                          a.wait_stream});
}

void keep_collective(const event_args& a, trace& t) {
  if (a.correlation == 0 || (a.group.empty() && a.group_ranks.empty() && a.seq < 0))
    return;
  collective_info c;
  c.correlation = static_cast<std::uint32_t>(a.correlation);
  c.group = a.group.empty() ? no_string : t.strings.intern(a.group);
  c.group_ranks = a.group_ranks.empty() ? no_string : t.strings.intern(a.group_ranks);
  c.collective = a.collective.empty() ? no_string : t.strings.intern(a.collective);
  c.group_size = a.group_size;
  c.seq = a.seq;
  t.collectives.push_back(c);
}

copy_kind parse_copy_kind(std::string_view name, bool memset) {
  if (memset)
    return copy_kind::memset;
  if (name.find("HtoD") != std::string_view::npos)
    return copy_kind::htod;
  if (name.find("DtoH") != std::string_view::npos)
    return copy_kind::dtoh;
  if (name.find("DtoD") != std::string_view::npos)
    return copy_kind::dtod;
  if (name.find("HtoH") != std::string_view::npos)
    return copy_kind::htoh;
  if (name.find("PtoP") != std::string_view::npos)
    return copy_kind::ptop;
  return copy_kind::unknown;
}
memory_kind parse_memory_kind(std::string_view word) {
  if (word.starts_with("Pageable"))
    return memory_kind::pageable;
  if (word.starts_with("Pinned"))
    return memory_kind::pinned;
  if (word.starts_with("Device"))
    return memory_kind::device;
  if (word.starts_with("Array"))
    return memory_kind::array;
  if (word.starts_with("Managed"))
    return memory_kind::managed;
  return memory_kind::unknown;
}

std::string what_was_written(const bad_field& f) {
  if (f.token.empty())
    return "no value (a trailing comma, or text that is not JSON)";
  if (f.token.starts_with('"') && f.expected.find("string") != std::string_view::npos)
    return printable(f.token, 64) +
           ", which does not decode (a lone \\u surrogate or bytes that are not UTF-8)";
  return printable(f.token, 64);
}

} // namespace tdiag::trace::detail
