// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/backend.hpp>
#include <tensordiag/core/codes.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace tdiag {
namespace {

struct entry {
  std::shared_ptr<backend> implementation;
  int priority = 0;
  std::string name;
};

struct registry {
  std::mutex mutex;
  std::vector<entry> entries; // highest priority first, stable among equals
  std::string active;
  std::atomic<std::uint64_t> generation{1};
};

registry& the_registry() {
  // Leaked on purpose: back-ends may be used from at-exit checks after static destruction began.
  static auto* r = new registry;
  return *r;
}

std::string known_names(const registry& r) {
  std::string names;
  for (const auto& e : r.entries)
    names += (names.empty() ? "" : ", ") + e.name;
  return names.empty() ? std::string("none") : names;
}

std::shared_ptr<backend> find_locked(const registry& r, std::string_view name) {
  for (const auto& e : r.entries)
    if (e.name == name)
      return e.implementation;
  return nullptr;
}

} // namespace

void register_backend(std::shared_ptr<backend> implementation, int priority) {
  if (!implementation)
    return;
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  std::string name(implementation->name());
  std::erase_if(r.entries, [&](const entry& e) { return e.name == name; });
  const auto at = std::find_if(r.entries.begin(), r.entries.end(),
                               [&](const entry& e) { return e.priority < priority; });
  r.entries.insert(at, entry{std::move(implementation), priority, std::move(name)});
  r.generation.fetch_add(1, std::memory_order_release);
}

std::uint64_t backend_registry_generation() noexcept {
  return the_registry().generation.load(std::memory_order_acquire);
}

std::shared_ptr<backend> find_backend(std::string_view name) {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  return find_locked(r, name);
}

std::vector<std::string> backend_names() {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& e : r.entries)
    names.push_back(e.name);
  return names;
}

void set_active_backend(std::string_view name) {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  if (!name.empty() && !find_locked(r, name)) {
    diagnostic d;
    d.code = codes::unknown_backend;
    d.title = "unknown back-end";
    d.message =
        fmt::format("no back-end named '{}' is registered (registered: {})", name, known_names(r));
    d.add_field("backend", std::string(name));
    d.hint = "register it with tdiag::register_backend() before selecting it";
    throw error(std::move(d));
  }
  r.active = std::string(name);
  r.generation.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<backend> select_backend() {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  std::string wanted = r.active;
  bool from_env = false;
  if (wanted.empty()) {
    if (const char* env = std::getenv("TDIAG_BACKEND"); env && *env) {
      wanted = env;
      from_env = true;
    }
  }
  if (!wanted.empty()) {
    if (auto b = find_locked(r, wanted))
      return b;
    diagnostic d;
    d.code = codes::unknown_backend;
    d.title = "unknown back-end";
    d.message =
        fmt::format("{} names back-end '{}', which is not registered (registered: {})",
                    from_env ? "TDIAG_BACKEND" : "set_active_backend()", wanted, known_names(r));
    d.add_field("backend", wanted);
    throw error(std::move(d));
  }
  for (const auto& e : r.entries)
    if (e.implementation->device_count() > 0)
      return e.implementation;
  diagnostic d;
  d.code = codes::no_device_backend;
  d.title = "no back-end with a device";
  d.message =
      fmt::format("no registered back-end has a usable device (registered: {})", known_names(r));
  throw error(std::move(d));
}

} // namespace tdiag
