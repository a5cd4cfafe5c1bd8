// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The watchdog: a thread that polls the failure counters and reports while kernels still run.
#include <fmt/format.h>

#include "runtime_state.hpp"

namespace tdiag::assertions::detail {
namespace {

void watchdog_loop(runtime_state* st, std::chrono::milliseconds period) {
  std::unique_lock lock(st->watchdog_mutex);
  while (!st->watchdog_stop) {
    st->watchdog_wake.wait_for(lock, period, [&] { return st->watchdog_stop; });
    if (st->watchdog_stop)
      break;
    bool has_handler = false;
    {
      std::lock_guard h(st->handler_mutex);
      has_handler = static_cast<bool>(st->handler);
    }
    lock.unlock();
    try {
      if (has_handler) {
        if (auto r = take(*st, "reported by the watchdog while kernels may still run", false))
          deliver(std::move(*r), false);
      } else {
        // Print once and leave the failures pending, so the program's own check still sees them.
        const std::size_t n = st->device_count.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < n; ++i) {
          device_state& ds = *st->devices[i].load(std::memory_order_acquire);
          std::lock_guard dl(ds.mutex);
          auto f = read_failures(ds, false);
          const std::uint64_t claimed = ds.seen_claimed.load(std::memory_order_relaxed) + f.total;
          if (f.total == 0 || claimed == ds.watchdog_printed)
            continue;
          ds.watchdog_printed = claimed;
          runtime_config config;
          {
            std::lock_guard cl(st->mutex);
            config = st->config;
          }
          auto r =
              build_report({f}, config, "reported by the watchdog while kernels may still run");
          if (config.print)
            fmt::print(stderr, "{}", render(r, config.stderr_format));
        }
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "tensordiag watchdog: {}\n", e.what());
    }
    lock.lock();
  }
}

} // namespace

void start_watchdog_locked(runtime_state& st, std::chrono::milliseconds period) {
  stop_watchdog_locked(st);
  st.watchdog_stop = false;
  st.watchdog = std::thread(watchdog_loop, &st, period);
}

void stop_watchdog_locked(runtime_state& st) {
  if (!st.watchdog.joinable())
    return;
  st.watchdog_stop = true;
  st.watchdog_wake.notify_all();
  std::thread t = std::move(st.watchdog);
  st.watchdog_mutex.unlock();
  t.join();
  st.watchdog_mutex.lock();
}

} // namespace tdiag::assertions::detail

namespace tdiag::assertions {

void start_watchdog(std::chrono::milliseconds period) {
  auto& st = detail::state();
  std::lock_guard lock(st.watchdog_mutex);
  detail::start_watchdog_locked(st, period);
}

void stop_watchdog() {
  auto& st = detail::state();
  std::lock_guard lock(st.watchdog_mutex);
  detail::stop_watchdog_locked(st);
}

} // namespace tdiag::assertions
