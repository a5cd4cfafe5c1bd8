// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "document.hpp"

#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <system_error>
#include <thread>

namespace tdiag::view {

void load_progress::set(std::string phase, float fraction) {
  std::lock_guard lock(mutex_);
  phase_ = std::move(phase);
  fraction_ = fraction;
}

std::pair<std::string, float> load_progress::get() const {
  std::lock_guard lock(mutex_);
  return {phase_, fraction_};
}

bool looks_like_report(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const auto first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && head[first] == '{' &&
         head.find("\"tensordiag.report/") != std::string::npos;
}

namespace {

// One device's memory curve, allocations, allocator replay and seeker.
device_memory build_device_memory(const trace::trace& tr, std::int32_t device) {
  device_memory dm;
  dm.device = device;
  dm.curve = memory_curve::build(tr, dm.device);
  dm.allocations = trace::allocation_lifetimes(tr, dm.device);
  dm.bands = allocation_bands::build(dm.allocations, 24);
  dm.replay = std::make_unique<trace::allocator_replay>(tr, trace::memory_lane_of(tr, dm.device),
                                                        trace::replay_options{});
  dm.seeker = std::make_unique<state_seeker>(*dm.replay);
  std::vector<std::int64_t> times(dm.replay->size());
  for (std::size_t k = 0; k < times.size(); ++k)
    times[k] = dm.replay->events()[k].time;
  dm.window = dense_window(times, 0.97);
  return dm;
}

// The timeline's dense window and the tables.
void build_tables(document& doc) {
  const auto& tr = doc.trace;
  {
    std::vector<std::int64_t> times;
    times.reserve(tr.event_count());
    tr.for_each_store([&](const auto& store) {
      for (const auto& r : store.all())
        times.push_back(trace::begin_time(r));
    });
    std::sort(times.begin(), times.end());
    doc.view_window = dense_window(times, 0.97);
    if (doc.view_window.second <= doc.view_window.first)
      doc.view_window = {doc.span.begin, doc.span.end};
  }
  doc.kernels = kernels_table(tr);
  doc.sites = allocation_sites_table(tr);
  doc.leak_result = trace::find_leaks(tr);
  doc.leaks = leaks_table(tr, doc.leak_result);
  doc.ooms = oom_table(tr);
}

} // namespace

std::unique_ptr<document> make_document(trace::trace t, load_progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto doc = std::make_unique<document>();
  doc->trace = std::move(t);
  if (!doc->trace.finalized())
    doc->trace.finalize();
  const auto& tr = doc->trace;
  doc->span = tr.span();

  progress.set("laying out lanes", 0.1f);
  doc->layout = lane_layout::build(tr);

  // The devices' memory view-models on the other cores, while this thread builds the rest; then
  // it takes the devices left. They only read the finalized trace.
  const auto devices = memory_curve::devices(tr);
  std::vector<device_memory> built_memory(devices.size());
  std::vector<std::exception_ptr> failed(devices.size());
  std::atomic<std::size_t> next{0}, built{0};
  const auto build_devices = [&] {
    for (std::size_t i = next++; i < devices.size(); i = next++) {
      try {
        built_memory[i] = build_device_memory(tr, devices[i]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
      const auto n = ++built;
      progress.set(fmt::format("replaying allocators: {} of {} devices", n, devices.size()),
                   0.3f + 0.5f * static_cast<float>(n) / static_cast<float>(devices.size()));
    }
  };
  {
    std::vector<std::jthread> helpers; // joined when this block ends, also on an exception
    const std::size_t cores = std::max(std::thread::hardware_concurrency(), 2u);
    for (std::size_t k = 0; k < std::min(devices.size(), cores - 1); ++k) {
      try {
        helpers.emplace_back(build_devices);
      } catch (const std::system_error&) {
        break; // no thread to spare: this one builds them below
      }
    }
    build_tables(*doc);
    build_devices();
  }
  for (auto& error : failed)
    if (error)
      std::rethrow_exception(error);
  doc->memory = std::move(built_memory);
  // Devices before the host (-1) pool: the GPU is what people open the view for.
  std::stable_partition(doc->memory.begin(), doc->memory.end(),
                        [](const device_memory& m) { return m.device >= 0; });

  const auto assertions = tr.assertions.all();
  for (std::size_t i = 0; i < assertions.size(); ++i)
    doc->trace_markers.push_back({assertions[i].time,
                                  marker_kind::assertion,
                                  std::string(tr.name(assertions[i].site)),
                                  {event_kind::assertion, static_cast<std::uint32_t>(i)}});
  const auto memory = tr.memory.all();
  for (std::size_t i = 0; i < memory.size(); ++i)
    if (memory[i].action == trace::memory_action::oom)
      doc->trace_markers.push_back(
          {memory[i].time,
           marker_kind::oom,
           fmt::format("OOM: {} requested on device {}",
                       format_bytes(static_cast<double>(memory[i].size)), memory[i].device),
           {event_kind::memory, static_cast<std::uint32_t>(i)}});
  // By time: the views draw one marker per pixel column with binary searches.
  std::stable_sort(doc->trace_markers.begin(), doc->trace_markers.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  doc->model_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.set("ready", 1.0f);
  return doc;
}

std::unique_ptr<document> load_document(const std::filesystem::path& path, load_progress& progress,
                                        const trace::trace_selection& select) {
  progress.set(fmt::format("reading {}", path.filename().string()), -1.0f);
  const auto start = std::chrono::steady_clock::now();
  trace::load_options options;
  options.select = select;
  auto loaded = trace::load_trace(path, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto doc = make_document(std::move(loaded.trace), progress);
  doc->path = path;
  doc->warnings = std::move(loaded.warnings);
  doc->load_seconds = seconds;
  std::error_code ec;
  doc->file_bytes = std::filesystem::file_size(path, ec);
  return doc;
}

} // namespace tdiag::view
