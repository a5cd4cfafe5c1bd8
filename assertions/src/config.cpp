// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// runtime_config::from_environment(): the TDIAG_* variables of the assertions runtime.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace tdiag::assertions {
namespace {

[[noreturn]] void bad_value(std::string_view variable, std::string_view value,
                            std::string_view expected) {
  diagnostic d;
  d.code = codes::bad_environment;
  d.title = "invalid environment setting";
  d.message = fmt::format("{}={} is not valid: expected {}", variable, value, expected);
  d.add_field("variable", std::string(variable));
  d.add_field("value", std::string(value));
  throw error(std::move(d));
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? v : nullptr;
}

bool read_bool(const char* name, bool fallback) {
  const char* v = env(name);
  if (v == nullptr)
    return fallback;
  const std::string_view s(v);
  if (s == "1" || s == "on" || s == "true" || s == "yes")
    return true;
  if (s == "0" || s == "off" || s == "false" || s == "no")
    return false;
  bad_value(name, s, "0|1|on|off");
}

std::uint32_t read_count(const char* name, std::uint32_t fallback, std::uint32_t low,
                         std::uint32_t high) {
  const char* v = env(name);
  if (v == nullptr)
    return fallback;
  const std::string_view s(v);
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < low || n > high)
    bad_value(name, s, fmt::format("an integer from {} to {}", low, high));
  return n;
}

} // namespace

runtime_config runtime_config::from_environment() {
  runtime_config c;
  c.enabled = read_bool("TDIAG_ASSERTIONS", c.enabled);
  if (const char* p = env("TDIAG_ASSERT_POLICY")) {
    const std::string_view s(p);
    if (s == "record")
      c.failure_policy = policy::record;
    else if (s == "trap")
      c.failure_policy = policy::trap;
    else
      bad_value("TDIAG_ASSERT_POLICY", s, "record|trap");
  }
  c.records = read_count("TDIAG_ASSERT_RECORDS", c.records, 1, 1u << 20);
  c.sites = read_count("TDIAG_ASSERT_SITES", c.sites, 2, 1u << 16);
  c.launches = read_count("TDIAG_LAUNCH_RECORDS", c.launches, 2, 1u << 24);
  c.capture_stacks = read_bool("TDIAG_LAUNCH_STACKS", c.capture_stacks);
  c.watchdog_ms = read_count("TDIAG_WATCHDOG_MS", 0, 0, 3600u * 1000u);
  if (const char* p = env("TDIAG_REPORT"))
    c.report_path = p;
  if (const char* p = env("TDIAG_REPORT_FORMAT")) {
    const std::string_view s(p);
    if (s == "none") {
      c.print = false;
    } else if (auto f = parse_report_format(s)) {
      c.stderr_format = *f;
    } else {
      bad_value("TDIAG_REPORT_FORMAT", s, "text|json|github|junit|sarif|none");
    }
  }
  if (const char* p = env("TDIAG_BIND")) {
    const std::string_view s(p);
    if (s == "none")
      c.bind = launch_binding::none;
    else if (s == "cupti")
      c.bind = launch_binding::cupti;
    else
      bad_value("TDIAG_BIND", s, "none|cupti");
  }
  return c;
}

} // namespace tdiag::assertions
