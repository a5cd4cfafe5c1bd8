// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The verdict as JSON, schema tensordiag.fr/v1 (docs/flight-recorder.md): culprits first, then
// groups, mismatches, ranks, what cannot be known and, joined with the job's traces, `traces`.
// Deterministic (the core JSON writer).
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/trace/flight_recorder.hpp>

namespace tdiag::trace::fr {
namespace {

using tdiag::detail::json_out;

void int_list(json_out& j, std::string_view key, const std::vector<int>& v) {
  j.key(key);
  j.begin_array();
  for (int x : v)
    j.integer(x);
  j.end_array();
}

void frames(json_out& j, const std::vector<frame>& v) {
  j.key("frames");
  j.begin_array();
  for (const auto& f : v) {
    j.begin_object();
    j.member("name", f.name);
    j.member("file", f.file);
    j.member("line", f.line);
    j.end_object();
  }
  j.end_array();
}

void write_culprit(json_out& j, const culprit& c) {
  j.begin_object();
  j.member("rank", std::int64_t{c.rank});
  j.member("cause", to_string(c.cause));
  j.member("pg", c.pg);
  j.member("pg_desc", c.pg_desc);
  j.member("seq", c.seq);
  j.member("op", c.op);
  j.member("detail", c.detail);
  j.key("own");
  if (c.own_op.empty()) {
    j.null();
  } else {
    j.begin_object();
    j.member("seq", c.own_seq);
    j.member("op", c.own_op);
    j.member("state", c.own_state);
    j.end_object();
  }
  frames(j, c.frames);
  j.end_object();
}

void write_group(json_out& j, const group_report& g) {
  j.begin_object();
  j.member("name", g.name);
  j.member("desc", g.desc);
  int_list(j, "ranks", g.ranks);
  int_list(j, "dumped", g.dumped);
  int_list(j, "without_dump", g.without_dump);
  j.member("last_seq", g.last_seq);
  j.member("last_op", g.last_op);
  j.key("stuck");
  j.boolean(g.stuck);
  int_list(j, "waiting", g.waiting);
  j.key("first_divergence");
  if (g.first_divergence)
    j.unsigned_integer(*g.first_divergence);
  else
    j.null();
  j.member("verdict", g.verdict);
  j.end_object();
}

void write_mismatch(json_out& j, const mismatch& m) {
  j.begin_object();
  j.member("pg", m.pg);
  j.member("seq", m.seq);
  j.key("p2p");
  j.boolean(m.p2p);
  j.member("state", to_string(m.state));
  j.member("expected", m.expected);
  int_list(j, "ranks", m.ranks);
  j.key("found");
  j.begin_array();
  for (const auto& f : m.found)
    j.string(f);
  j.end_array();
  j.member("detail", m.detail);
  j.end_object();
}

std::string_view status_name(const rank_report& r) {
  if (!r.present)
    return "missing";
  switch (r.status) {
  case dump_status::ok:
    return "ok";
  case dump_status::empty_file:
    return "empty_file";
  case dump_status::empty_ring:
    return "empty_ring";
  case dump_status::unreadable:
    return "unreadable";
  }
  return "ok";
}

void write_rank(json_out& j, const rank_report& r) {
  j.begin_object();
  j.member("rank", std::int64_t{r.rank});
  j.member("dump", status_name(r));
  j.member("source", r.source);
  if (r.status == dump_status::unreadable)
    j.member("problem", r.problem);
  j.member("entries", static_cast<std::int64_t>(r.entries));
  j.key("wrapped");
  j.boolean(r.wrapped);
  j.key("timing");
  j.boolean(r.timing);
  j.key("last");
  if (r.last_op.empty()) {
    j.null();
  } else {
    j.begin_object();
    j.member("pg", r.last_pg);
    j.member("seq", r.last_seq);
    j.member("op", r.last_op);
    j.member("state", to_string(*r.last_state));
    j.end_object();
  }
  j.end_object();
}

void write_culprit_trace(json_out& j, const culprit_trace& c) {
  j.begin_object();
  j.member("rank", std::int64_t{c.rank});
  j.member("source", c.source);
  j.member("trace_begin_ns", c.trace_begin_ns);
  j.member("trace_end_ns", c.trace_end_ns);
  j.key("last_kernels");
  j.begin_array();
  for (const auto& k : c.last_kernels) {
    j.begin_object();
    j.member("name", k.name);
    j.key("stream");
    j.unsigned_integer(k.stream);
    j.member("start_ns", k.start_ns);
    j.member("duration_ns", k.duration_ns);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_traces(json_out& j, const trace_context& t) {
  j.begin_object();
  j.member("run", t.run);
  j.member("ranks", static_cast<std::int64_t>(t.ranks));
  j.member("collectives", static_cast<std::int64_t>(t.collectives));
  j.key("culprits");
  j.begin_array();
  for (const auto& c : t.culprits)
    write_culprit_trace(j, c);
  j.end_array();
  j.key("stragglers");
  j.begin_array();
  for (const auto& s : t.stragglers) {
    j.begin_object();
    j.member("rank", std::int64_t{s.rank});
    j.member("times_last", static_cast<std::int64_t>(s.times_last));
    j.key("wait_us");
    j.number(s.wait_us);
    j.key("late_us");
    j.number(s.late_us);
    j.member("cause", s.cause);
    j.key("cause_us");
    j.number(s.cause_us);
    j.key("culprit");
    j.boolean(s.culprit);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

} // namespace

std::string to_json(const job_report& r) {
  json_out j;
  j.begin_object();
  j.member("schema", "tensordiag.fr/v1");
  j.key("stuck");
  j.boolean(r.stuck);
  j.key("culprits");
  j.begin_array();
  for (const auto& c : r.culprits)
    write_culprit(j, c);
  j.end_array();
  j.key("groups");
  j.begin_array();
  for (const auto& g : r.groups)
    write_group(j, g);
  j.end_array();
  j.key("mismatches");
  j.begin_array();
  for (const auto& m : r.mismatches)
    write_mismatch(j, m);
  j.end_array();
  j.key("ranks");
  j.begin_array();
  for (const auto& rk : r.ranks)
    write_rank(j, rk);
  j.end_array();
  j.key("unknowns");
  j.begin_array();
  for (const auto& u : r.unknowns)
    j.string(u);
  j.end_array();
  if (r.traces) {
    j.key("traces");
    write_traces(j, *r.traces);
  }
  j.end_object();
  return j.take();
}

} // namespace tdiag::trace::fr
