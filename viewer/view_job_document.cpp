// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/job_load.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "view_job.hpp"

namespace tdiag::view {

namespace {

// Track titles say the rank, and the device or process the rank's own trace gave (merge_job
// may have moved it apart from another rank's).
void title_tracks(document& doc, const job_document& job) {
  const auto& t = doc.trace;
  for (auto& tr : doc.layout.tracks()) {
    if (tr.lane >= job.lanes.size())
      continue;
    const auto& origin = job.lanes[tr.lane];
    const auto& ln = t.lanes.at(tr.lane);
    switch (tr.kind) {
    case track_kind::gpu_stream:
      tr.title = fmt::format("rank {} · GPU {} · stream {}", origin.rank, origin.group, ln.id);
      break;
    case track_kind::memory:
      tr.title = origin.group < 0
                     ? fmt::format("rank {} · host memory", origin.rank)
                     : fmt::format("rank {} · GPU {} · memory", origin.rank, origin.group);
      break;
    case track_kind::host_thread:
      tr.title = fmt::format("rank {} · {}", origin.rank, tr.title);
      tr.subtitle = fmt::format("pid {} · tid {} · {} events", origin.group,
                                static_cast<std::int64_t>(ln.id), tr.event_count);
      break;
    }
  }
  // The GPU and memory lanes of every rank first, rank by rank, then the host threads rank by
  // rank: a collective's link between the ranks' NCCL streams stays on screen.
  std::stable_sort(doc.layout.tracks().begin(), doc.layout.tracks().end(),
                   [&](const track& a, const track& b) {
                     auto key = [&](const track& x) {
                       const int rank = x.lane < job.lanes.size() ? job.lanes[x.lane].rank : 0;
                       return std::pair(x.kind == track_kind::host_thread ? 1 : 0, rank);
                     };
                     return key(a) < key(b);
                   });
}

} // namespace

bool is_job_input(std::span<const std::filesystem::path> traces) {
  if (traces.size() > 1)
    return true;
  if (traces.empty())
    return false;
  std::error_code ec;
  const auto& p = traces.front();
  return std::filesystem::is_directory(p, ec) ||
         (!std::filesystem::exists(p, ec) && p.string().find_first_of("*?[") != std::string::npos);
}

std::unique_ptr<document> load_job_document(std::span<const std::filesystem::path> inputs,
                                            load_progress& progress,
                                            const trace::trace_selection& select) {
  progress.set(fmt::format("reading {} input(s) of the job", inputs.size()), -1.0f);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> names;
  for (const auto& p : inputs)
    names.push_back(p.string());
  trace::job_load_options options;
  options.load.select = select;
  const auto members = trace::load_job(names, options);
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.set(fmt::format("analysing {} rank(s)", members.size()), -1.0f);
  const auto ranks = trace::rank_traces(members);
  auto job = std::make_shared<job_document>();
  job->analysis = trace::analyze_job(ranks);
  for (const auto& m : members)
    job->sources.push_back(m.path.string());
  progress.set("merging the ranks", -1.0f);
  auto merged = trace::merge_job(ranks, job->analysis);
  job->lanes = std::move(merged.lanes);
  auto doc = make_document(std::move(merged.t), progress);
  title_tracks(*doc, *job);
  for (const auto& m : members)
    for (auto w : m.loaded.warnings) {
      w.message = fmt::format("rank {}: {}", m.rank, w.message);
      doc->warnings.push_back(std::move(w));
    }
  for (const auto& w : job->analysis.clocks.warnings)
    doc->warnings.push_back(w);
  doc->path = inputs.front();
  doc->load_seconds = load_seconds;
  for (const auto& m : members) {
    std::error_code ec;
    doc->file_bytes += std::filesystem::file_size(m.path, ec);
  }
  doc->job = std::move(job);
  return doc;
}

} // namespace tdiag::view
