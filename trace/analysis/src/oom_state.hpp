// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: what an oom finding reads from the allocator state before it (the totals and the live
// allocations by site), kept up to date as a replay pass moves. Each segment's share is kept
// apart; at an oom only the segments the steps since the last one touched are counted again, so
// a history that alternates allocations and ooms over a large state costs the segments it
// touches, not the whole state per oom (20,000 such pairs over 20,000 segments took 13.5 s).
#pragma once

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/oom_analysis.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace tdiag::trace::detail {

struct oom_state {
  state_figures figures;       ///< reserved, allocated, free and largest_free_block
  std::vector<oom_site> sites; ///< the oom_sites_kept largest, most bytes first
  std::size_t site_count = 0;
};

/// The figures and sites of a whole state, read once (a lane the pass does not replay segment by
/// segment, and the reference the tests hold live_state to).
[[nodiscard]] oom_state read_state(const trace& t, const allocator_state& state);

/// The oom_state of a replay_pass that follows its segments (replay_pass::track_segments()).
class live_state {
public:
  explicit live_state(const trace& t) : t_(t) {}
  /// Brings the figures up to date with the segments `replay` touched since the last call (all
  /// of them the first time) and returns them.
  [[nodiscard]] oom_state read(replay_pass& replay);

private:
  /// One site's live allocations in one segment.
  struct site_share {
    frame_id site = 0;
    std::uint64_t bytes = 0;
    std::size_t count = 0;
    stack_id stack = no_stack; ///< of the site's first block with a stack
  };
  /// One segment's share of the figures.
  struct segment_share {
    std::uint64_t reserved = 0, allocated = 0, free = 0, largest_free = 0;
    std::vector<site_share> sites;
  };
  struct site_total {
    std::uint64_t bytes = 0;
    std::size_t count = 0;
    /// The segments whose share names a stack, by address: the first one's is the site's.
    std::map<std::uint64_t, stack_id> stacks;
  };
  /// Most bytes first, then by site.
  struct by_bytes {
    bool operator()(const std::pair<std::uint64_t, frame_id>& a,
                    const std::pair<std::uint64_t, frame_id>& b) const noexcept {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };

  static constexpr std::uint32_t none = 0xffffffffu;
  /// Scratch by site, none between uses: a site's index in the share at hand.
  [[nodiscard]] std::uint32_t& slot(frame_id site);
  [[nodiscard]] frame_id site_of(stack_id stack);
  [[nodiscard]] segment_share share_of(const segment& s);
  void replace(std::uint64_t address, const segment_share* old, const segment_share* now);
  void change_site(std::uint64_t address, frame_id site, const site_share* old,
                   const site_share* now);

  const trace& t_;
  bool started_ = false;
  std::unordered_map<stack_id, frame_id> site_of_; ///< user_frame() of the stacks met
  std::vector<std::uint32_t> slots_;
  std::unordered_map<std::uint64_t, segment_share> shares_;
  std::uint64_t reserved_ = 0, allocated_ = 0, free_ = 0;
  std::multiset<std::uint64_t> largest_free_; ///< each segment's largest free block
  std::unordered_map<frame_id, site_total> sites_;
  std::set<std::pair<std::uint64_t, frame_id>, by_bytes> ranked_;
};

} // namespace tdiag::trace::detail
