// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Checking for failures and delivering them: collecting every device's buffer, building the
// report, printing it, writing TDIAG_REPORT, calling the handler or throwing, and the check at
// exit.
#include <tensordiag/assertions/failure_buffer.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "capture_hooks.hpp"
#include "runtime_state.hpp"

namespace tdiag::assertions::detail {
namespace {

std::vector<device_failures> collect(runtime_state& st, bool acknowledge, bool only_new) {
  std::vector<device_failures> all;
  const std::size_t n = st.device_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    device_state& ds = *st.devices[i].load(std::memory_order_acquire);
    if (only_new && ds.buffer.host_coherent &&
        load_acquire(&static_cast<buffer_header*>(ds.buffer.host)->claimed) ==
            ds.seen_claimed.load(std::memory_order_relaxed))
      continue;
    std::lock_guard lock(ds.mutex);
    auto f = read_failures(ds, acknowledge);
    if (f.total != 0 || !f.records.empty())
      all.push_back(std::move(f));
  }
  collect_fallbacks(st, acknowledge, all);
  return all;
}

// Gives the current device its failure buffer, bound into every module registered so far, so
// that a program that so far launched only through <<<>>> records into it from now on.
void bind_current_device(runtime_state& st) {
  backend& be = active_backend(st);
  if (be.device_count() == 0)
    return;
  device_state& ds = device_for(st, be, be.current_device());
  const std::size_t modules = registered_buffer_slot_count();
  if (ds.bound_modules == modules)
    return;
  std::lock_guard lock(st.mutex);
  if (st.config.enabled)
    be.bind_failure_buffer(ds.device, ds.buffer);
  ds.bound_modules = modules;
}

// Each failing site, as its report names it, into a running capture's trace.
void send_to_capture(const report& r) {
  const auto hook = current_capture_hooks().assertion.load(std::memory_order_acquire);
  if (hook == nullptr)
    return;
  for (const auto& d : r.diagnostics) {
    std::int64_t launch_id = 0, device = 0;
    std::uint64_t stream = 0;
    std::uint32_t block[3] = {}, thread[3] = {};
    std::string condition;
    for (const auto& f : d.fields) {
      const auto* number = std::get_if<std::int64_t>(&f.value.value);
      const auto* text = std::get_if<std::string>(&f.value.value);
      const auto* list = std::get_if<field_value::list>(&f.value.value);
      if (f.name == "launch_id" && number)
        launch_id = *number;
      else if (f.name == "device" && number)
        device = *number;
      else if (f.name == "stream" && text)
        stream = std::strtoull(text->c_str(), nullptr, 16);
      else if (f.name == "condition" && text)
        condition = *text;
      else if ((f.name == "block" || f.name == "thread") && list && list->size() == 3)
        for (int i = 0; i < 3; ++i)
          if (const auto* v = std::get_if<std::int64_t>(&(*list)[i].value))
            (f.name == "block" ? block : thread)[i] = static_cast<std::uint32_t>(*v);
    }
    const std::string site = d.location.file.empty() ? condition
                                                     : fmt::format("{}:{}: {}", d.location.file,
                                                                   d.location.line, condition);
    hook(static_cast<std::uint64_t>(launch_id), static_cast<std::int32_t>(device), stream,
         site.c_str(), d.message.c_str(), block, thread);
  }
}

} // namespace

std::optional<report> take(runtime_state& st, std::string_view reason, bool bind_current) {
  if (bind_current)
    bind_current_device(st);
  auto failures = collect(st, true, true);
  if (failures.empty())
    return std::nullopt;
  runtime_config config;
  {
    std::lock_guard lock(st.mutex);
    config = st.config;
  }
  report r = build_report(failures, config, reason);
  send_to_capture(r);
  return r;
}

void at_exit() noexcept {
  runtime_state& st = state();
  {
    std::lock_guard lock(st.watchdog_mutex);
    stop_watchdog_locked(st);
  }
  try {
    if (auto r = take(st, "at exit: these failures were never checked", false))
      deliver(std::move(*r), false);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tensordiag: could not report device assertion failures at exit: {}\n",
               e.what());
  }
}

void deliver(report r, bool may_throw) {
  runtime_state& st = state();
  runtime_config config;
  {
    std::lock_guard lock(st.mutex);
    config = st.config;
  }
  if (!config.report_path.empty())
    write_text_file(config.report_path, to_json(r));
  failure_handler handler;
  {
    std::lock_guard lock(st.handler_mutex);
    handler = st.handler;
  }
  // A handler owns the report; otherwise it goes to stderr as well as into the exception, since
  // an exception may be caught and dropped by code that does not know what it carries.
  if (config.print && !handler)
    fmt::print(stderr, "{}", render(r, config.stderr_format));
  if (handler) {
    handler(r);
    return;
  }
  if (may_throw)
    throw device_assertion_error(std::move(r));
}

} // namespace tdiag::assertions::detail

namespace tdiag {

void check() {
  using namespace tdiag::assertions::detail;
  runtime_state& st = state();
  if (auto r = take(st, "", true))
    deliver(std::move(*r), true);
}

void synchronize_and_check(stream_handle stream) {
  using namespace tdiag::assertions::detail;
  runtime_state& st = state();
  backend& be = active_backend(st);
  try {
    be.synchronize(be.current_device(), stream);
  } catch (const error&) {
    // A trapped launch surfaces as a sticky runtime error; its record is still in the mapped
    // buffer, so report the assertion itself (the runtime error becomes secondary).
    check();
    throw;
  }
  check();
}

std::optional<report> take_failures() {
  using namespace tdiag::assertions::detail;
  return take(state(), "", true);
}

} // namespace tdiag

namespace tdiag::assertions {

failure_totals pending() {
  using namespace detail;
  auto all = collect(state(), false, false);
  failure_totals t;
  for (const auto& f : all) {
    t.total += f.total;
    t.records += f.records.size();
    t.dropped += f.dropped;
    t.in_flight += f.in_flight;
  }
  return t;
}

std::vector<failure_event> take_failure_events() {
  using namespace detail;
  runtime_state& st = state();
  std::vector<failure_event> events;
  for (const auto& f : collect(st, true, true)) {
    for (const auto& t : f.records) {
      failure_event e;
      e.backend = std::string(f.state->owner->name());
      e.device = f.state->device;
      e.claim = t.claim;
      e.record = t.record;
      if (t.record.flags == 0 || t.record.flags == 2)
        e.launch = st.registry->find(t.record.launch_id);
      events.push_back(std::move(e));
    }
  }
  return events;
}

void set_failure_handler(failure_handler handler) {
  auto& st = detail::state();
  std::lock_guard lock(st.handler_mutex);
  st.handler = std::move(handler);
}

} // namespace tdiag::assertions
