// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <exception>
#include <glob.h>
#include <map>
#include <thread>

namespace tdiag::trace {

namespace {

bool looks_like_trace_file(const std::filesystem::path& p) {
  const auto name = p.filename().string();
  for (const auto* ext : {".json", ".json.gz", ".tdtrace", ".pickle", ".pkl"})
    if (name.ends_with(ext))
      return true;
  return false;
}

int distributed_rank(const trace& t) {
  const auto* value = t.metadata.property("distributed.rank");
  if (!value)
    return -1;
  int rank = -1;
  const auto [p, ec] = std::from_chars(value->data(), value->data() + value->size(), rank);
  return ec == std::errc{} && rank >= 0 ? rank : -1;
}

} // namespace

std::optional<rank_source> rank_source_from_name(std::string_view name) noexcept {
  if (name == "auto")
    return rank_source::automatic;
  if (name == "distributed")
    return rank_source::distributed;
  if (name == "file-name")
    return rank_source::file_name;
  if (name == "position")
    return rank_source::position;
  return std::nullopt;
}

std::vector<std::filesystem::path> expand_job_inputs(std::span<const std::string> inputs) {
  std::vector<std::filesystem::path> out;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (input == "-") { // standard input, read whole as every stream is
      out.emplace_back(input);
    } else if (std::filesystem::is_directory(input, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(input))
        if (entry.is_regular_file() && looks_like_trace_file(entry.path()))
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else if (std::filesystem::exists(input, ec)) {
      out.emplace_back(input);
    } else if (input.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      if (::glob(input.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i)
          out.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
    } else {
      throw_input_error(
          codes::no_trace_file, "no trace file", fmt::format("{}: no such file or folder", input),
          "pass trace files, a folder of them or a quoted glob like 'traces/rank*.json.gz'");
    }
  }
  if (out.empty())
    throw_input_error(
        codes::no_trace_file, "no trace file",
        fmt::format("{}: no trace file matched", inputs.empty() ? "" : inputs.front()),
        "pass trace files, a folder of them or a quoted glob like 'traces/rank*.json.gz'");
  return out;
}

int rank_from_file_name(const std::filesystem::path& path) {
  const auto name = path.filename().string();
  for (auto pos = name.rfind("rank"); pos != std::string::npos;
       pos = pos == 0 ? std::string::npos : name.rfind("rank", pos - 1)) {
    auto i = pos + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == '.'))
      ++i;
    int rank = -1;
    const auto [p, ec] = std::from_chars(name.data() + i, name.data() + name.size(), rank);
    if (ec == std::errc{} && p != name.data() + i)
      return rank;
  }
  return -1;
}

std::vector<job_member> load_job(std::span<const std::string> inputs,
                                 const job_load_options& options) {
  const auto files = expand_job_inputs(inputs);
  std::vector<job_member> members(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      try {
        members[i].path = files[i];
        members[i].loaded = load_trace(files[i], options.load);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  auto threads =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  {
    std::vector<std::jthread> pool;
    for (unsigned i = 1; i < threads; ++i)
      pool.emplace_back(work);
    work();
  }
  for (const auto& e : errors)
    if (e)
      std::rethrow_exception(e);

  std::map<int, std::size_t> claimed;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& m = members[i];
    const int from_info = distributed_rank(m.loaded.trace);
    const int from_name = rank_from_file_name(m.path);
    const bool automatic = options.ranks == rank_source::automatic;
    m.rank = options.ranks == rank_source::position ? static_cast<int>(i)
             : options.ranks == rank_source::distributed || (automatic && from_info >= 0)
                 ? from_info
                 : from_name;
    if (automatic && m.rank < 0)
      m.rank = static_cast<int>(i);
    if (m.rank < 0)
      throw_input_error(codes::no_rank, "no rank",
                        fmt::format("{}: {} states no rank", m.path.string(),
                                    options.ranks == rank_source::distributed
                                        ? "the trace's distributedInfo"
                                        : "the file name (like rank-3)"),
                        "use --rank-from position, or name the files by rank");
    if (const auto [it, fresh] = claimed.emplace(m.rank, i); !fresh)
      throw_input_error(codes::rank_claimed_twice, "rank claimed twice",
                        fmt::format("{}: rank {} is also {}", m.path.string(), m.rank,
                                    members[it->second].path.string()),
                        "pass one file per rank, or use --rank-from position");
  }
  std::int64_t earliest = INT64_MAX;
  for (const auto& m : members)
    if (m.loaded.trace.metadata.time_origin_ns != 0)
      earliest = std::min(earliest, m.loaded.trace.metadata.time_origin_ns);
  for (auto& m : members)
    if (m.loaded.trace.metadata.time_origin_ns != 0)
      m.clock_offset_ns = m.loaded.trace.metadata.time_origin_ns - earliest;
  std::sort(members.begin(), members.end(),
            [](const job_member& a, const job_member& b) { return a.rank < b.rank; });
  return members;
}

} // namespace tdiag::trace
