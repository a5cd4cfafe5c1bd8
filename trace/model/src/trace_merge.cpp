// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/detail/record_ids.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/trace_merge.hpp>

#include <type_traits>

namespace tdiag::trace {
namespace {

std::uint32_t& slot(std::vector<std::uint32_t>& cache, std::uint32_t id, std::size_t size) {
  if (cache.size() < size)
    cache.resize(size, 0xFFFFFFFFu);
  return cache[id];
}

} // namespace

string_id id_remapper::string(string_id id) {
  if (id == no_string || id >= src_->strings.size())
    return no_string;
  auto& s = slot(strings_, id, src_->strings.size());
  if (s == unmapped)
    s = dst_->strings.intern(src_->strings.name(id));
  return s;
}

frame_id id_remapper::frame(frame_id id) {
  if (id == 0 || id >= src_->stacks.frame_count())
    return 0;
  auto& s = slot(frames_, id, src_->stacks.frame_count());
  if (s == unmapped) {
    const auto& f = src_->stacks.frame_at(id);
    s = dst_->stacks.intern_frame({string(f.function), string(f.file), f.line});
  }
  return s;
}

stack_id id_remapper::stack(stack_id id) {
  if (id == no_stack || id >= src_->stacks.stack_count())
    return no_stack;
  auto& s = slot(stacks_, id, src_->stacks.stack_count());
  if (s == unmapped) {
    scratch_.clear();
    for (frame_id f : src_->stacks.stack(id))
      scratch_.push_back(frame(f));
    s = dst_->stacks.intern_stack(scratch_);
  }
  return s;
}

lane_id id_remapper::lane(lane_id id) {
  if (id >= src_->lanes.size()) {
    const lane_id unknown = dst_->lanes.intern(lane_kind::host_thread, -1, ~std::uint64_t{0});
    dst_->lanes.set_name(unknown, dst_->strings.intern("unknown lane"));
    return unknown;
  }
  auto& s = slot(lanes_, id, src_->lanes.size());
  if (s == unmapped) {
    const auto& l = src_->lanes.at(id);
    s = dst_->lanes.intern(l.kind, l.group, l.id);
    if (l.name != no_string && dst_->lanes.at(s).name == no_string)
      dst_->lanes.set_name(s, string(l.name));
  }
  return s;
}

std::uint32_t id_remapper::detail(std::uint32_t id, std::uint32_t correlation_base) {
  if (id == 0 || id > src_->memory_details.size())
    return 0;
  auto& s = slot(details_, id, src_->memory_details.size() + 1);
  if (s == unmapped) {
    auto d = src_->memory_details[id - 1];
    d.user_metadata = string(d.user_metadata);
    if (d.correlation != 0)
      d.correlation += correlation_base;
    s = dst_->add_memory_detail(d);
  }
  return s;
}

template <typename Record> void id_remapper::remap(Record& record) {
  detail::visit_ids(
      record, [&](string_id& id) { id = string(id); }, [&](stack_id& id) { id = stack(id); },
      [&](lane_id& id) { id = lane(id); });
  if constexpr (std::is_same_v<Record, memory_event>)
    record.detail = detail(record.detail);
}

void id_remapper::reset() {
  strings_.clear();
  frames_.clear();
  stacks_.clear();
  lanes_.clear();
  details_.clear();
}

template void id_remapper::remap(kernel_event&);
template void id_remapper::remap(copy_event&);
template void id_remapper::remap(api_event&);
template void id_remapper::remap(range_event&);
template void id_remapper::remap(marker_event&);
template void id_remapper::remap(memory_event&);
template void id_remapper::remap(assertion_event&);
template void id_remapper::remap(flow_event&);
template void id_remapper::remap(counter_event&);
template void id_remapper::remap(collective_info&);

namespace {

template <typename Record>
void append_store(event_store<Record>& into, const event_store<Record>& from, id_remapper& map) {
  for (Record r : from.all()) {
    map.remap(r);
    into.push_back(r);
  }
}

} // namespace

void merge_trace(trace& into, const trace& from) {
  id_remapper map(into, from);
  // Every lane of `from`, even an empty one, keeps its name in `into`.
  for (lane_id l = 0; l < from.lanes.size(); ++l)
    (void)map.lane(l);
  append_store(into.kernels, from.kernels, map);
  append_store(into.copies, from.copies, map);
  append_store(into.api_calls, from.api_calls, map);
  append_store(into.ranges, from.ranges, map);
  append_store(into.markers, from.markers, map);
  append_store(into.memory, from.memory, map);
  append_store(into.assertions, from.assertions, map);
  append_store(into.flows, from.flows, map);
  append_store(into.counters, from.counters, map);
  if (from.final_allocator_state && !into.final_allocator_state) {
    into.final_allocator_state = from.final_allocator_state;
    for (auto& seg : into.final_allocator_state->segments) {
      seg.stack = map.stack(seg.stack);
      for (auto& b : seg.blocks)
        b.stack = map.stack(b.stack);
    }
  }
  auto& m = into.metadata;
  if (m.format.empty())
    m.format = from.metadata.format;
  if (m.source_path.empty())
    m.source_path = from.metadata.source_path;
  if (m.time_origin_ns == 0)
    m.time_origin_ns = from.metadata.time_origin_ns;
  m.dropped_records += from.metadata.dropped_records;
  m.properties.insert(m.properties.end(), from.metadata.properties.begin(),
                      from.metadata.properties.end());
}

history_merge merge_allocator_history(trace& captured, const trace& history) {
  history_merge out;
  if (captured.metadata.time_origin_ns != 0 && history.metadata.time_origin_ns != 0)
    out.offset_ns = detail::clamp_time(detail::wide_int{history.metadata.time_origin_ns} -
                                       captured.metadata.time_origin_ns);
  id_remapper map(captured, history);
  for (memory_event e : history.memory.all()) {
    switch (e.action) {
    case memory_action::alloc:
    case memory_action::free_requested:
    case memory_action::free_completed:
    case memory_action::oom:
      break;
    default:
      ++out.segment_events;
      continue;
    }
    e.time = detail::clamp_time(detail::wide_int{e.time} + out.offset_ns);
    map.remap(e);
    captured.memory.push_back(e);
    ++out.events;
  }
  captured.metadata.dropped_records += history.metadata.dropped_records;
  return out;
}

} // namespace tdiag::trace
