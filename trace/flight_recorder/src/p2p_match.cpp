// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Point-to-point calls paired across peers. A send's profiling name states its peer
// ("nccl:send 0->1", ranks of its group) and so does a recv's ("nccl:recv 1<-0"); a send on
// rank A to B with p2p_seq_id k is matched by B's recv from A with p2p_seq_id k, and the other
// way round. A call that never completed, on a rank whose completions are visible, whose peer
// dumped a ring without the matching call, names the peer: it never posted it (not_reached). A
// peer that left no dump is named no_dump. A peer with a call toward the rank still in flight
// posted its side, if under another number, and a peer whose ring wrapped may have lost it:
// neither is named. Calls whose peer posted the match are not judged further (both sides
// waiting is a network or device matter the dumps cannot tell apart).
#include "p2p_match.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>
#include <utility>

#include "group_analysis.hpp"

namespace tdiag::trace::fr::detail {
namespace {

struct p2p_op {
  bool send = false;
  int self = -1; ///< as the name states it (the group's numbering)
  int peer = -1;
};

// "nccl:send 0->1" -> send, 0, 1; "gloo:recv 1<-0" -> recv, 1, 0; else nothing.
std::optional<p2p_op> parse_p2p(std::string_view name) {
  if (const auto colon = name.find(':'); colon != std::string_view::npos)
    name.remove_prefix(colon + 1);
  p2p_op out;
  if (name.starts_with("send "))
    out.send = true;
  else if (!name.starts_with("recv "))
    return std::nullopt;
  name.remove_prefix(5);
  const auto number = [&](int& value) {
    std::size_t n = 0;
    value = 0;
    while (n < name.size() && n < 9 && std::isdigit(static_cast<unsigned char>(name[n])) != 0)
      value = value * 10 + (name[n++] - '0');
    name.remove_prefix(n);
    return n > 0;
  };
  if (!number(out.self))
    return std::nullopt;
  const std::string_view arrow = out.send ? "->" : "<-";
  if (!name.starts_with(arrow))
    return std::nullopt;
  name.remove_prefix(2);
  if (!number(out.peer))
    return std::nullopt;
  return out;
}

// A rank of the group's numbering as a global rank: its members by position where the group
// lists them, else the number itself.
int global_rank(const group_data& g, int local) {
  return local >= 0 && static_cast<std::size_t>(local) < g.members.size()
             ? g.members[static_cast<std::size_t>(local)]
             : local;
}

struct p2p_call {
  std::uint32_t rank_index = 0;
  const entry* e = nullptr;
  std::uint32_t group = 0; ///< job group id
  p2p_op op;
  int peer = -1; ///< global
};

std::vector<p2p_call> p2p_calls(const job_index& job) {
  std::vector<p2p_call> out;
  for (std::uint32_t ri = 0; ri < job.ranks.size(); ++ri) {
    const auto& rd = job.ranks[ri];
    if (rd.source == nullptr)
      continue;
    for (const auto& e : rd.source->entries) {
      if (!e.is_p2p)
        continue;
      const auto op = parse_p2p(job.op_names[rd.op_of[e.op]]);
      if (!op)
        continue;
      p2p_call c{ri, &e, rd.group_of[e.group], *op, -1};
      c.peer = global_rank(job.groups[c.group], op->peer);
      out.push_back(c);
    }
  }
  return out;
}

// Who may hold a call's match: a rank's calls of a group in one direction toward one peer.
struct side {
  std::uint32_t rank_index = 0;
  std::uint32_t group = 0;
  int peer = -1; ///< global
  bool send = false;
  bool operator==(const side&) const = default;
  // Not a defaulted <=>: clang-tidy 14 reads its comparison with 0 as a null pointer.
  friend bool operator<(const side& a, const side& b) {
    return std::tie(a.rank_index, a.group, a.peer, a.send) <
           std::tie(b.rank_index, b.group, b.peer, b.send);
  }
};

// The p2p calls by side: each side's p2p_seq_ids, and whether one of its calls is still in
// flight. Sorted once, asked by binary search: a job of N calls pairs in O(N log N).
class sides {
public:
  explicit sides(const std::vector<p2p_call>& calls) {
    posted_.reserve(calls.size());
    for (const auto& c : calls) {
      const side s{c.rank_index, c.group, c.peer, c.op.send};
      posted_.emplace_back(s, c.e->p2p_seq_id);
      if (c.e->state != entry_state::completed)
        in_flight_.push_back(s);
    }
    std::sort(posted_.begin(), posted_.end());
    std::sort(in_flight_.begin(), in_flight_.end());
    in_flight_.erase(std::unique(in_flight_.begin(), in_flight_.end()), in_flight_.end());
  }
  /// True when `s` posted p2p_seq_id `seq`, or holds a call still in flight.
  [[nodiscard]] bool posted(const side& s, std::int64_t seq) const {
    return std::binary_search(in_flight_.begin(), in_flight_.end(), s) ||
           std::binary_search(posted_.begin(), posted_.end(), std::pair(s, seq));
  }

private:
  std::vector<std::pair<side, std::int64_t>> posted_;
  std::vector<side> in_flight_;
};

} // namespace

p2p_findings match_p2p(const job_index& job) {
  p2p_findings out;
  const auto calls = p2p_calls(job);
  const sides peers(calls);
  for (const auto& c : calls) {
    const auto& rd = job.ranks[c.rank_index];
    if (!rd.completion_visible || c.e->state == entry_state::completed)
      continue;
    // job.ranks holds each rank once, by rank.
    const auto peer = std::lower_bound(job.ranks.begin(), job.ranks.end(), c.peer,
                                       [](const rank_data& r, int rank) { return r.rank < rank; });
    if (peer == job.ranks.end() || peer->rank != c.peer || peer->rank == rd.rank)
      continue;
    const bool dumped = peer->source != nullptr && peer->source->status == dump_status::ok &&
                        !peer->source->entries.empty();
    const auto peer_index = static_cast<std::uint32_t>(peer - job.ranks.begin());
    // The matching call: the same p2p_seq_id; or, as numberings may differ, one still in
    // flight toward this rank (posted, if under another number).
    const bool matched = peers.posted({peer_index, c.group, rd.rank, !c.op.send}, c.e->p2p_seq_id);
    if (matched || (dumped && peer->wrapped))
      continue; // posted; or a wrapped ring may have lost it
    out.waits_explained.push_back(rd.rank);
    const auto& g = job.groups[c.group];
    const std::string& op = job.op_names[rd.op_of[c.e->op]];
    const char* missing = c.op.send ? "recv" : "send";
    culprit k;
    k.rank = peer->rank;
    k.cause = dumped ? cause::not_reached : cause::no_dump;
    k.pg = g.name;
    k.pg_desc = g.desc;
    k.seq = c.e->p2p_seq_id;
    k.op = op;
    k.detail = dumped ? fmt::format("never posted the {} (p2p #{} of group {}) that matches rank "
                                    "{}'s {}, which waits in it ({})",
                                    missing, k.seq, g.name, rd.rank, op,
                                    to_string(progress_of_state(rd, *c.e)))
                      : fmt::format("left no readable dump (none, an empty one or one cut short); "
                                    "rank {} waits in {} (p2p "
                                    "#{} of group {}) to it, so its {} is the part the dumps "
                                    "cannot show",
                                    rd.rank, op, k.seq, g.name, missing);
    if (dumped && peer->last_entry >= 0) {
      const auto& own = peer->source->entries[static_cast<std::size_t>(peer->last_entry)];
      attach_entry(job, peer_index, own, progress_of_state(*peer, own), k);
    }
    mismatch m;
    m.pg = g.name;
    m.seq = k.seq;
    m.state = match_state::missing_ranks;
    m.p2p = true;
    m.p2p_rank = rd.rank;
    m.expected = describe_call(op, *job.shapes[rd.shapes_of[c.e->shapes]]);
    m.ranks = {peer->rank};
    m.found = {std::string()};
    m.detail = fmt::format("rank {}'s {} (p2p #{}) has no matching {} on rank {}", rd.rank, op,
                           k.seq, missing, peer->rank);
    out.mismatches.push_back(std::move(m));
    out.culprits.push_back(std::move(k));
  }
  return out;
}

} // namespace tdiag::trace::fr::detail
