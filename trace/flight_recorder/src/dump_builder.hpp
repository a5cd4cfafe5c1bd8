// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Turns the root of a dump (pickle or JSON, through value_access.hpp) into a fr::dump: the
// ring's entries made compact, their strings, shapes and stacks interned per dump. Fields a
// version lacks take their defaults; a field of the wrong type is a one-line input_error.
#pragma once

#include <tensordiag/core/error.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/trace/fr_codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "value_access.hpp"

namespace tdiag::trace::fr::detail {

[[noreturn]] void fail(std::string_view code, std::string_view title, std::string_view source,
                       std::string_view what);

/// Global ranks from pg_config's `ranks`: a list of ints or a string such as "[0, 2]".
std::vector<int> parse_ranks_text(std::string_view text);

/// The entry state a dump's `state` names; scheduled for anything else.
entry_state parse_state(std::string_view text) noexcept;

template <typename Access> class dump_builder {
public:
  using value = typename Access::value;

  dump_builder(dump& out, std::string_view source) : d_(out), source_(source) {}

  void read(const value& root) {
    if (!Access::is_dict(root))
      fail(codes::not_a_dump, "not a Flight Recorder dump", source_,
           "the dump is not a dict with `version`, `pg_config` and `entries`");
    const auto version = Access::find(root, "version");
    const auto entries = Access::find(root, "entries");
    const auto config = Access::find(root, "pg_config");
    if (!Access::present(version) && !Access::present(entries) && !Access::present(config))
      fail(codes::not_a_dump, "not a Flight Recorder dump", source_,
           "no `version`, `pg_config` or `entries` key: not a Flight Recorder dump");
    read_version(version);
    if (const auto rank = Access::find(root, "rank"); Access::present(rank)) {
      const auto r = Access::as_int(rank);
      if (!r || Access::is_bool(rank) || *r < 0 || *r > max_rank)
        bad(fmt::format("`rank` is not a rank (an integer from 0 to {})", max_rank));
      d_.rank = static_cast<int>(*r);
    }
    for (const char* key : {"comm_lib_version", "nccl_version"})
      if (auto v = Access::as_string(Access::find(root, key)); v && d_.comm_lib_version.empty())
        d_.comm_lib_version = std::string(*v);
    if (Access::is_dict(config))
      Access::for_each_member(
          config, [&](std::string_view key, const value& g) { read_group_config(key, g); });
    if (const auto status = Access::find(root, "pg_status"); Access::is_dict(status))
      Access::for_each_member(
          status, [&](std::string_view key, const value& s) { read_group_status(key, s); });
    if (Access::present(entries) && !Access::is_list(entries))
      bad("`entries` is not a list");
    if (Access::is_list(entries)) {
      d_.entries.reserve(Access::size(entries));
      Access::for_each(entries, [&](const value& e) { read_entry(e); });
    }
    if (d_.entries.empty())
      d_.status = dump_status::empty_ring;
    else
      name_the_nameless_group();
    check_sequences_run_forward();
  }

private:
  static constexpr std::int64_t max_rank = std::int64_t{1} << 30;
  /// Longer is no name PyTorch writes (an op, a dtype, a group, a frame's function or file).
  static constexpr std::size_t max_name = std::size_t{64} << 10;

  // `text`, unless it is longer than any name PyTorch writes; `where` names it in the message
  // ("entry 7: `profiling_name`"), made only then.
  template <typename Where> std::string_view name(std::string_view text, Where&& where) const {
    if (text.size() > max_name)
      bad(fmt::format("{} holds a name of {} bytes (names in a dump are under {})", where(),
                      text.size(), max_name));
    return text;
  }
  auto in_entry(std::string_view key) const {
    return [this, key] { return fmt::format("entry {}: `{}`", d_.entries.size(), key); };
  }

  [[noreturn]] void bad(std::string_view what) const {
    fail(codes::malformed_dump, "malformed Flight Recorder dump", source_, what);
  }

  void read_version(const value& v) {
    if (!Access::present(v))
      return;
    const auto text = Access::as_string(v);
    if (!text)
      bad("`version` is not a string");
    d_.version = std::string(name(*text, [] { return std::string("`version`"); }));
    const auto dot = text->find('.');
    if (text->substr(0, dot) != "2")
      fail(codes::unsupported_version, "unsupported Flight Recorder dump version", source_,
           fmt::format("dump version '{}' is not supported (2.0 to 2.x are)", printable(*text)));
  }

  std::uint32_t group_index(std::string_view name, std::string_view desc) {
    const auto it = groups_.find(std::string(name));
    if (it != groups_.end()) {
      if (d_.groups[it->second].desc.empty())
        d_.groups[it->second].desc = std::string(desc);
      return it->second;
    }
    const auto index = static_cast<std::uint32_t>(d_.groups.size());
    d_.groups.push_back({std::string(name), std::string(desc), {}});
    groups_.emplace(std::string(name), index);
    return index;
  }

  // PyTorch's gloo recorder (2.10 and 2.11 at least) registers the default group before it is
  // named: pg_config holds {"": {"name": "", "desc": "", "ranks": "[0, ..., N-1]"}} while the
  // entries name the group "0" (default_pg). A nameless config that no entry uses states the
  // membership of the one group the entries use and no config states; with several such groups
  // it cannot be told whose it is, and stays as it is.
  void name_the_nameless_group() {
    const auto nameless = groups_.find("");
    if (nameless == groups_.end() || d_.groups[nameless->second].ranks.empty())
      return;
    const std::uint32_t from = nameless->second;
    std::vector<bool> used(d_.groups.size(), false);
    for (const auto& e : d_.entries)
      used[e.group] = true;
    if (used[from])
      return;
    std::uint32_t to = from;
    for (std::uint32_t g = 0; g < d_.groups.size(); ++g)
      if (used[g] && d_.groups[g].ranks.empty()) {
        if (to != from)
          return; // two candidates
        to = g;
      }
    if (to == from)
      return;
    d_.groups[to].ranks = std::move(d_.groups[from].ranks);
    d_.groups.erase(d_.groups.begin() + from);
    groups_.erase(nameless);
    for (auto& [name, index] : groups_)
      index -= index > from ? 1 : 0;
    for (auto& e : d_.entries)
      e.group -= e.group > from ? 1 : 0;
  }

  void read_group_config(std::string_view key, const value& g) {
    // Membership is corroborating evidence: a group stated in a form this reader does not know
    // (versions before pg_config held dicts) leaves it unknown rather than failing the dump.
    if (!Access::is_dict(g))
      return;
    const auto name = Access::as_string(Access::find(g, "name")).value_or(key);
    const auto desc = Access::as_string(Access::find(g, "desc")).value_or("");
    const auto where = [&] { return fmt::format("pg_config['{}']", printable(key)); };
    auto& group = d_.groups[group_index(this->name(name, where), this->name(desc, where))];
    const auto ranks = Access::find(g, "ranks");
    if (const auto text = Access::as_string(ranks)) {
      group.ranks = parse_ranks_text(*text);
    } else if (Access::is_list(ranks)) {
      group.ranks.clear();
      Access::for_each(ranks, [&](const value& r) {
        const auto i = Access::as_int(r);
        if (!i || *i < 0 || *i > (1 << 30))
          bad(fmt::format("pg_config['{}'].ranks holds a value that is not a rank",
                          printable(key)));
        group.ranks.push_back(static_cast<int>(*i));
      });
    }
  }

  void read_group_status(std::string_view key, const value& s) {
    if (!Access::is_dict(s))
      return; // a status this version words differently tells nothing we rely on
    group_status st;
    st.pg_id = int_from_text(key).value_or(-1);
    st.last_enqueued = Access::as_int(Access::find(s, "last_enqueued_collective")).value_or(-1);
    st.last_started = Access::as_int(Access::find(s, "last_started_collective")).value_or(-1);
    st.last_completed = Access::as_int(Access::find(s, "last_completed_collective")).value_or(-1);
    d_.status_by_pg.push_back(st);
  }

  // The keys of an entry this reader uses. An entry's items are read once, each key looked up
  // among the names of its length (at most two), not each name searched for among the items.
  enum field : std::uint8_t {
    f_record_id,
    f_pg_id,
    f_process_group,
    f_collective_seq_id,
    f_p2p_seq_id,
    f_profiling_name,
    f_is_p2p,
    f_input_sizes,
    f_output_sizes,
    f_input_dtypes,
    f_output_dtypes,
    f_frames,
    f_state,
    f_time_created_ns,
    f_time_started_ns,
    f_time_completed_ns,
    f_duration_ms,
    f_retired,
    field_count
  };
  static constexpr std::array<std::string_view, field_count> field_names{
      "record_id",
      "pg_id",
      "process_group",
      "collective_seq_id",
      "p2p_seq_id",
      "profiling_name",
      "is_p2p",
      "input_sizes",
      "output_sizes",
      "input_dtypes",
      "output_dtypes",
      "frames",
      "state",
      "time_created_ns",
      "time_discovered_started_ns",
      "time_discovered_completed_ns",
      "duration_ms",
      "retired"};
  static constexpr std::size_t longest_name = 32;
  // by_length[n]: the fields whose name is n characters long (at most two).
  static constexpr auto by_length = [] {
    std::array<std::array<std::uint8_t, 2>, longest_name> table{};
    for (auto& pair : table)
      pair = {field_count, field_count};
    for (std::uint8_t f = 0; f < field_count; ++f) {
      auto& pair = table[field_names[f].size()];
      if (pair[1] != field_count)
        throw "three field names of one length: widen by_length"; // fails the build
      pair[pair[0] == field_count ? 0 : 1] = f;
    }
    return table;
  }();
  static std::uint8_t field_of(std::string_view key) noexcept {
    if (key.size() >= longest_name)
      return field_count;
    for (const auto f : by_length[key.size()])
      if (f != field_count && field_names[f] == key)
        return f;
    return field_count;
  }
  using fields = std::array<value, field_count>;

  std::int64_t int_field(const fields& e, field f, std::int64_t fallback) const {
    const auto& v = e[f];
    if (!Access::present(v))
      return fallback;
    const auto i = Access::as_int(v);
    if (!i)
      bad(fmt::format("entry {}: `{}` is not an integer", d_.entries.size(), field_names[f]));
    return *i;
  }

  // Appends the sizes to key_ (and to `out` when given), every list prefixed by its length so
  // that two different lists never make one key.
  void read_sizes(const value& v, std::string_view key,
                  std::vector<std::vector<std::int64_t>>* out) {
    if (!Access::exists(v))
      return append_key(0); // a version that does not record it: the same on every rank
    if (!Access::is_list(v))
      bad(fmt::format("entry {}: `{}` is not a list", d_.entries.size(), key));
    append_key(static_cast<std::int64_t>(Access::size(v)));
    Access::for_each(v, [&](const value& t) {
      if (!Access::is_list(t))
        bad(fmt::format("entry {}: `{}` is not a list of lists", d_.entries.size(), key));
      append_key(static_cast<std::int64_t>(Access::size(t)));
      auto* dims = out != nullptr ? &out->emplace_back() : nullptr;
      Access::for_each(t, [&](const value& x) {
        const auto i = Access::as_int(x);
        if (!i || *i < 0 || Access::is_bool(x)) // a dimension PyTorch never writes
          bad(fmt::format("entry {}: `{}` holds a size that is not an integer of 0 or more",
                          d_.entries.size(), key));
        append_key(*i);
        if (dims != nullptr)
          dims->push_back(*i);
      });
    });
  }

  // Dtypes by name; a value of another type is a damaged dump (read as anything, it would make
  // an innocent rank's call look different from the others').
  void read_dtypes(const value& v, std::string_view key, std::vector<std::string>* out) {
    if (!Access::exists(v))
      return append_key(0);
    if (!Access::is_list(v))
      bad(fmt::format("entry {}: `{}` is not a list", d_.entries.size(), key));
    append_key(static_cast<std::int64_t>(Access::size(v)));
    Access::for_each(v, [&](const value& t) {
      const auto text = Access::as_string(t);
      if (!text)
        bad(fmt::format("entry {}: `{}` holds a dtype that is not a string", d_.entries.size(),
                        key));
      append_key(name(*text, in_entry(key)));
      if (out != nullptr)
        out->emplace_back(*text);
    });
  }

  void append_key(std::int64_t x) { key_.append(reinterpret_cast<const char*>(&x), sizeof x); }
  void append_key(std::string_view text) {
    append_key(static_cast<std::int64_t>(text.size()));
    key_ += text;
  }

  // Sizes and dtypes as one binary key (every part prefixed by its length); only a new key is read
  // into a tensor_shapes.
  std::uint32_t intern_shapes(const fields& e) {
    const auto read = [&](tensor_shapes* s) {
      key_.clear();
      read_sizes(e[f_input_sizes], field_names[f_input_sizes], s ? &s->input_sizes : nullptr);
      read_sizes(e[f_output_sizes], field_names[f_output_sizes], s ? &s->output_sizes : nullptr);
      read_dtypes(e[f_input_dtypes], field_names[f_input_dtypes], s ? &s->input_dtypes : nullptr);
      read_dtypes(e[f_output_dtypes], field_names[f_output_dtypes],
                  s ? &s->output_dtypes : nullptr);
    };
    read(nullptr);
    const auto [it, added] =
        shapes_.try_emplace(key_, static_cast<std::uint32_t>(d_.shapes.size()));
    if (added) {
      tensor_shapes s;
      read(&s);
      d_.shapes.push_back(std::move(s));
    }
    return it->second;
  }

  // A frame's index in frames_: by the frame object where the dump shares one frame dict among
  // its tracebacks (as PyTorch's do), else by its contents.
  std::uint32_t frame_of(const value& f) {
    const auto id = Access::identity(f);
    if (id != 0)
      if (const auto it = frame_by_object_.find(id); it != frame_by_object_.end())
        return it->second;
    frame fr;
    fr.name = std::string(
        name(Access::as_string(Access::find(f, "name")).value_or(""), in_entry("frames")));
    fr.file = std::string(
        name(Access::as_string(Access::find(f, "filename")).value_or(""), in_entry("frames")));
    fr.line = Access::as_int(Access::find(f, "line")).value_or(0);
    frame_key_.clear();
    for (const std::string_view text : {std::string_view(fr.name), std::string_view(fr.file)}) {
      const auto size = static_cast<std::uint64_t>(text.size());
      frame_key_.append(reinterpret_cast<const char*>(&size), sizeof size).append(text);
    }
    frame_key_.append(reinterpret_cast<const char*>(&fr.line), sizeof fr.line);
    const auto [it, added] =
        frame_by_text_.try_emplace(frame_key_, static_cast<std::uint32_t>(frames_.size()));
    if (added)
      frames_.push_back(std::move(fr));
    if (id != 0)
      frame_by_object_.emplace(id, it->second);
    return it->second;
  }

  std::uint32_t intern_stack(const value& v) {
    if (!Access::is_list(v) || Access::size(v) == 0)
      return 0;
    key_.clear();
    Access::for_each(v, [&](const value& f) {
      const auto index = frame_of(f);
      key_.append(reinterpret_cast<const char*>(&index), sizeof index);
    });
    const auto [it, added] =
        stacks_.try_emplace(key_, static_cast<std::uint32_t>(d_.stacks.size()));
    if (added) {
      auto& stack = d_.stacks.emplace_back();
      for (std::size_t at = 0; at < key_.size(); at += sizeof(std::uint32_t)) {
        std::uint32_t index = 0;
        std::memcpy(&index, key_.data() + at, sizeof index);
        stack.push_back(frames_[index]);
      }
    }
    return it->second;
  }

  std::uint32_t intern_op(std::string_view name) {
    if (!ops_.empty() && name == last_op_name_)
      return last_op_;
    const auto [it, added] =
        ops_.try_emplace(std::string(name), static_cast<std::uint32_t>(d_.ops.size()));
    if (added)
      d_.ops.emplace_back(name);
    last_op_name_ = it->first;
    last_op_ = it->second;
    return it->second;
  }

  void read_group_of(const fields& e, entry& out) {
    const auto& pg = e[f_process_group];
    std::string_view name, desc;
    if (Access::is_list(pg)) {
      std::size_t i = 0;
      Access::for_each(pg, [&](const value& x) {
        (i++ == 0 ? name : desc) = Access::as_string(x).value_or("");
      });
    } else if (auto text = Access::as_string(pg)) {
      name = *text;
    }
    const auto pg_id = int_field(e, f_pg_id, -1);
    out.pg_id = static_cast<std::int32_t>(pg_id);
    // Dumps before process_group was recorded: the rank's own pg_id is all there is.
    std::string fallback;
    if (name.empty()) {
      fallback = fmt::format("{}", pg_id);
      name = fallback;
    }
    if (last_group_ != no_group && name == d_.groups[last_group_].name &&
        desc == last_group_desc_) {
      out.group = last_group_;
      return;
    }
    out.group = last_group_ = group_index(this->name(name, in_entry("process_group")),
                                          this->name(desc, in_entry("process_group")));
    last_group_desc_ = desc;
  }

  // A group's sequence numbers never run backwards in the order the calls were recorded
  // (record_id; a ring dumped unrotated is read in that order too): an entry numbered below an
  // older one of its group is a damaged ring, which read as it is would claim calls the rank
  // never made.
  void check_sequences_run_forward() const {
    const auto& es = d_.entries;
    std::vector<std::uint32_t> order(es.size());
    for (std::uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    const auto by_record = [&](std::uint32_t a, std::uint32_t b) {
      return es[a].record_id < es[b].record_id;
    };
    if (!std::is_sorted(order.begin(), order.end(), by_record))
      std::stable_sort(order.begin(), order.end(), by_record);
    std::vector<std::int64_t> newest(2 * d_.groups.size(), 0); // [group, p2p]: seqs are >= 1
    for (const auto i : order) {
      const auto& e = es[i];
      const auto seq = e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
      auto& last = newest[2 * std::size_t{e.group} + (e.is_p2p ? 1 : 0)];
      if (seq < last)
        bad(fmt::format("entry {}: `{}` {} comes after {} in group '{}': the ring's sequence "
                        "runs backwards",
                        i, e.is_p2p ? "p2p_seq_id" : "collective_seq_id", seq, last,
                        printable(d_.groups[e.group].name)));
      last = seq;
    }
  }

  // The number a call is matched by across ranks is in every entry of every version this reader
  // knows (PyTorch's fr_trace needs both keys too): a collective's collective_seq_id is 1 or
  // more (PyTorch counts a collective before it records it), a point-to-point call's p2p_seq_id
  // 0 or more (the calls of a first batch_isend_irecv are recorded before any count). Anything
  // else is a damaged dump, never a seq of its own that would match nothing.
  void check_seq(const fields& f, const entry& out) const {
    const auto which = out.is_p2p ? f_p2p_seq_id : f_collective_seq_id;
    const auto seq = out.is_p2p ? out.p2p_seq_id : out.collective_seq_id;
    const std::int64_t least = out.is_p2p ? 0 : 1;
    if (Access::present(f[which]) && !Access::is_bool(f[which]) && seq >= least)
      return;
    bad(fmt::format("entry {}: `{}` is {}, not a sequence number ({} or more)", d_.entries.size(),
                    field_names[which],
                    !Access::present(f[which])  ? std::string("absent or None")
                    : Access::is_bool(f[which]) ? std::string("a bool")
                                                : fmt::format("{}", seq),
                    least));
  }

  void read_entry(const value& e) {
    if (!Access::is_dict(e))
      bad(fmt::format("entry {} is not a dict", d_.entries.size()));
    fields f{};
    Access::for_each_member(e, [&](std::string_view key, const value& v) {
      if (const auto which = field_of(key); which < field_count)
        f[which] = v; // a repeated key: the last, as Python keeps
    });
    entry out;
    out.record_id = int_field(f, f_record_id, static_cast<std::int64_t>(d_.entries.size()));
    read_group_of(f, out);
    out.collective_seq_id = int_field(f, f_collective_seq_id, 0);
    out.p2p_seq_id = int_field(f, f_p2p_seq_id, 0);
    const auto name = Access::as_string(f[f_profiling_name]);
    if (!name)
      bad(fmt::format("entry {}: `profiling_name` is absent or not a string", d_.entries.size()));
    out.op = intern_op(this->name(*name, in_entry(field_names[f_profiling_name])));
    const auto p2p = Access::as_bool(f[f_is_p2p]);
    out.is_p2p = p2p ? *p2p
                     : (name->find(":send") != std::string_view::npos ||
                        name->find(":recv") != std::string_view::npos);
    check_seq(f, out);
    out.shapes = intern_shapes(f);
    out.stack = intern_stack(f[f_frames]);
    out.state = parse_state(Access::as_string(f[f_state]).value_or(""));
    out.time_created_ns = int_field(f, f_time_created_ns, 0);
    // The JSON form writes 0 for a time never discovered, the pickle None.
    const auto started = int_field(f, f_time_started_ns, -1);
    const auto completed = int_field(f, f_time_completed_ns, -1);
    out.time_started_ns = started > 0 ? started : -1;
    out.time_completed_ns = completed > 0 ? completed : -1;
    if (auto ms = Access::as_double(f[f_duration_ms]))
      out.duration_ms = static_cast<float>(*ms);
    out.retired = Access::as_bool(f[f_retired]).value_or(false);
    d_.entries.push_back(out);
  }

  static constexpr std::uint32_t no_group = 0xffffffffu;

  dump& d_;
  std::string_view source_;
  std::unordered_map<std::string, std::uint32_t> groups_, ops_, shapes_, stacks_, frame_by_text_;
  std::unordered_map<std::uint64_t, std::uint32_t> frame_by_object_;
  std::vector<frame> frames_; ///< each distinct frame once; stacks hold copies
  std::string key_, frame_key_;
  std::string_view last_op_name_, last_group_desc_;
  std::uint32_t last_op_ = 0, last_group_ = no_group;
};

} // namespace tdiag::trace::fr::detail
