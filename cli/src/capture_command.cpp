// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag capture -o run.tdtrace [--stacks] -- ./app args...`: runs the application with
// libtdiag_capture.so injected by the CUDA driver (CUDA_INJECTION64_PATH), then loads the trace
// it wrote and prints a one-screen summary. Needs no CUDA itself: only the library's path and,
// for the summary, the trace library. Exits with the application's status.
#include <tensordiag/capture/codes.hpp>
#include <tensordiag/capture/range_spec.hpp>
#include <tensordiag/core/error.hpp>

#if TDIAG_CLI_HAS_TRACE
#  include <tensordiag/trace/load.hpp>
#  include <tensordiag/trace/summary_analysis.hpp>
#  include <tensordiag/trace/tdtrace_writer.hpp>
#  include <tensordiag/trace/trace_merge.hpp>
#  include <tensordiag/trace/units.hpp>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "command.hpp"
#include "torch_hook.hpp"
#include "trace_job.hpp"

extern char** environ;

namespace tdiag::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* library_name = "libtdiag_capture.so";

struct capture_args {
  std::string output = "tdiag.tdtrace";
  bool stacks = false;
  bool api = false;         ///< --api: runtime and driver API records
  bool runtime_api = false; ///< --runtime-api
  bool driver_api = false;  ///< --driver-api
  bool kernels_only = false;
  bool no_runtime_api = false; ///< the default since API records became opt-in; still accepted
  bool no_driver_api = false;
  bool no_torch_history = false;
  bool torch_cpp_stacks = false;   ///< --torch-cpp-stacks: C++ frames in PyTorch's history too
  std::vector<std::string> ranges; ///< --range, as given
  std::string delay, duration;     ///< --delay S --duration S: one time range
  std::string launches;            ///< --launches A:B
  std::string library;
  std::vector<std::string> command;
};

fs::path executable_dir() {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

// Where the build and the staged GPU tree put it: <bin>/../lib, then beside the binary.
fs::path find_capture_library(const std::string& given) {
  std::vector<fs::path> candidates;
  if (!given.empty())
    candidates.emplace_back(given);
  else if (const char* env = std::getenv("TDIAG_CAPTURE_LIBRARY"); env && *env)
    candidates.emplace_back(env);
  else {
    const auto dir = executable_dir();
    candidates = {dir / ".." / "lib" / library_name, dir / library_name,
                  dir / ".." / "lib" / "tensordiag" / library_name};
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec))
      return fs::weakly_canonical(c, ec);
  }
  std::string tried;
  for (const auto& c : candidates)
    tried += fmt::format("{}{}", tried.empty() ? "" : ", ", c.string());
  throw_input_error(
      tdiag::capture::codes::library_not_found, "capture library not found",
      fmt::format("{} is not in {}", library_name, tried),
      "Build tensordiag with CUDA and CUPTI (TDIAG_WITH_CUPTI=ON), or name the library "
      "with --library or TDIAG_CAPTURE_LIBRARY.");
}

// Runs `command` with `extra` added to the environment; returns its exit status (128 + signal
// when killed, as shells report it).
int run_child(const std::vector<std::string>& command,
              const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const auto& kv) {
      return entry.starts_with(kv.first) && entry.size() > kv.first.size() &&
             entry[kv.first.size()] == '=';
    });
    if (!replaced)
      env_text.emplace_back(entry);
  }
  for (const auto& [key, value] : extra)
    env_text.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
      rc != 0)
    throw_input_error(tdiag::capture::codes::cannot_start, "cannot start the application",
                      fmt::format("cannot start {}: {}", command.front(), std::strerror(rc)),
                      "Give the program as it would run without tdiag, after `--`.");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

// Other processes of the run wrote "<stem>.<pid>.tdtrace" beside the main file.
std::vector<fs::path> sibling_traces(const fs::path& main) {
  std::vector<fs::path> out;
  std::error_code ec;
  const auto dir = main.has_parent_path() ? main.parent_path() : fs::path(".");
  const std::string stem = main.stem().string() + ".";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(stem) && entry.path().extension() == main.extension() &&
        entry.path().filename() != main.filename() &&
        name.find_first_not_of("0123456789", stem.size()) ==
            name.size() - main.extension().string().size())
      out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// `-o run/` (a trailing slash, or an existing folder): one trace per process of the job, named by
// rank by the library (capture/process_output.hpp).
bool is_job_folder(const std::string& output) {
  std::error_code ec;
  return output.ends_with('/') || fs::is_directory(output, ec);
}

// What an earlier capture into `folder` left: rank<N>.tdtrace, pid<N>.tdtrace, others/.
void remove_earlier_job(const fs::path& folder) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const auto name = entry.path().filename().string();
    for (std::string_view prefix : {"rank", "pid"})
      if (name.starts_with(prefix) && name.ends_with(".tdtrace") &&
          name.find_first_not_of("0123456789", prefix.size()) == name.size() - 8)
        fs::remove(entry.path(), ec);
  }
  fs::remove_all(folder / "others", ec);
}

// A process of the job without a rank (the launcher: torchrun's agent initialises CUDA too, a
// data-loader or helper process) beside processes with ranks: its trace goes to others/, so the
// folder the analyses read holds the ranks alone. A job without any rank keeps its pid files.
void set_aside_rankless(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::path> rankless;
  bool ranks = false;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.ends_with(".tdtrace"))
      continue;
    ranks = ranks || name.starts_with("rank");
    if (name.starts_with("pid"))
      rankless.push_back(entry.path());
  }
  if (!ranks || rankless.empty())
    return;
  fs::create_directories(folder / "others", ec);
  for (const auto& p : rankless) {
    fs::rename(p, folder / "others" / p.filename(), ec);
    fmt::print("set aside {}: a process of the job without a rank (RANK, LOCAL_RANK, ... unset: a "
               "launcher or helper), now in others/\n",
               p.filename().string());
  }
}

// The traces the processes of a job wrote into `folder` (others/ holds extra processes of a rank).
std::vector<fs::path> job_traces(const fs::path& folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& dir : {folder, folder / "others"})
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".tdtrace")
        out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Each process dumps PyTorch's allocator history at `<prefix><pid>.pickle`.
// In a job folder the histories wait in others/ (created with the folder), where neither the
// job loader nor an analysis of the folder takes a left-over one for a rank.
std::string history_prefix(const fs::path& output, bool folder) {
  return folder ? (output / "others" / "torch-").string() : output.string() + ".torch-";
}

#if TDIAG_CLI_HAS_TRACE
void print_summary(const trace::load_result& loaded, const fs::path& path) {
  const trace::trace& t = loaded.trace;
  std::error_code ec;
  const auto file_bytes = fs::file_size(path, ec);
  fmt::print("trace     {} ({}, {} events)\n", path.string(),
             trace::format_bytes(ec ? 0 : file_bytes), t.event_count());

  const auto kernels = trace::kernel_stats(t); // longest total first
  std::int64_t gpu_ns = 0;
  for (const auto& k : kernels)
    gpu_ns += k.total_ns;
  fmt::print("kernels   {} ({} names, {:.3f} ms on the GPU)\n", t.kernels.size(), kernels.size(),
             gpu_ns / 1e6);
  for (std::size_t i = 0; i < kernels.size() && i < 5; ++i) {
    std::string name(t.name(kernels[i].name));
    if (name.size() > 70)
      name = name.substr(0, 67) + "...";
    fmt::print("  {:5.1f}%  {:>8}x  {}\n",
               gpu_ns > 0 ? 100.0 * double(kernels[i].total_ns) / double(gpu_ns) : 0.0,
               kernels[i].count, name);
  }

  std::map<trace::copy_kind, std::pair<std::uint64_t, std::uint64_t>> copies;
  for (const auto& c : t.copies.all()) {
    copies[c.kind].first += 1;
    copies[c.kind].second += c.bytes;
  }
  std::string copy_text;
  const std::pair<trace::copy_kind, const char*> kinds[] = {
      {trace::copy_kind::htod, "HtoD"},    {trace::copy_kind::dtoh, "DtoH"},
      {trace::copy_kind::dtod, "DtoD"},    {trace::copy_kind::ptop, "PtoP"},
      {trace::copy_kind::htoh, "HtoH"},    {trace::copy_kind::memset, "memset"},
      {trace::copy_kind::unknown, "other"}};
  std::uint64_t copied = 0;
  for (const auto& [kind, word] : kinds)
    if (auto it = copies.find(kind); it != copies.end()) {
      copy_text += fmt::format("  {} {}x {}", word, it->second.first,
                               trace::format_bytes(it->second.second));
      if (kind != trace::copy_kind::memset)
        copied += it->second.second;
    }
  fmt::print("copies    {} ({} copied){}\n", t.copies.size(), trace::format_bytes(copied),
             copy_text);
  const std::string* api = t.metadata.property("capture.runtime_api");
  fmt::print("API calls {}{}\n", t.api_calls.size(),
             t.api_calls.empty() && api != nullptr && *api == "0" ? "  (not recorded: --api)" : "");

  // Pool usage per device: stream-ordered pool blocks (CUPTI alloc/free_completed, untagged).
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> usage; // live, peak
  std::uint64_t pool_allocs = 0, pool_frees = 0, segments = 0, tagged = 0;
  std::vector<trace::memory_event> memory(t.memory.all().begin(), t.memory.all().end());
  std::stable_sort(memory.begin(), memory.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  for (const auto& m : memory) {
    if (t.detail_of(m).user_metadata != trace::no_string) {
      ++tagged;
      continue;
    }
    auto& [live, peak] = usage[m.device];
    if (m.action == trace::memory_action::alloc) {
      ++pool_allocs;
      live += static_cast<std::int64_t>(m.size);
      peak = std::max(peak, live);
    } else if (m.action == trace::memory_action::free_completed) {
      ++pool_frees;
      live -= static_cast<std::int64_t>(m.size);
    } else if (m.action == trace::memory_action::segment_alloc) {
      ++segments;
    }
  }
  std::int64_t peak = 0;
  for (const auto& [device, u] : usage)
    peak = std::max(peak, u.second);
  fmt::print("memory    pool: {} allocs, {} frees, peak in use {}; driver allocations {}; "
             "instrumented-pool events {}\n",
             pool_allocs, pool_frees, trace::format_bytes(static_cast<std::uint64_t>(peak)),
             segments, tagged);
  if (!t.assertions.empty())
    fmt::print("asserts   {} device assertion failures\n", t.assertions.size());
  fmt::print("dropped   {} records{}\n", t.metadata.dropped_records,
             t.metadata.dropped_records ? "  (raise TDIAG_CAPTURE_BUFFER_MB)" : "");
  for (const auto& w : loaded.warnings)
    fmt::print("warning   {}: {}\n", w.code, w.message);
}
#endif

// PyTorch's caching allocator hands out blocks of the segments CUDA sees; CUPTI sees only the
// segments. The hook (capture/python/sitecustomize.py, embedded) makes a PyTorch application
// record the allocator's history and dump it at exit beside the trace, as
// `<output>.torch-<pid>.pickle`; merge_torch_histories() then puts its blocks into the trace.
struct torch_hook {
  fs::path dir; ///< a fresh temporary folder holding sitecustomize.py; empty when not used
  ~torch_hook() {
    std::error_code ec;
    if (!dir.empty())
      fs::remove_all(dir, ec);
  }
};

// `history_prefix` + "{pid}.pickle" is where each process dumps its allocator history.
void add_torch_hook(torch_hook& hook, const capture_args& a, const std::string& history_prefix,
                    std::vector<std::pair<std::string, std::string>>& env) {
  std::string pattern = (fs::temp_directory_path() / "tdiag-capture-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    fmt::print(stderr,
               "tdiag capture: warning: no temporary folder for the PyTorch hook ({}); "
               "PyTorch's allocator blocks are not captured\n",
               std::strerror(errno));
    return;
  }
  hook.dir = pattern;
  std::FILE* f = std::fopen((hook.dir / "sitecustomize.py").c_str(), "w");
  // rules: allow fmt_only (a file's verbatim contents, not formatting)
  const bool written = f != nullptr && std::fputs(torch_hook_source, f) >= 0;
  if (f == nullptr || std::fclose(f) != 0 || !written) {
    fmt::print(stderr,
               "tdiag capture: warning: cannot write the PyTorch hook into {} ({}); "
               "PyTorch's allocator blocks are not captured\n",
               hook.dir.string(), std::strerror(errno));
    return;
  }
  const char* existing = std::getenv("PYTHONPATH");
  env.emplace_back("PYTHONPATH",
                   existing && *existing ? hook.dir.string() + ":" + existing : hook.dir.string());
  env.emplace_back("TDIAG_CAPTURE_TORCH_SNAPSHOT", history_prefix + "{pid}.pickle");
  // PyTorch symbolizes C++ frames when the history is dumped, in the application's exit: +0.6 s
  // on a small 200-step loop (H200, 2026-12-03), and they are mostly the caching allocator's own.
  env.emplace_back("TDIAG_CAPTURE_TORCH_STACKS", a.torch_cpp_stacks ? "all" : "python");
}

#if TDIAG_CLI_HAS_TRACE
// Each process's allocator history goes into that process's trace (matched by capture.pid).
void merge_torch_histories(const std::vector<fs::path>& traces, const fs::path& history_prefix) {
  // Most runs are not PyTorch: no trace is read unless some process left a history.
  const std::string prefix = history_prefix.filename().string();
  std::error_code ec;
  bool any = false;
  for (const auto& entry : fs::directory_iterator(history_prefix.parent_path(), ec))
    any = any || entry.path().filename().string().starts_with(prefix);
  if (!any)
    return;
  for (const auto& path : traces) {
    auto loaded = trace::load_trace(path);
    const std::string* pid = loaded.trace.metadata.property("capture.pid");
    if (pid == nullptr)
      continue;
    const fs::path history = history_prefix.string() + *pid + ".pickle";
    if (!fs::exists(history, ec))
      continue;
    const auto snapshot = trace::load_trace(history);
    const auto merged = trace::merge_allocator_history(loaded.trace, snapshot.trace);
    loaded.trace.metadata.properties.emplace_back("capture.torch_history",
                                                  std::to_string(merged.events));
    loaded.trace.finalize();
    const fs::path partial = path.string() + ".partial";
    trace::write_tdtrace(partial, loaded.trace);
    fs::rename(partial, path);
    fs::remove(history, ec);
    fmt::print("torch     process {}: {} caching-allocator events from PyTorch's allocation "
               "history merged ({} ns clock offset)\n",
               *pid, merged.events, merged.offset_ns);
  }
}
#endif

#if TDIAG_CLI_HAS_TRACE
// One line per process, through the job loader the whole-job analyses use (so a rank it cannot
// tell apart fails here, not later).
void print_job(const fs::path& folder) {
  const auto job = load_trace_job({folder.string()});
  fmt::print("job       {} processes in {}\n", job.size(), folder.string());
  for (const auto& m : job) {
    const auto& t = m.loaded.trace;
    const std::string* pid = t.metadata.property("capture.pid");
    const std::string* source = t.metadata.property("capture.rank_source");
    fmt::print("  rank {:<4} {}  pid {}  rank from {}  {} kernels  {} events  {} dropped\n", m.rank,
               m.path.filename().string(), pid ? *pid : "?", source ? *source : "?",
               t.kernels.size(), t.event_count(), t.metadata.dropped_records);
  }
  fmt::print("analyse   tdiag trace analyze {}\n", folder.string());
}
#endif

// Every range of the command line as TDIAG_CAPTURE_RANGES text, checked before the application
// starts (the library parses the same text with the same parser).
std::string range_text(const capture_args& a) {
  std::vector<std::string> all = a.ranges;
  if (!a.delay.empty() || !a.duration.empty())
    all.push_back(fmt::format("time:{}:{}", a.delay.empty() ? "0" : a.delay, a.duration));
  if (!a.launches.empty())
    all.push_back("launches:" + a.launches);
  std::string text;
  for (const auto& r : all) {
    if (r.find(';') != std::string::npos)
      tdiag::capture::detail::bad_range(r, "';' separates ranges; an NVTX name cannot hold one");
    (void)tdiag::capture::parse_range(r);
    text += (text.empty() ? "" : ";") + r;
  }
  return text;
}

// Runs the application; in `folder` mode each process writes its own trace there.
int launch(const capture_args& a, const fs::path& output, bool folder, torch_hook& hook) {
  const auto library = find_capture_library(a.library);
  const auto ranges = range_text(a); // a bad one fails before anything runs or is removed
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_INJECTION64_PATH", library.string()},
      {"TDIAG_CAPTURE_STACKS", a.stacks ? "1" : "0"},
      {"TDIAG_CAPTURE_RUNTIME_API", (a.api || a.runtime_api) && !a.no_runtime_api ? "1" : "0"},
      {"TDIAG_CAPTURE_DRIVER_API", (a.api || a.driver_api) && !a.no_driver_api ? "1" : "0"},
      {"TDIAG_CAPTURE_MEMORY", a.kernels_only ? "0" : "1"},
  };
  if (folder) {
    fs::create_directories(output, ec);
    remove_earlier_job(output);
    fs::create_directories(output / "others", ec); // the PyTorch histories' (history_prefix)
    env.emplace_back("TDIAG_CAPTURE_OUTPUT_DIR", output.string());
  } else {
    fs::remove(output, ec); // the first process of the run claims the path again
    for (const auto& old : sibling_traces(output))
      fs::remove(old, ec);
    env.emplace_back("TDIAG_CAPTURE_OUTPUT", output.string());
    env.emplace_back("TDIAG_CAPTURE_EXCLUSIVE", "1");
  }
  if (!ranges.empty())
    env.emplace_back("TDIAG_CAPTURE_RANGES", ranges);
  if (!a.no_torch_history)
    add_torch_hook(hook, a, history_prefix(output, folder), env);
  return run_child(a.command, env);
}

void run_capture(const capture_args& a, command_context& context) {
  if (a.command.empty())
    throw_input_error(tdiag::capture::codes::no_application, "no application to run",
                      "nothing after `--`",
                      "Usage: tdiag capture -o run.tdtrace [--stacks] -- ./app args...");
  const bool folder = is_job_folder(a.output);
  fs::path output = fs::absolute(a.output).lexically_normal();
  if (output.filename().empty()) // "run/"
    output = output.parent_path();
  torch_hook hook;
  const int status = launch(a, output, folder, hook);
  std::string command_text;
  for (const auto& c : a.command)
    command_text += (command_text.empty() ? "" : " ") + c;
  fmt::print("\ntdiag capture: `{}` exited with status {}\n", command_text, status);
  context.status = status;
  const auto traces = folder ? job_traces(output) : sibling_traces(output);
  if (folder ? traces.empty() : !fs::exists(output)) {
    fmt::print("no trace written: the application never initialised CUDA, or capture could not "
               "start (see its messages above)\n");
    if (status == 0)
      context.status = exit_usage;
    return;
  }
#if TDIAG_CLI_HAS_TRACE
  if (folder) {
    merge_torch_histories(traces, history_prefix(output, folder));
    std::error_code ec;
    fs::remove(output / "others", ec); // only when empty: nothing left there, nothing set aside
    set_aside_rankless(output);
    print_job(output);
    return;
  }
  auto all = traces;
  all.insert(all.begin(), output);
  merge_torch_histories(all, history_prefix(output, folder));
  print_summary(trace::load_trace(output), output);
#else
  fmt::print("trace     {} (this tdiag has no trace library: no summary)\n", output.string());
#endif
  if (!folder)
    for (const auto& extra : traces)
      fmt::print("also      {} (another process of the run)\n", extra.string());
}

const command_registration registration{
    40, [](CLI::App& app, command_context& context) {
      auto args = std::make_shared<capture_args>();
      auto* cmd = app.add_subcommand(
          "capture", "Run a CUDA application with CUPTI capture into a .tdtrace file");
      cmd->add_option("-o,--output", args->output, "Trace file to write")->capture_default_str();
      cmd->add_flag("--stacks", args->stacks, "Host stack of every kernel launch and allocation");
      cmd->add_flag("--api", args->api,
                    "Also record CUDA runtime and driver API calls (kernels tied to host threads; "
                    "costs launch-bound programs more, docs/capture.md)");
      cmd->add_flag("--runtime-api", args->runtime_api, "Also record CUDA runtime API calls");
      cmd->add_flag("--driver-api", args->driver_api, "Also record CUDA driver API calls");
      cmd->add_flag("--kernels-only", args->kernels_only,
                    "Record kernels only: no copies, memsets, allocations or pool events");
      cmd->add_flag("--no-runtime-api", args->no_runtime_api,
                    "Leave out CUDA runtime API calls (the default; wins over --api)");
      cmd->add_flag("--no-driver-api", args->no_driver_api,
                    "Leave out CUDA driver API calls (the default; wins over --api)");
      cmd->add_flag("--no-torch-history", args->no_torch_history,
                    "Leave out PyTorch's caching-allocator blocks (a PyTorch application's "
                    "allocation history, merged into the trace)");
      cmd->add_flag("--torch-cpp-stacks", args->torch_cpp_stacks,
                    "C++ frames too in PyTorch's allocation history (PyTorch symbolizes them "
                    "when the program exits, which lengthens its exit)");
      cmd->add_option("--range", args->ranges,
                      "Capture only inside this range (repeatable; the union is captured): "
                      "cuda-profiler-api, nvtx:NAME, launches:A:B, time:DELAY:DURATION");
      cmd->add_option("--delay", args->delay, "Start capturing S seconds after CUDA starts");
      cmd->add_option("--duration", args->duration, "Capture for S seconds (after --delay)");
      cmd->add_option("--launches", args->launches,
                      "Capture kernel launches A to B-1 of each process (A:B, counted from 0)");
      cmd->add_option("--library", args->library,
                      "libtdiag_capture.so to inject (default: beside tdiag, in ../lib)");
      cmd->add_option("command", args->command, "The application and its arguments, after --")
          ->required();
      cmd->callback([args, &context] { run_capture(*args, context); });
    }};

} // namespace
} // namespace tdiag::cli
