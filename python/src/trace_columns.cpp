// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "trace_columns.hpp"

#include <tensordiag/trace/event_fields.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tdiag::python {
namespace {

namespace py = pybind11;
using namespace tdiag::trace;

py::dtype dtype_of(field_type type) {
  switch (type) {
  case field_type::u8:
    return py::dtype::of<std::uint8_t>();
  case field_type::u16:
    return py::dtype::of<std::uint16_t>();
  case field_type::u32:
    return py::dtype::of<std::uint32_t>();
  case field_type::u64:
    return py::dtype::of<std::uint64_t>();
  case field_type::i8:
    return py::dtype::of<std::int8_t>();
  case field_type::i16:
    return py::dtype::of<std::int16_t>();
  case field_type::i32:
    return py::dtype::of<std::int32_t>();
  case field_type::i64:
    return py::dtype::of<std::int64_t>();
  case field_type::f32:
    return py::dtype::of<float>();
  case field_type::f64:
    break;
  }
  return py::dtype::of<double>();
}

// A time says its unit and an interned id says what it is (start_ns, name_id); an array field
// is a column per element (grid_x, grid_y, grid_z).
std::string column_name(const field_info& f, std::size_t element) {
  std::string name(f.name);
  if (f.count > 1)
    return name + "_" + "xyzw"[element];
  if (f.unit == field_unit::ns)
    return name + "_ns";
  if (f.unit == field_unit::string_ref || f.unit == field_unit::stack_ref)
    return name + "_id";
  return name;
}

template <typename Record> py::dict columns_of(const event_store<Record>& store, py::handle owner) {
  const auto records = store.all();
  const auto* base = reinterpret_cast<const char*>(records.data());
  py::dict out;
  for (const field_info& f : event_fields<Record>) {
    for (std::size_t e = 0; e < f.count; ++e) {
      py::array view(dtype_of(f.type), {static_cast<py::ssize_t>(records.size())},
                     {static_cast<py::ssize_t>(sizeof(Record))},
                     records.empty() ? nullptr : base + f.offset + e * f.width, owner);
      view.attr("flags").attr("writeable") = false;
      out[py::str(column_name(f, e))] = std::move(view);
    }
  }
  return out;
}

template <auto Store> py::dict store_columns(const tdiag::trace::trace& t, py::handle owner) {
  return columns_of(t.*Store, owner);
}

const field_info* field_named(std::span<const field_info> fields, std::string_view name) {
  for (const auto& f : fields)
    if (f.name == name)
      return &f;
  return nullptr;
}

// Memory events: memory_record's columns (a chunk's), the event's own fields viewed in place
// and its detail's (trace::memory_details) copied out, row by row.
template <>
py::dict store_columns<&tdiag::trace::trace::memory>(const tdiag::trace::trace& t,
                                                     py::handle owner) {
  const auto events = t.memory.all();
  const auto* base = reinterpret_cast<const char*>(events.data());
  py::dict out;
  for (const field_info& f : event_fields<memory_record>) {
    if (const auto* own = field_named(event_fields<memory_event>, f.name)) {
      py::array view(dtype_of(own->type), {static_cast<py::ssize_t>(events.size())},
                     {static_cast<py::ssize_t>(sizeof(memory_event))},
                     events.empty() ? nullptr : base + own->offset, owner);
      view.attr("flags").attr("writeable") = false;
      out[py::str(column_name(f, 0))] = std::move(view);
      continue;
    }
    const auto* d = field_named(event_fields<memory_detail>, f.name);
    py::array column(dtype_of(d->type),
                     std::vector<py::ssize_t>{static_cast<py::ssize_t>(events.size())});
    auto* to = static_cast<char*>(column.mutable_data());
    for (std::size_t i = 0; i < events.size(); ++i)
      std::memcpy(to + i * d->width,
                  reinterpret_cast<const char*>(&t.detail_of(events[i])) + d->offset, d->width);
    column.attr("flags").attr("writeable") = false;
    out[py::str(column_name(f, 0))] = std::move(column);
  }
  return out;
}

} // namespace

py::dict event_columns(const tdiag::trace::trace& t, std::string_view kind, py::handle owner) {
  using make_columns = py::dict (*)(const tdiag::trace::trace&, py::handle);
  static constexpr std::pair<std::string_view, make_columns> kinds[] = {
      {"kernels", &store_columns<&tdiag::trace::trace::kernels>},
      {"copies", &store_columns<&tdiag::trace::trace::copies>},
      {"api_calls", &store_columns<&tdiag::trace::trace::api_calls>},
      {"ranges", &store_columns<&tdiag::trace::trace::ranges>},
      {"markers", &store_columns<&tdiag::trace::trace::markers>},
      {"memory", &store_columns<&tdiag::trace::trace::memory>},
      {"assertions", &store_columns<&tdiag::trace::trace::assertions>},
      {"flows", &store_columns<&tdiag::trace::trace::flows>},
      {"counters", &store_columns<&tdiag::trace::trace::counters>},
  };
  for (const auto& [name, make] : kinds) {
    if (name == kind)
      return make(t, owner);
  }
  throw py::value_error("no event kind '" + std::string(kind) +
                        "' (kernels, copies, api_calls, ranges, markers, memory, assertions, "
                        "flows, counters)");
}

} // namespace tdiag::python
