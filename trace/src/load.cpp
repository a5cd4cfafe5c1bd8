// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Format dispatch by content. To add a built-in format: define a function returning an
// `importer` in your own trace/src/<format>_import.cpp (declared in your public header),
// include that header below, and add one line to
// builtin_importers(). Sniffers must be cheap and must not throw; order matters only when two
// sniffers could both accept a file (put the most specific first).
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <fmt/format.h>

#include <fstream>
#include <mutex>

namespace tdiag::trace {

namespace {

std::vector<importer> builtin_importers() {
  std::vector<importer> list;
  list.push_back(tdtrace_importer());
  list.push_back(snapshot_importer());
  list.push_back(kineto_importer());
  return list;
}

std::mutex registry_mutex;
std::vector<importer>& registered() {
  static std::vector<importer> list;
  return list;
}

} // namespace

void register_importer(importer imp) {
  std::lock_guard lock(registry_mutex);
  registered().push_back(std::move(imp));
}

std::vector<importer> importers() {
  auto list = builtin_importers();
  std::lock_guard lock(registry_mutex);
  list.insert(list.end(), registered().begin(), registered().end());
  return list;
}

load_result load_trace(const std::filesystem::path& path, const load_options& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostic d;
    d.code = codes::cannot_open;
    d.title = "cannot open trace file";
    d.message = fmt::format("cannot open trace file '{}'", path.string());
    d.add_field("path", path.string());
    d.hint = "check the path and the file's permissions";
    throw input_error(std::move(d));
  }
  std::vector<std::byte> head(sniff_bytes);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  in.close();

  for (const auto& imp : importers())
    if (imp.sniff && imp.sniff(head))
      return imp.load(path, options);

  std::string names;
  for (const auto& imp : importers())
    names += (names.empty() ? "" : ", ") + imp.name;
  diagnostic d;
  d.code = codes::unknown_format;
  d.title = "unknown trace format";
  d.message = fmt::format("'{}' is not a trace format tensordiag reads ({} bytes inspected)",
                          path.string(), head.size());
  d.add_field("path", path.string());
  d.add_field("formats", names);
  d.hint = "tensordiag reads .tdtrace files, PyTorch memory snapshots (pickle) and PyTorch "
           "profiler / Kineto Chrome trace JSON (plain or gzip)";
  throw input_error(std::move(d));
}

} // namespace tdiag::trace
