// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading Flight Recorder dumps: the form told by content (a pickle opens with PROTO, JSON with
// '{'), the rank from the dump's `rank` key or the file name's trailing number, and a job as
// files, folders and globs read in parallel.
#include <tensordiag/core/codes.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/parallel_for.hpp>
#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/trace/fr_codes.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <glob.h>
#include <initializer_list>
#include <optional>

#include "dump_builder.hpp"
#include "value_access.hpp"

namespace tdiag::trace::fr {
namespace detail {

void fail(std::string_view code, std::string_view title, std::string_view source,
          std::string_view what) {
  diagnostic d;
  d.code = std::string(code);
  d.title = std::string(title);
  d.message = fmt::format("{}: {}", printable(source), what);
  d.add_field("file", std::string(source));
  throw input_error(std::move(d));
}

std::vector<int> parse_ranks_text(std::string_view text) {
  std::vector<int> out;
  long long current = -1;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      current = (current < 0 ? 0 : current) * 10 + (c - '0');
      if (current > (1 << 30))
        return {}; // not a rank list: the caller sees no membership rather than a wrong one
    } else if (std::string_view(" ,[]()\t\n").find(c) == std::string_view::npos) {
      return {}; // "[0, x, 2]", "-1": the same (dropping a word would drop a member)
    } else if (current >= 0) {
      out.push_back(static_cast<int>(current));
      current = -1;
    }
  }
  if (current >= 0)
    out.push_back(static_cast<int>(current));
  return out;
}

entry_state parse_state(std::string_view text) noexcept {
  if (text == "completed")
    return entry_state::completed;
  if (text == "started")
    return entry_state::started;
  return entry_state::scheduled;
}

} // namespace detail

namespace {

// A UTF-8 byte-order mark, which some editors and tools write before JSON.
std::string_view without_bom(std::string_view bytes) {
  return bytes.starts_with("\xEF\xBB\xBF") ? bytes.substr(3) : bytes;
}

bool looks_like_json(std::string_view bytes) {
  for (const char c : without_bom(bytes)) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    return c == '{' || c == '[';
  }
  return false;
}

// A JSON dump's parse holds the text, its padded copy and the DOM: about three times its size.
constexpr std::uint64_t json_parse_factor = 3;

void parse_json(std::string_view bytes, std::string_view source, dump& out) {
  check_memory_budget(source, fmt::format("a JSON dump of {} bytes", bytes.size()),
                      bytes.size() * json_parse_factor);
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(without_bom(bytes));
  simdjson::dom::element root;
  if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS)
    detail::fail(codes::malformed_dump, "malformed Flight Recorder dump", source,
                 fmt::format("not valid JSON: {}", simdjson::error_message(error)));
  detail::dump_builder<detail::json_access>(out, source).read({root, true});
}

// The number a file name ends in, after a known extension: `_dump_3` -> 3, `rank12.json` -> 12.
int rank_from_name(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  for (std::string_view ext : {".json", ".pickle", ".pkl", ".bin"})
    if (name.size() > ext.size() && name.ends_with(ext))
      name.resize(name.size() - ext.size());
  std::size_t digits = 0;
  while (digits < name.size() &&
         std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits])) != 0)
    ++digits;
  if (digits == 0 || digits > 9)
    return -1;
  return std::stoi(name.substr(name.size() - digits));
}

} // namespace

std::string_view to_string(entry_state state) noexcept {
  switch (state) {
  case entry_state::scheduled:
    return "scheduled";
  case entry_state::started:
    return "started";
  case entry_state::completed:
    return "completed";
  }
  return "scheduled";
}

dump parse_dump(std::string_view bytes, std::string_view source, int rank,
                const pickle_limits& limits) {
  dump out;
  out.source = std::string(source);
  out.rank = rank;
  if (bytes.empty()) {
    out.status = dump_status::empty_file;
  } else if (looks_like_json(bytes)) {
    parse_json(bytes, source, out);
  } else if (static_cast<unsigned char>(bytes[0]) != 0x80) {
    detail::fail(codes::not_a_dump, "not a Flight Recorder dump", source,
                 fmt::format("neither a pickle (protocol 2 and later open with byte 0x80) nor a "
                             "JSON object: the file opens with byte 0x{:02x}",
                             static_cast<unsigned char>(bytes[0])));
  } else {
    // dump_builder walks a fixed shape, to a depth of four: no nesting or cycle can mislead it.
    pickle_limits fixed_shape = limits;
    fixed_shape.max_depth = 0;
    const auto doc = pickle_document::parse(bytes, source, fixed_shape);
    out.pickle_protocol = doc.protocol();
    detail::dump_builder<detail::pickle_access>(out, source).read(doc.root());
  }
  if (out.rank < 0)
    detail::fail(codes::no_rank, "a dump states no rank", source,
                 "the dump has no `rank` key and the file name ends in no rank number "
                 "(name dumps <prefix><rank>, as TORCH_FR_DUMP_TEMP_FILE does)");
  return out;
}

dump read_dump(const std::string& path, const load_options& options) {
  input_file in(path);
  pickle_limits limits = options.limits;
  limits.max_bytes = std::min<std::uint64_t>(limits.max_bytes, memory_budget());
  const std::string bytes = in.read_all(limits.max_bytes);
  return parse_dump(bytes, in.name(), rank_from_name(path), limits);
}

namespace {

// A path to read; or, with `not_a_file`, a folder's entry named like a dump that is no regular
// file (a directory, a FIFO, a link to nothing or a loop): that rank's lost evidence, never
// opened (a FIFO would wait for a writer).
struct dump_path {
  std::string path;
  std::string not_a_file;
};

std::string why_not_a_file(const std::filesystem::path& p) {
  std::error_code ec;
  const auto st = std::filesystem::status(p, ec);
  if (ec)
    return ec.message();
  switch (st.type()) {
  case std::filesystem::file_type::regular:
    return {};
  case std::filesystem::file_type::directory:
    return "is a directory";
  case std::filesystem::file_type::fifo:
    return "is a FIFO";
  case std::filesystem::file_type::socket:
    return "is a socket";
  case std::filesystem::file_type::block:
  case std::filesystem::file_type::character:
    return "is a device";
  default:
    return "is not a regular file";
  }
}

// A folder's entries whose name ends in a rank, sorted.
std::vector<dump_path> folder_entries(const std::string& folder) {
  std::vector<dump_path> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(folder, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (rank_from_name(it->path()) >= 0)
      out.push_back({it->path().string(), why_not_a_file(it->path())});
  if (ec)
    detail::fail(tdiag::codes::cannot_read, "cannot read a folder of dumps", folder,
                 fmt::format("cannot list the folder: {}", ec.message()));
  std::sort(out.begin(), out.end(),
            [](const dump_path& a, const dump_path& b) { return a.path < b.path; });
  return out;
}

std::vector<dump_path> expand(std::span<const std::string> inputs) {
  std::vector<dump_path> out;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(input, ec)) {
      auto files = folder_entries(input);
      out.insert(out.end(), files.begin(), files.end());
    } else if (std::filesystem::exists(input, ec) || input == "-") {
      out.push_back({input, {}});
    } else {
      glob_t g{};
      if (::glob(input.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i)
          out.push_back({g.gl_pathv[i], {}});
      ::globfree(&g);
    }
  }
  if (out.empty())
    detail::fail(codes::no_dump_file, "no Flight Recorder dump matched",
                 inputs.empty() ? std::string_view("(no input)") : std::string_view(inputs[0]),
                 "no dump file matched: pass dump files, a folder of them (names ending in the "
                 "rank, e.g. _dump_0) or a quoted glob like 'dumps/_dump_*'");
  return out;
}

} // namespace

std::vector<std::string> expand_inputs(std::span<const std::string> inputs) {
  std::vector<std::string> out;
  for (auto& p : expand(inputs))
    if (p.not_a_file.empty())
      out.push_back(std::move(p.path));
  return out;
}

namespace {

// The first 64 KiB of a file hold a dump's top-level keys: a pickle (PROTO) or a JSON object
// naming a ring's keys before any of a Kineto trace's or a memory snapshot's.
bool head_looks_like_dump(const std::string& path) {
  input_file in(path);
  if (!in.seekable())
    return false;
  std::string head(64 * 1024, '\0');
  head.resize(in.read_at(0, std::as_writable_bytes(std::span(head.data(), head.size()))));
  if (head.empty() || (static_cast<unsigned char>(head[0]) != 0x80 && !looks_like_json(head)))
    return false;
  // The first of the keys decides (a stack frame may name anything further on).
  const auto first_of = [&](std::initializer_list<std::string_view> keys) {
    std::size_t at = std::string::npos;
    for (const auto key : keys)
      at = std::min(at, head.find(key));
    return at;
  };
  const auto ring = first_of({"entries", "pg_config", "pg_status"});
  return ring != std::string::npos && ring < first_of({"traceEvents", "device_traces", "segments"});
}

} // namespace

bool looks_like_dumps(std::span<const std::string> inputs) noexcept {
  try {
    for (const auto& file : expand_inputs(inputs))
      if (head_looks_like_dump(file))
        return true;
  } catch (...) { // a guess about the input: whatever cannot be read is no dump
    return false;
  }
  return false;
}

namespace {

// A dump that failed to read stands as its rank's lost evidence when the file says whose it was
// and the failure is the file's: its content damaged (cut short or corrupt), or a folder's entry
// named like a dump that is no file. Anything else is the user's to fix and stays an error: a
// file that is no dump or cannot be opened, a version this reader does not know, a pickle
// refused as unsafe, over a limit or over the budget (more memory would read it).
std::optional<dump> as_lost(const dump_path& file, const input_error& e) {
  static constexpr std::array<std::string_view, 4> damaged{
      trace::codes::truncated_pickle, trace::codes::malformed_pickle, trace::codes::bad_memo,
      codes::malformed_dump};
  const auto& code = e.report().diagnostics.at(0).code;
  const int rank = rank_from_name(file.path);
  if (rank < 0 ||
      (file.not_a_file.empty() && std::find(damaged.begin(), damaged.end(), code) == damaged.end()))
    return std::nullopt;
  dump d;
  d.rank = rank;
  d.source = printable(file.path);
  d.status = dump_status::unreadable;
  d.problem = e.what();
  return d;
}

} // namespace

std::vector<dump> load_dumps(std::span<const std::string> inputs, const load_options& options) {
  const auto files = expand(inputs);
  std::vector<dump> out(files.size());
  std::vector<std::exception_ptr> failed(files.size());
  std::atomic<std::size_t> read = 0;
  trace::detail::parallel_for(files.size(), options.threads, [&](std::size_t i) {
    const auto& path = files[i].path;
    try {
      if (!files[i].not_a_file.empty())
        detail::fail(tdiag::codes::cannot_read, "a dump that is no file", path,
                     fmt::format("{}, not a dump file", files[i].not_a_file));
      out[i] = read_dump(path, options);
      ++read;
    } catch (const input_error& e) {
      auto lost = as_lost(files[i], e);
      if (!lost)
        throw;
      out[i] = std::move(*lost);
      failed[i] = std::current_exception();
    }
  });
  // Nothing read: the first failure in input order is the answer, not an empty job.
  if (read == 0)
    for (const auto& f : failed)
      if (f)
        std::rethrow_exception(f);
  // Nothing to match: no verdict, not "every collective matched".
  if (!out.empty() && std::none_of(out.begin(), out.end(),
                                   [](const dump& d) { return d.status == dump_status::ok; })) {
    const auto unreadable = std::count_if(
        out.begin(), out.end(), [](const dump& d) { return d.status == dump_status::unreadable; });
    detail::fail(codes::no_entries, "no dump holds an entry", out.front().source,
                 fmt::format("none of the {} dump(s) holds an entry ({} empty, {} unreadable): "
                             "nothing about the job can be told",
                             out.size(), static_cast<long>(out.size()) - unreadable, unreadable));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const dump& a, const dump& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].rank == out[i - 1].rank)
      detail::fail(codes::rank_claimed_twice, "two dumps claim one rank", out[i].source,
                   fmt::format("rank {} is claimed by this dump and by {}", out[i].rank,
                               printable(out[i - 1].source)));
  return out;
}

} // namespace tdiag::trace::fr
