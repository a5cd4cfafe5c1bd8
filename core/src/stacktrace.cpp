// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Capture walks the stack with rules learned from the DWARF unwinder (frame_rules.hpp: a table
// lookup a frame) and falls back to the unwinder itself (_Unwind_Backtrace: no allocation, no
// locks of ours) for any return address not seen before; symbolization runs only when asked.
// Boost.Stacktrace 1.74's addr2line back-end passes absolute addresses to addr2line, which finds
// nothing in position-independent executables and shared libraries (every Debian binary), so file
// and line come from one addr2line run per module with module-relative addresses; Boost.Stacktrace
// supplies the demangled function name (dladdr) where addr2line has none.
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <boost/stacktrace/frame.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <filesystem>
#include <link.h>
#include <map>
#include <memory>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <unwind.h>

#include "frame_rules.hpp"

extern char** environ;

namespace tdiag {
namespace {

struct unwind_state {
  raw_stack* stack;
  std::uint32_t skip;
  std::uint32_t depth = 0;               // frames seen, capture_raw_stack's own included
  bool full = false;                     // stopped because the stack was full, not at its end
  bool learn = true;                     // false after a signal frame: its rules are not a call's
  std::uintptr_t ip = 0, sp = 0, fp = 0; // the previous frame, for learning its rule
};

#if defined(__x86_64__) && defined(__linux__)
constexpr int fp_register = 6; // rbp in the DWARF numbering of x86-64
constexpr std::uintptr_t max_frame_bytes = std::uintptr_t{1} << 24;

// The rule of the previous frame, now that its caller's stack pointer (= the previous frame's
// CFA) and frame pointer are known.
// Reads saved words just below the CFA, which sanitizers may count as another frame's redzone.
__attribute__((no_sanitize("address", "undefined"))) void
learn_previous(const unwind_state& s, std::uintptr_t cfa, std::uintptr_t caller_fp) noexcept {
  using namespace detail;
  if (!s.learn || s.depth == 0 || cfa <= s.sp || cfa - s.sp > max_frame_bytes)
    return;
  const auto* at_cfa = reinterpret_cast<const std::uintptr_t*>(cfa);
  frame_rule rule;
  if (s.fp + 16 == cfa) { // push rbp; mov rbp, rsp
    if (at_cfa[-2] != caller_fp)
      return;
    rule.kind = frame_rule_kind::frame_pointer;
  } else {
    rule.kind = frame_rule_kind::stack_offset;
    rule.cfa_offset = static_cast<std::uint32_t>(cfa - s.sp);
    if (caller_fp != s.fp) {
      // The function saved the caller's rbp among its callee-saved registers, just below the CFA.
      for (int slot = 2; slot <= 16 && !rule.fp_saved; ++slot)
        if (at_cfa[-slot] == caller_fp) {
          rule.fp_saved = true;
          rule.fp_offset = static_cast<std::int16_t>(-8 * slot);
        }
      if (!rule.fp_saved)
        return;
    }
  }
  learn_frame_rule(s.ip, rule);
}

// Walks the stack with learned rules alone; false as soon as an address has none (the caller then
// unwinds with DWARF, which also teaches the missing rules). Reads only the saved words that the
// unwinder itself found at these addresses, in this thread's own stack.
__attribute__((no_sanitize("address", "undefined"))) bool
walk_learned(raw_stack& stack, std::uintptr_t ip, std::uintptr_t sp, std::uintptr_t fp,
             std::uint32_t skip) noexcept {
  using namespace detail;
  for (std::uint32_t depth = 0;; ++depth) {
    if (depth >= skip) {
      if (stack.size >= raw_stack::max_frames)
        return true;
      stack.frames[stack.size++] = ip;
    }
    const frame_rule rule = find_frame_rule(ip);
    if (rule.kind == frame_rule_kind::none)
      return false;
    if (rule.kind == frame_rule_kind::end)
      return true;
    const std::uintptr_t cfa =
        rule.kind == frame_rule_kind::frame_pointer ? fp + 16 : sp + rule.cfa_offset;
    if (cfa <= sp || cfa - sp > max_frame_bytes || cfa % 8 != 0)
      return false;
    const auto* at_cfa = reinterpret_cast<const std::uintptr_t*>(cfa);
    const std::uintptr_t caller_fp =
        rule.kind == frame_rule_kind::frame_pointer ? at_cfa[-2]
        : rule.fp_saved ? *reinterpret_cast<const std::uintptr_t*>(cfa + rule.fp_offset)
                        : fp;
    ip = at_cfa[-1];
    sp = cfa;
    fp = caller_fp;
    if (ip == 0)
      return true;
  }
}
#endif

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto& state = *static_cast<unwind_state*>(arg);
  int before_instruction = 0;
  const auto ip = static_cast<std::uintptr_t>(_Unwind_GetIPInfo(context, &before_instruction));
  if (before_instruction != 0)
    state.learn = false;
#if defined(__x86_64__) && defined(__linux__)
  if (ip != 0) {
    // libgcc's context for a frame holds that frame's stack pointer as its "CFA" (the CFA of the
    // frame it was unwound from) and its registers as they are at `ip`.
    const auto sp = static_cast<std::uintptr_t>(_Unwind_GetCFA(context));
    const auto fp = static_cast<std::uintptr_t>(_Unwind_GetGR(context, fp_register));
    learn_previous(state, sp, fp);
    state.sp = sp;
    state.fp = fp;
  }
#endif
  if (ip == 0)
    return _URC_END_OF_STACK;
  state.ip = ip;
  ++state.depth;
  if (state.skip > 0) {
    --state.skip;
    return _URC_NO_REASON;
  }
  if (state.stack->size >= raw_stack::max_frames) {
    state.full = true;
    return _URC_END_OF_STACK;
  }
  state.stack->frames[state.stack->size++] = ip;
  return _URC_NO_REASON;
}

// Runs `addr2line -a [-i] -C -f -e module addresses...` and returns its output ("" on any failure:
// symbolization is best effort, a missing binutils must not turn into an error report).
std::string run_addr2line(const std::string& module, const std::vector<std::string>& addresses,
                          bool inlined) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {"addr2line", "-a", "-C", "-f", "-e", module};
  if (inlined)
    args.insert(args.begin() + 1, "-i");
  args.insert(args.end(), addresses.begin(), addresses.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string output;
  if (spawned == 0) {
    char buffer[4096];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;)
      output.append(buffer, n);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      output.clear();
  }
  close(fds[0]);
  return output;
}

struct pending {
  std::size_t frame;
  std::uintptr_t lookup;
};

} // namespace

namespace {
// The DWARF unwinder, which also teaches the learned walk. `skip` counts frames above the caller
// of this function's caller (capture_raw_stack or unwind_raw_stack).
TDIAG_DETAIL_NOINLINE void unwind_into(raw_stack& stack, std::uint32_t skip) noexcept {
  unwind_state state{&stack, skip + 2}; // +2: this function and its caller
  _Unwind_Backtrace(on_frame, &state);
#if defined(__x86_64__) && defined(__linux__)
  // The unwinder stopped on its own: the last frame it reported is its thread's outermost.
  if (!state.full && state.learn && state.ip != 0)
    detail::learn_frame_rule(state.ip, {detail::frame_rule_kind::end});
#endif
}
} // namespace

TDIAG_DETAIL_NOINLINE raw_stack capture_raw_stack(std::uint32_t skip) noexcept {
  raw_stack stack;
#if defined(__x86_64__) && defined(__linux__)
  // This function's own frame pointer (__builtin_frame_address(0) makes the compiler keep one)
  // gives the caller's return address, stack pointer and frame pointer.
  const auto* frame = static_cast<const std::uintptr_t*>(__builtin_frame_address(0));
  if (walk_learned(stack, frame[1], reinterpret_cast<std::uintptr_t>(frame + 2), frame[0], skip))
    return stack;
  stack.size = 0;
#endif
  unwind_into(stack, skip);
  asm volatile("" ::: "memory"); // no tail call: the skip count assumes this frame
  return stack;
}

namespace detail {
TDIAG_DETAIL_NOINLINE raw_stack unwind_raw_stack(std::uint32_t skip) noexcept {
  raw_stack stack;
  unwind_into(stack, skip);
  asm volatile("" ::: "memory");
  return stack;
}
} // namespace detail

std::string demangle(const char* symbol) {
  if (symbol == nullptr)
    return {};
  if (symbol[0] != '_' || symbol[1] != 'Z')
    return symbol;
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(symbol, nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(symbol);
}

std::vector<stack_frame> symbolize(const raw_stack& stack, bool inlined) {
  std::vector<stack_frame> frames(stack.size);
  // Per frame, addr2line's (function, file:line) pairs, the frame's own first.
  std::vector<std::vector<std::pair<std::string, std::string>>> chains(stack.size);
  std::map<std::string, std::vector<pending>> by_module;
  for (std::uint32_t i = 0; i < stack.size && i < raw_stack::max_frames; ++i) {
    auto& frame = frames[i];
    frame.address = stack.frames[i];
    // A return address points after the call; the call itself is one byte earlier.
    const std::uintptr_t lookup = frame.address - 1;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(lookup), &info) == 0 || info.dli_fname == nullptr)
      continue;
    frame.module = info.dli_fname;
    // Position-independent objects are looked up relative to their load address.
    const auto* header = static_cast<const ElfW(Ehdr)*>(info.dli_fbase);
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    const std::uintptr_t relative =
        header != nullptr && header->e_type == ET_DYN ? lookup - base : lookup;
    std::string path = frame.module;
    if (path.empty() || path.front() != '/') {
      // A relative name is the main program started by a relative path. Resolve the link here:
      // handed to the addr2line child, /proc/self/exe would name addr2line itself.
      std::error_code ec;
      const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
      path = ec ? std::string() : exe.string();
      if (path.empty())
        continue;
    }
    by_module[path].push_back({i, relative});
  }
  for (const auto& [module, items] : by_module) {
    std::vector<std::string> addresses;
    for (const auto& item : items)
      addresses.push_back(fmt::format("{:#x}", item.lookup));
    const std::string output = run_addr2line(module, addresses, inlined);
    // Per address: the address, then function and file:line pairs ("??" and "??:0" when
    // unknown), innermost first: a call inlined into its caller gives the caller's pair after it.
    std::size_t pos = 0;
    const auto next_line = [&]() -> std::string {
      if (pos >= output.size())
        return {};
      const std::size_t end = output.find('\n', pos);
      std::string line =
          output.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      pos = end == std::string::npos ? output.size() : end + 1;
      return line;
    };
    // (No C++ name starts with a digit, so "0x" always opens the next address.)
    std::size_t item = 0;
    std::string line = next_line();
    while (line.rfind("0x", 0) == 0 && item < items.size()) {
      auto& chain = chains[items[item++].frame];
      for (line = next_line(); !line.empty() && line.rfind("0x", 0) != 0; line = next_line())
        chain.emplace_back(line, next_line());
    }
  }
  std::vector<stack_frame> out;
  out.reserve(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (chains[i].empty()) {
      out.push_back(frames[i]);
      continue;
    }
    for (const auto& [function, where] : chains[i]) {
      stack_frame frame = frames[i];
      if (!function.empty() && function != "??")
        frame.function = function;
      const std::size_t colon = where.rfind(':');
      if (colon != std::string::npos && where.compare(0, 2, "??") != 0) {
        frame.file = where.substr(0, colon);
        frame.line =
            static_cast<std::uint32_t>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
      }
      out.push_back(std::move(frame));
    }
  }
  frames = std::move(out);
  for (auto& frame : frames) {
    if (frame.function.empty()) {
      // Boost.Stacktrace: the dynamic symbol table through dladdr, demangled.
      frame.function =
          boost::stacktrace::frame(reinterpret_cast<const void*>(frame.address - 1)).name();
    }
  }
  return frames;
}

} // namespace tdiag
