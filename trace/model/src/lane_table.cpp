// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/lane_table.hpp>

namespace tdiag::trace {

lane_id lane_table::intern(lane_kind kind, std::int64_t group, std::uint64_t id) {
  auto [it, inserted] =
      index_.try_emplace(std::tuple{kind, group, id}, static_cast<lane_id>(lanes_.size()));
  if (inserted)
    lanes_.push_back(lane{kind, group, id, no_string});
  return it->second;
}

} // namespace tdiag::trace
