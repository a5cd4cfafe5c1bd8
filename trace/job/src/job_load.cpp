// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/parallel_for.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <climits>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <glob.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag::trace {

namespace {

bool looks_like_trace_file(const std::filesystem::path& p) {
  const auto name = p.filename().string();
  for (const auto* ext : {".json", ".json.gz", ".tdtrace", ".pickle", ".pkl"})
    if (name.ends_with(ext))
      return true;
  return false;
}

// A rank a source states, or -1; `problem` says why one it states is none (negative, past int,
// not below the world size it states).
struct stated_rank {
  int rank = -1;
  std::string problem;
};

stated_rank distributed_rank(const trace& t) {
  const auto* value = t.metadata.property("distributed.rank");
  if (!value)
    return {};
  long long rank = -1;
  const auto [p, ec] = std::from_chars(value->data(), value->data() + value->size(), rank);
  if (ec != std::errc{} || p != value->data() + value->size() || rank < 0 || rank > INT_MAX)
    return {-1, fmt::format("distributedInfo.rank {} is no rank", *value)};
  long long world = 0;
  if (const auto* ws = t.metadata.property("distributed.world_size")) {
    const auto [q, wec] = std::from_chars(ws->data(), ws->data() + ws->size(), world);
    if (wec == std::errc{} && q == ws->data() + ws->size() && world > 0 && rank >= world)
      return {-1,
              fmt::format("distributedInfo.rank {} is not below its world_size {}", rank, world)};
  }
  return {static_cast<int>(rank), {}};
}

// A member whose source states a rank that is none: said, as the rank it takes is not the one
// the file claims.
void warn_stated_rank(job_member& m, const std::string& problem, std::string_view taken) {
  diagnostic d;
  d.level = severity::warning;
  d.code = std::string(codes::no_rank);
  d.title = "the rank source gives no rank";
  d.message = fmt::format("{}: {}; the file {}", m.path.string(), problem, taken);
  d.add_field("file", m.path.string());
  m.loaded.warnings.push_back(std::move(d));
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

namespace {

// A folder's or a glob's entry that is no trace file to open: a link that loops or leads
// nowhere, a FIFO (opening one waits for a writer, maybe forever), a socket or a device. One
// line says which; the other files of the job still load.
std::optional<std::string> why_not_a_file(const std::filesystem::path& p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto link = fs::symlink_status(p, ec);
  if (ec)
    return fmt::format("cannot be examined ({})", ec.message());
  const auto target = fs::status(p, ec);
  if (ec || target.type() == fs::file_type::not_found)
    return link.type() == fs::file_type::symlink
               ? fmt::format("a symbolic link that {}",
                             ec.value() == ELOOP ? "loops" : "leads to no file")
               : fmt::format("cannot be examined ({})", ec.message());
  switch (target.type()) {
  case fs::file_type::regular:
    return std::nullopt;
  case fs::file_type::fifo:
    return std::string("a FIFO (never opened: it would wait for a writer)");
  case fs::file_type::directory:
    return std::string("a folder (folders are not searched recursively)");
  default:
    return std::string("not a regular file");
  }
}

void skip_entry(const std::filesystem::path& p, const std::string& why,
                std::vector<diagnostic>* skipped) {
  diagnostic d;
  d.level = severity::warning;
  d.code = std::string(codes::no_trace_file);
  d.title = "job entry skipped";
  d.message = fmt::format("{}: skipped: {}", p.string(), why);
  d.add_field("file", p.string());
  if (skipped)
    skipped->push_back(std::move(d));
}

} // namespace

std::vector<std::filesystem::path> expand_job_inputs(std::span<const std::string> inputs,
                                                     std::vector<diagnostic>* skipped) {
  std::vector<std::filesystem::path> out;
  // Entries found by a folder or a glob (never by an explicit name) that cannot be opened as a
  // file are skipped with a line each.
  const auto add_found = [&](std::vector<std::filesystem::path>& files,
                             const std::filesystem::path& p) {
    if (const auto why = why_not_a_file(p))
      skip_entry(p, *why, skipped);
    else
      files.push_back(p);
  };
  for (const auto& input : inputs) {
    std::error_code ec;
    if (input == "-") { // standard input, read whole as every stream is
      out.emplace_back(input);
    } else if (std::filesystem::is_directory(input, ec)) {
      std::vector<std::filesystem::path> files;
      // Not the iterator's increment that throws: an unreadable entry ends only its own line.
      std::filesystem::directory_iterator it(input, ec), end;
      for (; !ec && it != end; it.increment(ec))
        if (looks_like_trace_file(it->path()))
          add_found(files, it->path());
      if (ec)
        skip_entry(input, fmt::format("the folder cannot be listed ({})", ec.message()), skipped);
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else if (std::filesystem::exists(input, ec)) {
      out.emplace_back(input);
    } else if (input.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      std::vector<std::filesystem::path> files;
      if (::glob(input.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i)
          add_found(files, g.gl_pathv[i]);
      ::globfree(&g);
      out.insert(out.end(), files.begin(), files.end());
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
  std::string problem;
  return rank_from_file_name(path, problem);
}

int rank_from_file_name(const std::filesystem::path& path, std::string& problem) {
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
    if (ec == std::errc::result_out_of_range)
      problem = fmt::format("the rank in the file name ({}) is past int", name.substr(pos));
  }
  return -1;
}

std::vector<job_member> load_job(std::span<const std::string> inputs,
                                 const job_load_options& options,
                                 std::vector<diagnostic>* skipped) {
  const auto files = expand_job_inputs(inputs, skipped);
  std::vector<job_member> members(files.size());
  detail::parallel_for(files.size(), options.threads, [&](std::size_t i) {
    members[i].path = files[i];
    members[i].loaded = load_trace(files[i], options.load);
  });

  std::map<int, std::size_t> claimed;
  const bool automatic = options.ranks == rank_source::automatic;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& m = members[i];
    const auto info = distributed_rank(m.loaded.trace);
    std::string name_problem;
    const int from_name = rank_from_file_name(m.path, name_problem);
    const bool by_info = options.ranks == rank_source::distributed || (automatic && info.rank >= 0);
    m.rank = options.ranks == rank_source::position ? static_cast<int>(i)
             : by_info                              ? info.rank
                                                    : from_name;
    const auto& problem =
        by_info || options.ranks == rank_source::distributed ? info.problem : name_problem;
    if (automatic) {
      // A rank stated that is none is said, with the rank the file takes instead.
      const auto taken = m.rank >= 0 ? fmt::format("takes rank {} from its file name", m.rank)
                                     : std::string("takes the lowest rank no other file states");
      if (!info.problem.empty())
        warn_stated_rank(m, info.problem, taken);
      else if (m.rank < 0 && !name_problem.empty())
        warn_stated_rank(m, name_problem, taken);
      if (m.rank < 0)
        continue; // placed below, in the ranks no file states
    }
    if (m.rank < 0)
      throw_input_error(codes::no_rank, "no rank",
                        fmt::format("{}: {}", m.path.string(),
                                    !problem.empty() ? problem
                                    : options.ranks == rank_source::distributed
                                        ? "the trace's distributedInfo states no rank"
                                        : "the file name (like rank-3) states no rank"),
                        "use --rank-from position, or name the files by rank");
    if (const auto [it, fresh] = claimed.emplace(m.rank, i); !fresh)
      throw_input_error(codes::rank_claimed_twice, "rank claimed twice",
                        fmt::format("{}: rank {} is also {}", m.path.string(), m.rank,
                                    members[it->second].path.string()),
                        "pass one file per rank, or use --rank-from position");
  }
  // Files that state no rank take the lowest ranks no other file states, in input order: a
  // position could collide with a rank another file states.
  int free_rank = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].rank >= 0)
      continue;
    while (claimed.contains(free_rank))
      ++free_rank;
    members[i].rank = free_rank;
    claimed.emplace(free_rank, i);
  }
  std::int64_t earliest = INT64_MAX;
  for (const auto& m : members)
    if (m.loaded.trace.metadata.time_origin_ns != 0)
      earliest = std::min(earliest, m.loaded.trace.metadata.time_origin_ns);
  for (auto& m : members)
    if (m.loaded.trace.metadata.time_origin_ns != 0)
      // Saturated to the model's time range: base times of +-INT64_MAX (hostile or broken
      // writers) must not wrap into small offsets, and offset + time must not overflow.
      m.clock_offset_ns =
          detail::clamp_time(detail::wide_int{m.loaded.trace.metadata.time_origin_ns} - earliest);
  std::sort(members.begin(), members.end(),
            [](const job_member& a, const job_member& b) { return a.rank < b.rank; });
  return members;
}

} // namespace tdiag::trace
