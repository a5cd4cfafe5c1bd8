// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Format dispatch by content. To add a built-in format: define a function returning an
// `importer` in your own trace/formats/src/<format>/<format>_import.cpp (declared in your public
// header), include that header below, and add one line to builtin_importers(). Sniffers must be
// cheap and must not throw; order matters only when two sniffers could both accept a file (put the
// most specific first).
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace tdiag::trace {

namespace {

std::vector<importer> builtin_importers() {
  std::vector<importer> list;
  list.push_back(tdtrace_importer());
  list.push_back(snapshot_importer()); // streams a regular file in chunks
  list.push_back(kineto_importer());   // streams a regular JSON file by windows
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

namespace {

// The selection, applied once to what the importer read; what it cost stays visible.
load_result selected(load_result loaded, const trace_selection& select, std::string_view source) {
  if (select.empty())
    return loaded;
  const auto r = select_part(loaded.trace, select, source);
  const auto warn = [&](std::string message) {
    diagnostic d;
    d.code = std::string(codes::selection_empty);
    d.level = severity::warning;
    d.title = "selected part of the trace";
    d.message = std::move(message);
    d.add_field("file", std::string(source));
    loaded.warnings.push_back(std::move(d));
  };
  if (r.events_kept == 0)
    warn(fmt::format("{}: {} keeps none of its {} events", source, select.describe(),
                     r.events_before));
  if (r.undo_mismatches > 0)
    warn(fmt::format("{}: {} memory events did not match the allocator state while it was "
                     "replayed to the window's end; the state there may be off",
                     source, r.undo_mismatches));
  return loaded;
}

// 0 or 1 where `head` begins as pickle.dump(dict or list, protocol=0 / 1) begins: MARK and DICT
// or LIST then PUT with a decimal memo index ("(dp0\n"), or EMPTY_DICT or EMPTY_LIST then BINPUT
// ("}q\0"); else -1. Neither has the PROTO opcode a snapshot (protocol 2 or later) starts with.
int text_pickle_protocol(std::span<const std::byte> head) noexcept {
  const auto at = [&](std::size_t i) {
    return i < head.size() ? std::to_integer<char>(head[i]) : '\0';
  };
  if (at(0) == '(' && (at(1) == 'd' || at(1) == 'l') && at(2) == 'p' && at(3) >= '0' &&
      at(3) <= '9')
    return 0;
  if ((at(0) == '}' || at(0) == ']') && (at(1) == 'q' || at(1) == 'r'))
    return 1;
  return -1;
}

load_result dispatch(input_file& in, const std::filesystem::path& path,
                     const load_options& options) {
  // A regular file is sniffed at its start and handed over by path (a .tdtrace range load reads
  // only the chunks it needs); anything else is read once, whole, and handed over from memory.
  std::string whole;
  std::vector<std::byte> head(sniff_bytes);
  if (in.seekable()) {
    head.resize(in.read_at(0, head));
  } else {
    whole = in.read_all();
    head.resize(std::min(head.size(), whole.size()));
    std::memcpy(head.data(), whole.data(), head.size());
  }

  for (const auto& imp : importers()) {
    if (!imp.sniff || !imp.sniff(head))
      continue;
    if (in.seekable() && imp.load)
      return imp.load(path, options);
    if (!imp.load_bytes) {
      diagnostic d;
      d.code = codes::needs_regular_file;
      d.title = "format needs a regular file";
      d.message = fmt::format("{}: the {} importer reads only regular files, not a stream",
                              in.name(), imp.name);
      d.hint = "save the stream to a file first";
      throw input_error(std::move(d));
    }
    if (in.seekable())
      whole = in.read_all();
    return imp.load_bytes(std::as_bytes(std::span(whole)), in.name(), options);
  }

  std::string names;
  for (const auto& imp : importers())
    names += (names.empty() ? "" : ", ") + imp.name;
  diagnostic d;
  d.code = codes::unknown_format;
  d.title = "unknown trace format";
  d.message = fmt::format("'{}' is not a trace format tensordiag reads ({} bytes inspected)",
                          in.name(), head.size());
  // A pickle of a protocol the snapshot reader does not take: said as what it is.
  if (head.size() >= 2 && head[0] == std::byte{0x80})
    d.message += fmt::format(": a pickle of protocol {}, where PyTorch's snapshots are protocol 2 "
                             "to 5",
                             std::to_integer<int>(head[1]));
  else if (const auto proto = text_pickle_protocol(head); proto >= 0)
    d.message += fmt::format(": it begins as a pickle of protocol {} does (no PROTO opcode), "
                             "where PyTorch's snapshots are protocol 2 to 5; load it in Python "
                             "and write it again with pickle.dump(obj, f, protocol=4)",
                             proto);
  d.add_field("path", in.name());
  d.add_field("formats", names);
  d.hint = "tensordiag reads .tdtrace files, PyTorch memory snapshots (pickle) and PyTorch "
           "profiler / Kineto Chrome trace JSON (plain or gzip)";
  throw input_error(std::move(d));
}

} // namespace

// The one budget line for an allocation the importers' checks did not foresee: never
// "internal error: std::bad_alloc", and never the whole job lost to one file's message.
[[noreturn]] void refuse_bad_alloc(std::string_view source) {
  const bool from_env = std::getenv("TDIAG_MEMORY_LIMIT") != nullptr;
  diagnostic d;
  d.code = std::string(codes::load_too_large);
  d.title = "trace needs more memory than is available";
  d.message = fmt::format("{}: the allocator refused memory while the trace was read; the memory "
                          "budget is {} ({}); {}",
                          source, format_bytes(memory_budget()),
                          from_env ? "TDIAG_MEMORY_LIMIT" : "half the available memory",
                          over_budget_advice);
  d.add_field("file", std::string(source));
  d.add_field("budget_bytes", static_cast<std::int64_t>(memory_budget()));
  throw input_error(std::move(d));
}

load_result load_trace(const std::filesystem::path& path, const load_options& options) {
  input_file in(path);
  try {
    return selected(dispatch(in, path, options), options.select, in.name());
  } catch (const std::bad_alloc&) {
    refuse_bad_alloc(in.name());
  }
}

} // namespace tdiag::trace
