// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include "replay_state.hpp"

namespace tdiag::trace {

replay_pass::replay_pass(const trace& t, lane_id lane) : events_(t.memory.lane(lane)) {
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  auto start = initial_allocator_state(t, lane);
  reserved_ = detail::totals_of(start, device).reserved;
  state_ = std::make_unique<detail::replay_state>(std::move(start), device);
}

replay_pass::~replay_pass() = default;

bool replay_pass::step() {
  if (position_ >= events_.size())
    return true;
  detail::replay_totals effect;
  const bool matched = state_->step(events_[position_++], false, false, &effect);
  reserved_ = detail::sat_add(reserved_, effect.reserved);
  return matched;
}

allocator_state replay_pass::state() const {
  return state_->state();
}

void replay_pass::track_segments() noexcept {
  state_->track_touched();
}

std::span<const std::uint64_t> replay_pass::touched() const noexcept {
  return state_->touched();
}

bool replay_pass::all_touched() const noexcept {
  return state_->all_touched();
}

void replay_pass::clear_touched() noexcept {
  state_->clear_touched();
}

const segment* replay_pass::segment_at(std::uint64_t address) const {
  return state_->segment_at(address);
}

} // namespace tdiag::trace
