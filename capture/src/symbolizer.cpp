// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// In-process symbolization of launch stacks: libbacktrace (GCC's, linked statically) reads each
// module's DWARF line tables and symbol tables once, in this process, then answers an address in
// microseconds; no addr2line child per module and slice, which left a long --stacks run with
// seconds of symbolization after the application exited. Modules libbacktrace does not know (a
// library loaded after its first lookup) fall back to the dynamic symbol table (dladdr).
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <string>

#if TDIAG_CAPTURE_HAVE_LIBBACKTRACE
#  include <backtrace.h>
#endif

namespace tdiag::capture {
namespace {

#if TDIAG_CAPTURE_HAVE_LIBBACKTRACE
// Missing debug information is the normal case for most modules, not an error to report: the
// symbol table still names the function.
void ignore_error(void* /*data*/, const char* /*message*/, int /*errnum*/) {}

backtrace_state* shared_state() {
  // Thread-safe lookups (threaded = 1); never freed (libbacktrace has no destroy).
  static backtrace_state* const state = backtrace_create_state(nullptr, 1, ignore_error, nullptr);
  return state;
}

// The innermost (possibly inlined) function at the address, as addr2line -f reports it.
int on_line(void* data, std::uintptr_t /*pc*/, const char* file, int line, const char* function) {
  auto& s = *static_cast<symbol*>(data);
  if (function != nullptr && s.function.empty())
    s.function = tdiag::demangle(function);
  if (file != nullptr && s.file.empty()) {
    s.file = file;
    s.line = line > 0 ? static_cast<std::uint32_t>(line) : 0;
  }
  return 1; // the first answer is the innermost frame
}

void on_symbol(void* data, std::uintptr_t /*pc*/, const char* name, std::uintptr_t /*value*/,
               std::uintptr_t /*size*/) {
  auto& s = *static_cast<symbol*>(data);
  if (name != nullptr && s.function.empty())
    s.function = tdiag::demangle(name);
}
#endif

} // namespace

bool in_process_symbolizer_has_lines() noexcept {
#if TDIAG_CAPTURE_HAVE_LIBBACKTRACE
  return true;
#else
  return false;
#endif
}

std::vector<symbol> symbolize_in_process(const std::vector<std::uintptr_t>& addresses) {
  std::vector<symbol> out(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    auto& s = out[i];
    // A return address points after the call; the call itself is one byte earlier.
    const std::uintptr_t lookup = addresses[i] - 1;
    Dl_info info{};
    const bool found = dladdr(reinterpret_cast<void*>(lookup), &info) != 0;
    if (found && info.dli_fname != nullptr)
      s.module = info.dli_fname;
#if TDIAG_CAPTURE_HAVE_LIBBACKTRACE
    if (auto* state = shared_state()) {
      backtrace_pcinfo(state, lookup, on_line, ignore_error, &s);
      if (s.function.empty())
        backtrace_syminfo(state, lookup, on_symbol, ignore_error, &s);
    }
#endif
    if (s.function.empty() && found && info.dli_sname != nullptr)
      s.function = tdiag::demangle(info.dli_sname);
    if (s.function.empty())
      s.function = found && info.dli_fbase != nullptr
                       ? fmt::format("{}+0x{:x}", s.module.empty() ? "?" : s.module,
                                     lookup - reinterpret_cast<std::uintptr_t>(info.dli_fbase))
                       : fmt::format("0x{:x}", addresses[i]);
  }
  return out;
}

} // namespace tdiag::capture
