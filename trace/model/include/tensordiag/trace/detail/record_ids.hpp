// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: visits the interned-id fields of each event record, so one generic loop can remap
// (merge, writer) or validate (reader) them. Keep in step with events.hpp.
#pragma once

#include <tensordiag/trace/events.hpp>

namespace tdiag::trace::detail {

// visit_ids(record, on_string, on_stack, on_lane): each callback receives a reference to one
// id field of that category.
template <typename S, typename K, typename L>
void visit_ids(kernel_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.name);
}
template <typename S, typename K, typename L> void visit_ids(copy_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.name);
}
template <typename S, typename K, typename L>
void visit_ids(api_event& e, S&& str, K&& stk, L&& ln) {
  ln(e.lane), str(e.name), stk(e.stack);
}
template <typename S, typename K, typename L> void visit_ids(range_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.name);
}
template <typename S, typename K, typename L>
void visit_ids(marker_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.name), str(e.category);
}
template <typename S, typename K, typename L>
void visit_ids(memory_event& e, S&& str, K&& stk, L&& ln) {
  ln(e.lane), stk(e.stack), str(e.user_metadata);
}
template <typename S, typename K, typename L>
void visit_ids(assertion_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.site), str(e.message);
}
template <typename S, typename K, typename L> void visit_ids(flow_event& e, S&&, K&&, L&& ln) {
  ln(e.lane), ln(e.target_lane);
}
template <typename S, typename K, typename L>
void visit_ids(counter_event& e, S&& str, K&&, L&& ln) {
  ln(e.lane), str(e.name);
}

template <typename S, typename K, typename L> void visit_ids(sync_wait&, S&&, K&&, L&&) {}
template <typename S, typename K, typename L>
void visit_ids(collective_info& c, S&& str, K&&, L&&) {
  str(c.group), str(c.group_ranks), str(c.collective);
}

} // namespace tdiag::trace::detail
