// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/capture/process_output.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace tdiag::capture {
namespace {

// The first of `names` holding a non-negative integer, with the name it came from.
std::pair<int, const char*> first_number(const environment_lookup& lookup,
                                         std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = lookup(name);
    if (v == nullptr || *v == '\0')
      continue;
    const std::string_view s(v);
    int n = -1;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc{} && end == s.data() + s.size() && n >= 0)
      return {n, name};
  }
  return {-1, nullptr};
}

// O_EXCL: exactly one process of the job wins each name.
bool create_exclusively(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0)
    return false;
  ::close(fd);
  return true;
}

} // namespace

process_identity identify_process(std::int64_t pid, const environment_lookup& lookup) {
  const environment_lookup env =
      lookup ? lookup : [](const char* name) -> const char* { return std::getenv(name); };
  process_identity who;
  who.pid = pid;
  const auto [rank, source] =
      first_number(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK"});
  who.rank = rank;
  who.rank_source = source != nullptr ? source : "pid";
  who.local_rank =
      first_number(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}).first;
  who.world_size =
      first_number(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}).first;
  return who;
}

std::string process_file_name(const process_identity& who) {
  return who.rank >= 0 ? fmt::format("rank{}.tdtrace", who.rank)
                       : fmt::format("pid{}.tdtrace", who.pid);
}

std::filesystem::path claim_process_file(const std::filesystem::path& folder,
                                         const process_identity& who) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  auto path = folder / process_file_name(who);
  if (create_exclusively(path))
    return path;
  const auto others = folder / "others";
  std::filesystem::create_directories(others, ec);
  return others / (who.rank >= 0 ? fmt::format("rank{}.{}.tdtrace", who.rank, who.pid)
                                 : fmt::format("pid{}.tdtrace", who.pid));
}

std::vector<std::pair<std::string, std::string>> identity_properties(const process_identity& who) {
  std::vector<std::pair<std::string, std::string>> out;
  if (who.rank >= 0)
    out.emplace_back("distributed.rank", std::to_string(who.rank));
  if (who.local_rank >= 0)
    out.emplace_back("distributed.local_rank", std::to_string(who.local_rank));
  if (who.world_size >= 0)
    out.emplace_back("distributed.world_size", std::to_string(who.world_size));
  out.emplace_back("capture.rank_source", who.rank_source);
  return out;
}

} // namespace tdiag::capture
