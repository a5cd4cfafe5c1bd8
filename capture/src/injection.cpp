// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// CUDA_INJECTION64_PATH entry point and the environment options. The driver calls
// InitializeInjection() while it initialises (cuInit), possibly more than once: the first call
// starts the session, later calls report the same outcome.
#include <tensordiag/capture/capture.hpp>
#include <tensordiag/capture/process_output.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <unistd.h>

namespace tdiag::capture {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

bool env_flag(const char* name, bool fallback) {
  const char* v = env(name);
  if (v == nullptr)
    return fallback;
  const std::string_view s(v);
  return !(s == "0" || s == "false" || s == "off" || s == "no");
}

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = env(name);
  if (v == nullptr)
    return fallback;
  char* end = nullptr;
  const auto n = std::strtoull(v, &end, 10);
  return end != v && *end == '\0' ? n : fallback;
}

// "run.tdtrace" -> "run.<pid>.tdtrace".
std::string with_pid(const std::string& path) {
  std::filesystem::path p(path);
  const auto ext = p.extension().string();
  p.replace_extension();
  return fmt::format("{}.{}{}", p.string(), getpid(), ext);
}

// With TDIAG_CAPTURE_EXCLUSIVE=1 (set by `tdiag capture`, which removes the file first) the
// first process of the run that initialises CUDA takes the path; later ones (multiprocessing
// workers, subprocesses) write "<stem>.<pid>.tdtrace" next to it instead of clobbering it.
std::string claim_output(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd >= 0) {
    ::close(fd);
    return path;
  }
  return errno == EEXIST ? with_pid(path) : path;
}

// The driver dlopens this library RTLD_LOCAL; re-opening it RTLD_GLOBAL lets other runtimes
// find the C hooks (hooks.h) with dlsym(RTLD_DEFAULT, ...).
void make_symbols_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&InitializeInjection), &info) != 0 &&
      info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

} // namespace

options options::from_environment() {
  options o;
  const auto who = identify_process(getpid());
  o.properties = identity_properties(who);
  if (const char* dir = env("TDIAG_CAPTURE_OUTPUT_DIR"))
    o.output = claim_process_file(dir, who).string();
  else if (const char* out = env("TDIAG_CAPTURE_OUTPUT"))
    o.output = env_flag("TDIAG_CAPTURE_EXCLUSIVE", false) ? claim_output(out) : out;
  else
    o.output = fmt::format("tdiag-{}.tdtrace", getpid());
  o.stacks = env_flag("TDIAG_CAPTURE_STACKS", o.stacks);
  if (const char* ranges = env("TDIAG_CAPTURE_RANGES"))
    o.ranges = ranges;
  o.callbacks = env_flag("TDIAG_CAPTURE_CALLBACKS", o.callbacks);
  o.memory = env_flag("TDIAG_CAPTURE_MEMORY", o.memory);
  o.runtime_api = env_flag("TDIAG_CAPTURE_RUNTIME_API", o.runtime_api);
  o.driver_api = env_flag("TDIAG_CAPTURE_DRIVER_API", o.driver_api);
  if (const auto mb = env_number("TDIAG_CAPTURE_BUFFER_MB", 0); mb > 0 && mb <= 1024)
    o.buffer_bytes = mb << 20;
  if (const char* v = std::getenv("TDIAG_CAPTURE_DEVICE_BUFFER_MB"); v != nullptr && *v != 0)
    o.device_buffer_bytes =
        std::min<std::uint64_t>(env_number("TDIAG_CAPTURE_DEVICE_BUFFER_MB", 0), 4096) << 20;
  o.compression_level = static_cast<int>(
      env_number("TDIAG_CAPTURE_ZSTD_LEVEL", static_cast<std::uint64_t>(o.compression_level)));
  o.flush_period_ms =
      static_cast<std::uint32_t>(env_number("TDIAG_CAPTURE_FLUSH_MS", o.flush_period_ms));
  return o;
}

} // namespace tdiag::capture

extern "C" int InitializeInjection(void) {
  static std::once_flag once;
  static int outcome = 0;
  std::call_once(once, [] {
    tdiag::capture::make_symbols_global();
    try {
      const auto opts = tdiag::capture::options::from_environment();
      tdiag::capture::start(opts);
      outcome = tdiag::capture::active() ? 1 : 0;
      if (std::getenv("TDIAG_CAPTURE_QUIET") == nullptr)
        fmt::print(stderr, "tdiag capture: writing {}\n", opts.output);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tdiag capture: not capturing: {}\n", e.what());
      outcome = 0;
    }
  });
  return outcome;
}
