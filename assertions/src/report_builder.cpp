// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// From failure records to a tdiag::report: one TDIAG-DSA-001 diagnostic per failing site with the
// first failure's values, place and launch, the exact count, and the launch site's stack.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "host_ticks.hpp"
#include "launch_binding.hpp"
#include "runtime_state.hpp"
#include "site_text.hpp"

namespace tdiag::assertions::detail {
namespace {

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string display_path(const std::string& file) {
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (ec || file.empty() || file.front() != '/')
    return file;
  // `a/../b` as a header included from a sibling folder spells it: shown as `b`.
  const std::string normal = std::filesystem::path(file).lexically_normal().string();
  const std::string prefix = cwd.string() + "/";
  return normal.rfind(prefix, 0) == 0 ? normal.substr(prefix.size()) : normal;
}

std::string triple(const std::uint32_t* v) {
  return fmt::format("({},{},{})", v[0], v[1], v[2]);
}
std::string triple(const extent3& e) {
  return fmt::format("({},{},{})", e.x, e.y, e.z);
}
field_value list3(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return field_value::list{x, y, z};
}

// Demangled name of a kernel address, symbolized once per address (addr2line is slow).
std::string kernel_symbol(const void* kernel) {
  static std::mutex mutex;
  static std::map<const void*, std::string> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(kernel); it != cache.end())
    return it->second;
  raw_stack s;
  // Symbolizers treat addresses as return addresses (they look one byte back): step inside.
  s.frames[0] = reinterpret_cast<std::uintptr_t>(kernel) + 1;
  s.size = 1;
  std::string name;
  const auto frames = symbolize(s);
  if (!frames.empty())
    name = short_function_name(frames.front().function);
  return cache[kernel] = name;
}

std::string kernel_name(const launch_info& launch, const std::string& site_function) {
  if (launch.kernel_name != nullptr)
    return strip_parentheses(launch.kernel_name);
  std::string name = kernel_symbol(launch.kernel);
  if (name.empty() || name.find("??") != std::string::npos)
    name = site_function;
  return name.empty() ? fmt::format("kernel@{}", launch.kernel) : name;
}

const trap_text_area* trap_area(const device_state& ds) {
  // A non-coherent buffer's host copy still holds the header as the back-end first wrote it.
  if (ds.buffer.host == nullptr)
    return nullptr;
  const auto* h = static_cast<const buffer_header*>(ds.buffer.host);
  return reinterpret_cast<const trap_text_area*>(static_cast<std::uintptr_t>(h->reserved[2]));
}

struct site_group {
  std::uint64_t site = 0;
  std::uint64_t count = 0;
  const taken_record* first = nullptr;
  std::uint64_t records = 0;
};

// The site's text: from the device, else (a trap killed the context) from the copy the trapping
// thread saved in host memory (gpu_fail.h, save_site_text), else a placeholder; the record
// (block, thread, values, launch) is in host memory either way. `unreadable` says why not read.
site_text site_text_of(const device_state& ds, const site_group& g, std::string& unreadable) {
  site_text site;
  try {
    return read_site(*ds.owner, ds.device, g.site);
  } catch (const error& e) {
    unreadable = e.what();
  }
  if (auto saved = saved_site(trap_area(ds), g.site)) {
    unreadable.clear();
    return *saved;
  }
  site.file = "?";
  site.expression = fmt::format("<assertion site {:#x}: text unreadable>", g.site);
  if (g.first != nullptr)
    site.operand_count = g.first->record.operand_count;
  return site;
}

// Where the caller's frames start in a stack taken inside a launch: past CUPTI, the CUDA
// libraries, the runtime's inline launch templates and the generated host stubs.
std::size_t first_user_frame(const std::vector<stack_frame>& stack, const std::string& kernel) {
  const auto in = [](const std::string& s, std::string_view part) {
    return s.find(part) != std::string::npos;
  };
  const auto starts = [](const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
  };
  for (std::size_t i = 0; i < stack.size(); ++i) {
    const stack_frame& f = stack[i];
    if (in(f.module, "libcuda") || in(f.module, "libcupti") || in(f.file, "cuda_runtime") ||
        in(f.file, ".stub.c") || starts(f.function, "tdiag::") ||
        starts(f.function, "__device_stub") || starts(f.function, "cudaLaunch") ||
        starts(f.function, "cuLaunch") || starts(f.function, "cudaGraphLaunch") ||
        (!kernel.empty() && short_function_name(f.function) == kernel)) // nvcc's host twin
      continue;
    return i;
  }
  return stack.size();
}

// A launch's configuration, host thread and launch site, for one the host registered.
void describe_known_launch(diagnostic& d, std::string& message, const launch_info& launch,
                           const std::string& kernel, const std::string& how) {
  message += fmt::format(", {}launch #{} of {} grid {} block {} stream {} on device {}", how,
                         launch.launch_id, kernel, triple(launch.grid), triple(launch.block),
                         reinterpret_cast<const void*>(launch.stream), launch.device);
  d.add_field("kernel", kernel);
  d.add_field("grid", list3(launch.grid.x, launch.grid.y, launch.grid.z));
  d.add_field("block_dim", list3(launch.block.x, launch.block.y, launch.block.z));
  d.add_field("shared_memory", launch.shared_memory);
  d.add_field("stream", fmt::format("{}", reinterpret_cast<const void*>(launch.stream)));
  d.add_field("device", launch.device);
  d.add_field("host_thread", launch.host_thread);
  d.add_field("launch_time_ns", ticks_to_realtime_ns(launch.host_ticks));
  if (launch.stack.size != 0)
    d.stack = symbolize(launch.stack);
  std::string file = launch.file != nullptr ? display_path(launch.file) : std::string();
  std::uint32_t line = launch.line;
  std::string fn = launch.function != nullptr ? launch.function : "";
  if (launch.file == nullptr) {
    // A launch registered inside the CUDA runtime (TDIAG_BIND=cupti): the site is the caller's
    // first frame, and the frames above it are the libraries'.
    const auto first = static_cast<std::ptrdiff_t>(first_user_frame(d.stack, kernel));
    d.stack.erase(d.stack.begin(), d.stack.begin() + first);
    if (d.stack.empty())
      return;
    const stack_frame& f = d.stack.front();
    fn = short_function_name(f.function);
    if (f.file.empty()) { // no line tables: the function and its module
      message += fmt::format(", launched from {}() in {}", fn, f.module);
      d.add_field("launch_site", fmt::format("{} ({})", fn, f.module));
      return;
    }
    file = display_path(f.file);
    line = f.line;
  }
  if (file.empty())
    return;
  message += fmt::format(", launched from {}:{} {}()", file, line, fn);
  d.related.push_back({source_location{file, line, 0, fn}, "kernel launched here"});
  d.add_field("launch_site", fmt::format("{}:{}", file, line));
}

// A plain launch that TDIAG_BIND=cupti registered: the GPU's configuration from CUPTI's kernel
// record, the rest from the launching call (the call of cudaGraphLaunch for a graph's kernel).
void describe_bound_launch(diagnostic& d, std::string& message, const bound_launch& b,
                           std::uint64_t grid_id) {
  d.add_field("registered_launch", false);
  d.add_field("bound_through", "cupti");
  d.add_field("grid_id", grid_id);
  const std::string how =
      b.graph_id != 0 ? fmt::format("kernel node of CUDA graph {} run by graph ", b.graph_id)
                      : std::string("plain ");
  if (b.graph_id != 0)
    d.add_field("cupti_graph_id", b.graph_id);
  if (b.info) {
    launch_info launch = *b.info;
    launch.grid = b.grid;
    launch.block = b.block;
    launch.shared_memory = b.shared_memory;
    describe_known_launch(d, message, launch, short_function_name(b.kernel), how);
    d.notes.push_back("a launch made without tensordiag, registered through CUPTI "
                      "(TDIAG_BIND=cupti)");
    if (b.runs > 1)
      d.notes.push_back(fmt::format(
          "the graph ran this kernel node {} times since the last check and every run has one "
          "grid id: the failure is in one of them, the latest is named; check after each replay "
          "to know which",
          b.runs));
    return;
  }
  message +=
      fmt::format(", grid id {}: {}{} grid {} block {} (bound through CUPTI; its launching "
                  "call is no longer in the launch registry)",
                  grid_id, how, short_function_name(b.kernel), triple(b.grid), triple(b.block));
  d.add_field("kernel", short_function_name(b.kernel));
  d.add_field("grid", list3(b.grid.x, b.grid.y, b.grid.z));
  d.add_field("block_dim", list3(b.block.x, b.block.y, b.block.z));
}

// The failing thread's block, thread and SM, and the launch it belongs to as far as it is known:
// registered, a CUDA graph replay of a captured launch, a plain launch (bound through CUPTI or
// not), or one the ring lost.
void describe_launch(diagnostic& d, std::string& message, const failure_record* r, int device,
                     const std::string& where_fn) {
  message += fmt::format(", block {} thread {}", triple(r->block), triple(r->thread));
  d.add_field("block", list3(r->block[0], r->block[1], r->block[2]));
  d.add_field("thread", list3(r->thread[0], r->thread[1], r->thread[2]));
  d.add_field("sm", r->sm);
  d.add_field("lane", r->lane);
  d.add_field("device_timestamp_ns", r->timestamp_ns);
  // flags: 0 = tdiag::launch, 1 = plain <<<>>> (launch_id is %gridid), 2 = replay of a launch
  // captured into a CUDA graph (launch_id is the captured launch).
  // A graph's launch is pinned at capture (runtime.cpp): the ring may have lost it since.
  const bool graph_replay = r->flags == 2;
  const auto pinned = graph_replay ? find_graph_launch(r->launch_id) : std::nullopt;
  const auto launch = pinned                          ? std::optional(pinned->info)
                      : r->flags == 0 || graph_replay ? state().registry->find(r->launch_id)
                                                      : std::nullopt;
  d.add_field("launch_id", r->launch_id);
  std::string graph;
  if (graph_replay) {
    d.add_field("graph_replay", true);
    if (pinned && pinned->capture_id != 0) {
      graph = fmt::format(" (capture #{} into graph {})", pinned->capture_id, pinned->graph);
      d.add_field("graph_capture_id", pinned->capture_id);
      d.add_field("graph", fmt::format("{}", pinned->graph));
    }
    d.notes.push_back(fmt::format("the kernel ran as a node of a CUDA graph replay{}; the node was "
                                  "captured from launch #{}; which replay is not known (the "
                                  "graph launch call is not intercepted)",
                                  graph, r->launch_id));
  }
  std::optional<bound_launch> bound;
  if (launch) {
    describe_known_launch(
        d, message, *launch, kernel_name(*launch, where_fn),
        graph_replay ? fmt::format("CUDA graph replay{} of the kernel node captured from ", graph)
                     : std::string());
  } else if (r->flags == 1 && (bound = find_bound_launch(device, r->launch_id))) {
    describe_bound_launch(d, message, *bound, r->launch_id);
  } else if (r->flags != 0) {
    message += fmt::format(", grid id {} (an unregistered launch: no grid, stream or launch "
                           "site known)",
                           r->launch_id);
    d.add_field("registered_launch", false);
    d.notes.push_back("the kernel was launched without tensordiag (<<<>>>, cudaLaunchKernel, a "
                      "library's launcher or a graph node): launch it with TDIAG_LAUNCH or "
                      "tdiag::launch, or run with TDIAG_BIND=cupti, to get its grid, stream and "
                      "host launch site");
  } else if (r->launch_id == 0) {
    message += ", launched without the launch registry (TDIAG_ASSERTIONS=0 or a foreign launch)";
  } else {
    message += fmt::format(", launch #{} (no longer in the launch registry, which keeps the last "
                           "{} launches; raise TDIAG_LAUNCH_RECORDS)",
                           r->launch_id, state().registry->capacity());
    d.notes.push_back("launch details were overwritten by later launches");
  }
}

diagnostic site_diagnostic(const device_state& ds, const site_group& g,
                           const runtime_config& config, std::string_view reason) {
  std::string unreadable;
  const site_text site = site_text_of(ds, g, unreadable);
  diagnostic d;
  if (!unreadable.empty())
    d.notes.push_back(fmt::format("the site's text could not be read from the device ({}); a "
                                  "trapped launch leaves the context unusable",
                                  unreadable));
  d.code = codes::assertion_failed;
  d.title = "device assertion failed";
  d.location = source_location{display_path(site.file), site.line, 0, site.function};
  const failure_record* r = g.first ? &g.first->record : nullptr;
  const assertion_text text = describe(site, r);
  const std::string where_fn = short_function_name(site.function);

  std::string message =
      fmt::format("assertion failed: {} in {} at {}:{}", text.headline,
                  where_fn.empty() ? "?" : where_fn, display_path(site.file), site.line);
  d.add_field("condition", text.condition);
  if (!site.message.empty())
    d.add_field("message_format", site.message);
  d.add_field("function", site.function);
  d.add_field("file", display_path(site.file));
  d.add_field("line", site.line);
  d.add_field("site_id", fmt::format("{:08x}", site.site_id));
  for (const auto& v : text.values)
    d.add_field(fmt::format("value {}", v.name), v.value);

  if (r != nullptr) {
    describe_launch(d, message, r, ds.device, where_fn);
  } else {
    message += " (no detailed record: the record ring was full; raise TDIAG_ASSERT_RECORDS)";
  }
  d.add_field("backend", std::string(ds.owner->name()));
  d.add_field("device_name", ds.properties.name);
  d.add_field("site_failures", g.count);
  const std::uint64_t more = g.count > 0 ? g.count - 1 : 0;
  d.add_field("more_failures_at_site", more);
  if (more != 0) {
    message +=
        fmt::format(", and {} more failure{} at this site", grouped(more), more == 1 ? "" : "s");
    d.notes.push_back(fmt::format("{} more failure{} at this site ({} with detailed records)",
                                  grouped(more), more == 1 ? "" : "s",
                                  grouped(g.records - (g.records ? 1 : 0))));
  }
  d.message = std::move(message);
  d.add_field("policy", config.failure_policy == policy::trap ? "trap" : "record");
  d.add_field("runtime_enabled", config.enabled); // TDIAG_ASSERTIONS
  if (!reason.empty())
    d.notes.push_back(std::string(reason));
  if (config.failure_policy == policy::record)
    d.notes.push_back("policy record: the failing threads stopped; the device stays usable");
  if (!text.hint.empty())
    d.hint = text.hint;
  return d;
}

} // namespace

report build_report(const std::vector<device_failures>& failures, const runtime_config& config,
                    std::string_view reason) {
  report rep;
  rep.metadata = make_report_metadata();
  if (failures.size() == 1)
    rep.metadata.device = failures.front().state->device;
  for (const auto& f : failures) {
    std::map<std::uint64_t, site_group> groups;
    std::vector<std::uint64_t> order; // sites in order of their first record
    for (const auto& t : f.records) {
      auto& g = groups[t.record.site];
      if (g.first == nullptr) {
        g.site = t.record.site;
        g.first = &t;
        order.push_back(t.record.site);
      }
      ++g.records;
    }
    for (const auto& [site, count] : f.site_counts) {
      auto& g = groups[site];
      if (g.site == 0) {
        g.site = site;
        order.push_back(site);
      }
      g.count = count;
    }
    for (auto& [site, g] : groups)
      g.count = std::max(g.count, g.records);
    for (const auto site : order)
      rep.diagnostics.push_back(site_diagnostic(*f.state, groups[site], config, reason));
    if (order.empty() && f.total != 0) {
      // Claimed but neither counted nor published within the reader's wait: still a failure.
      diagnostic d;
      d.code = codes::assertion_failed;
      d.title = "device assertion failed";
      d.message =
          fmt::format("{} device assertion failure{} on device {}; the failing thread{} had "
                      "not finished writing {} record when the host looked",
                      grouped(f.total), f.total == 1 ? "" : "s", f.state->device,
                      f.total == 1 ? "" : "s", f.total == 1 ? "its" : "their");
      d.add_field("backend", std::string(f.state->owner->name()));
      d.add_field("device", f.state->device);
      d.hint = "call tdiag::synchronize_and_check() after the launch to read the complete record";
      if (!reason.empty())
        d.notes.push_back(std::string(reason));
      rep.diagnostics.push_back(std::move(d));
      order.push_back(0);
    }
    if (!rep.diagnostics.empty()) {
      auto& first = rep.diagnostics[rep.diagnostics.size() - order.size()];
      first.add_field("total_failures", f.total);
      first.add_field("dropped_records", f.dropped);
      first.add_field("records_in_flight", f.in_flight);
      first.notes.insert(first.notes.end(), f.notes.begin(), f.notes.end());
      if (f.dropped != 0)
        first.notes.push_back(fmt::format("{} failure{} had no room for a detailed record (ring of "
                                          "{}; counts stay exact)",
                                          grouped(f.dropped), f.dropped == 1 ? "" : "s",
                                          f.state->record_capacity));
      if (f.overflow != 0)
        first.notes.push_back(fmt::format("{} failures at sites beyond the site table (raise "
                                          "TDIAG_ASSERT_SITES)",
                                          grouped(f.overflow)));
    }
  }
  return rep;
}

} // namespace tdiag::assertions::detail
