// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "trace_columns.hpp"

#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

namespace tdiag::python {
namespace {

namespace py = pybind11;
using namespace tdiag::trace;

struct column {
  const char* name;
  std::size_t offset;
  py::dtype type;
};

template <typename T> py::dtype dtype_of() {
  if constexpr (std::is_enum_v<T>)
    return py::dtype::of<std::underlying_type_t<T>>();
  else if constexpr (std::is_array_v<T>)
    return py::dtype::of<std::remove_extent_t<T>>();
  else
    return py::dtype::of<T>();
}

// offsetof needs the preprocessor; the macro only names the field once.
#define TDIAG_DETAIL_COLUMN(record, field, name)                                                   \
  column {                                                                                         \
    name, offsetof(record, field), dtype_of<decltype(record::field)>()                             \
  }
#define TDIAG_DETAIL_COLUMN_AT(record, field, index, name)                                         \
  column {                                                                                         \
    name, offsetof(record, field) + (index) * sizeof(record::field[0]),                            \
        dtype_of<decltype(record::field)>()                                                        \
  }

template <typename Record>
py::dict columns_of(const event_store<Record>& store, std::initializer_list<column> columns,
                    py::handle owner) {
  const auto records = store.all();
  const auto* base = reinterpret_cast<const char*>(records.data());
  py::dict out;
  for (const auto& c : columns) {
    py::array view(c.type, {static_cast<py::ssize_t>(records.size())},
                   {static_cast<py::ssize_t>(sizeof(Record))},
                   records.empty() ? nullptr : base + c.offset, owner);
    view.attr("flags").attr("writeable") = false;
    out[c.name] = std::move(view);
  }
  return out;
}

py::dict kernels_columns(const trace::trace& t, py::handle owner) {
  using r = kernel_event;
  return columns_of(
      t.kernels,
      {TDIAG_DETAIL_COLUMN(r, start, "start_ns"), TDIAG_DETAIL_COLUMN(r, end, "end_ns"),
       TDIAG_DETAIL_COLUMN(r, lane, "lane"), TDIAG_DETAIL_COLUMN(r, name, "name_id"),
       TDIAG_DETAIL_COLUMN(r, device, "device"), TDIAG_DETAIL_COLUMN(r, context, "context"),
       TDIAG_DETAIL_COLUMN(r, stream, "stream"), TDIAG_DETAIL_COLUMN_AT(r, grid, 0, "grid_x"),
       TDIAG_DETAIL_COLUMN_AT(r, grid, 1, "grid_y"), TDIAG_DETAIL_COLUMN_AT(r, grid, 2, "grid_z"),
       TDIAG_DETAIL_COLUMN_AT(r, block, 0, "block_x"),
       TDIAG_DETAIL_COLUMN_AT(r, block, 1, "block_y"),
       TDIAG_DETAIL_COLUMN_AT(r, block, 2, "block_z"),
       TDIAG_DETAIL_COLUMN(r, shared_static, "shared_static"),
       TDIAG_DETAIL_COLUMN(r, shared_dynamic, "shared_dynamic"),
       TDIAG_DETAIL_COLUMN(r, registers, "registers"),
       TDIAG_DETAIL_COLUMN(r, correlation, "correlation"),
       TDIAG_DETAIL_COLUMN(r, launch_id, "launch_id")},
      owner);
}

py::dict copies_columns(const trace::trace& t, py::handle owner) {
  using r = copy_event;
  return columns_of(
      t.copies,
      {TDIAG_DETAIL_COLUMN(r, start, "start_ns"), TDIAG_DETAIL_COLUMN(r, end, "end_ns"),
       TDIAG_DETAIL_COLUMN(r, lane, "lane"), TDIAG_DETAIL_COLUMN(r, name, "name_id"),
       TDIAG_DETAIL_COLUMN(r, bytes, "bytes"), TDIAG_DETAIL_COLUMN(r, device, "device"),
       TDIAG_DETAIL_COLUMN(r, context, "context"), TDIAG_DETAIL_COLUMN(r, stream, "stream"),
       TDIAG_DETAIL_COLUMN(r, kind, "kind"), TDIAG_DETAIL_COLUMN(r, src_kind, "src_kind"),
       TDIAG_DETAIL_COLUMN(r, dst_kind, "dst_kind"),
       TDIAG_DETAIL_COLUMN(r, correlation, "correlation"), TDIAG_DETAIL_COLUMN(r, value, "value")},
      owner);
}

py::dict api_calls_columns(const trace::trace& t, py::handle owner) {
  using r = api_event;
  return columns_of(
      t.api_calls,
      {TDIAG_DETAIL_COLUMN(r, start, "start_ns"), TDIAG_DETAIL_COLUMN(r, end, "end_ns"),
       TDIAG_DETAIL_COLUMN(r, lane, "lane"), TDIAG_DETAIL_COLUMN(r, name, "name_id"),
       TDIAG_DETAIL_COLUMN(r, process, "process"), TDIAG_DETAIL_COLUMN(r, thread, "thread"),
       TDIAG_DETAIL_COLUMN(r, correlation, "correlation"),
       TDIAG_DETAIL_COLUMN(r, stack, "stack_id"), TDIAG_DETAIL_COLUMN(r, kind, "kind"),
       TDIAG_DETAIL_COLUMN(r, cbid, "cbid")},
      owner);
}

py::dict ranges_columns(const trace::trace& t, py::handle owner) {
  using r = range_event;
  return columns_of(t.ranges,
                    {TDIAG_DETAIL_COLUMN(r, start, "start_ns"),
                     TDIAG_DETAIL_COLUMN(r, end, "end_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
                     TDIAG_DETAIL_COLUMN(r, name, "name_id"), TDIAG_DETAIL_COLUMN(r, kind, "kind"),
                     TDIAG_DETAIL_COLUMN(r, correlation, "correlation")},
                    owner);
}

py::dict markers_columns(const trace::trace& t, py::handle owner) {
  using r = marker_event;
  return columns_of(t.markers,
                    {TDIAG_DETAIL_COLUMN(r, time, "time_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
                     TDIAG_DETAIL_COLUMN(r, name, "name_id"),
                     TDIAG_DETAIL_COLUMN(r, category, "category_id")},
                    owner);
}

py::dict memory_columns(const trace::trace& t, py::handle owner) {
  using r = memory_event;
  return columns_of(
      t.memory,
      {TDIAG_DETAIL_COLUMN(r, time, "time_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
       TDIAG_DETAIL_COLUMN(r, action, "action"), TDIAG_DETAIL_COLUMN(r, device, "device"),
       TDIAG_DETAIL_COLUMN(r, stack, "stack_id"), TDIAG_DETAIL_COLUMN(r, address, "address"),
       TDIAG_DETAIL_COLUMN(r, size, "size"), TDIAG_DETAIL_COLUMN(r, stream, "stream"),
       TDIAG_DETAIL_COLUMN(r, pool, "pool"), TDIAG_DETAIL_COLUMN(r, device_free, "device_free"),
       TDIAG_DETAIL_COLUMN(r, total_allocated, "total_allocated"),
       TDIAG_DETAIL_COLUMN(r, total_reserved, "total_reserved"),
       TDIAG_DETAIL_COLUMN(r, correlation, "correlation"),
       TDIAG_DETAIL_COLUMN(r, user_metadata, "user_metadata_id")},
      owner);
}

py::dict assertions_columns(const trace::trace& t, py::handle owner) {
  using r = assertion_event;
  return columns_of(
      t.assertions,
      {TDIAG_DETAIL_COLUMN(r, time, "time_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
       TDIAG_DETAIL_COLUMN(r, site, "site_id"), TDIAG_DETAIL_COLUMN(r, message, "message_id"),
       TDIAG_DETAIL_COLUMN(r, device, "device"), TDIAG_DETAIL_COLUMN_AT(r, block, 0, "block_x"),
       TDIAG_DETAIL_COLUMN_AT(r, block, 1, "block_y"),
       TDIAG_DETAIL_COLUMN_AT(r, block, 2, "block_z"),
       TDIAG_DETAIL_COLUMN_AT(r, thread, 0, "thread_x"),
       TDIAG_DETAIL_COLUMN_AT(r, thread, 1, "thread_y"),
       TDIAG_DETAIL_COLUMN_AT(r, thread, 2, "thread_z"),
       TDIAG_DETAIL_COLUMN(r, launch_id, "launch_id")},
      owner);
}

py::dict flows_columns(const trace::trace& t, py::handle owner) {
  using r = flow_event;
  return columns_of(
      t.flows,
      {TDIAG_DETAIL_COLUMN(r, time, "time_ns"),
       TDIAG_DETAIL_COLUMN(r, target_time, "target_time_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
       TDIAG_DETAIL_COLUMN(r, target_lane, "target_lane"),
       TDIAG_DETAIL_COLUMN(r, correlation, "correlation"), TDIAG_DETAIL_COLUMN(r, kind, "kind")},
      owner);
}

py::dict counters_columns(const trace::trace& t, py::handle owner) {
  using r = counter_event;
  return columns_of(t.counters,
                    {TDIAG_DETAIL_COLUMN(r, time, "time_ns"), TDIAG_DETAIL_COLUMN(r, lane, "lane"),
                     TDIAG_DETAIL_COLUMN(r, name, "name_id"),
                     TDIAG_DETAIL_COLUMN(r, value, "value")},
                    owner);
}

} // namespace

py::dict event_columns(const trace::trace& t, std::string_view kind, py::handle owner) {
  using make_columns = py::dict (*)(const trace::trace&, py::handle);
  static constexpr std::pair<std::string_view, make_columns> kinds[] = {
      {"kernels", &kernels_columns},       {"copies", &copies_columns},
      {"api_calls", &api_calls_columns},   {"ranges", &ranges_columns},
      {"markers", &markers_columns},       {"memory", &memory_columns},
      {"assertions", &assertions_columns}, {"flows", &flows_columns},
      {"counters", &counters_columns},
  };
  for (const auto& [name, make] : kinds) {
    if (name == kind)
      return make(t, owner);
  }
  throw py::value_error("no event kind '" + std::string(kind) +
                        "' (kernels, copies, api_calls, ranges, markers, memory, assertions, "
                        "flows, counters)");
}

#undef TDIAG_DETAIL_COLUMN
#undef TDIAG_DETAIL_COLUMN_AT

} // namespace tdiag::python
