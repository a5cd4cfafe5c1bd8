// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading a parsed pickle: pickle_value's typed accessors, over the stream's value handles.
#include <tensordiag/trace/pickle_reader.hpp>

#include <bit>
#include <cstring>

#include "snapshot_stream.hpp"

namespace tdiag::trace {
namespace {
using kind = pickle_kind;
} // namespace

std::string_view to_string(pickle_kind k) noexcept {
  switch (k) {
  case kind::none:
    return "None";
  case kind::boolean:
    return "bool";
  case kind::integer:
    return "int";
  case kind::big_integer:
    return "int";
  case kind::floating:
    return "float";
  case kind::string:
    return "str";
  case kind::bytes:
    return "bytes";
  case kind::list:
    return "list";
  case kind::tuple:
    return "tuple";
  case kind::dict:
    return "dict";
  case kind::set:
    return "set";
  }
  return "?";
}

// --- pickle_value: a handle over the document's snap_stream ----------------------------------

pickle_value::pickle_value(const pickle_document* doc, const detail::snap_value& v) noexcept
    : doc_(v.valid() ? doc : nullptr), handle_(v.raw()), where_(v.offset()) {}
detail::snap_value pickle_value::view() const noexcept {
  return doc_ ? detail::snap_value(doc_->stream_.get(), handle_, where_) : detail::snap_value{};
}

std::uint32_t pickle_value::id() const noexcept {
  // The handle is the identity: one per container and string, shared by memo fetches.
  return static_cast<std::uint32_t>(handle_ ^ (handle_ >> 32) ^ (handle_ >> 60) * 0x9e3779b9u);
}
pickle_kind pickle_value::kind() const noexcept {
  return view().kind();
}
std::uint64_t pickle_value::offset() const noexcept {
  return doc_ ? view().offset() : 0;
}
bool pickle_value::is_sequence() const noexcept {
  return view().is_sequence();
}
std::optional<bool> pickle_value::as_bool() const noexcept {
  return view().as_bool();
}
std::optional<std::int64_t> pickle_value::as_int() const noexcept {
  return view().as_int();
}
std::optional<std::uint64_t> pickle_value::as_uint() const noexcept {
  return view().as_uint();
}
std::optional<double> pickle_value::as_double() const noexcept {
  return view().as_double();
}
std::optional<std::string_view> pickle_value::as_string() const noexcept {
  return view().as_string();
}
std::size_t pickle_value::size() const noexcept {
  return view().size();
}
pickle_value pickle_value::at(std::size_t i) const noexcept {
  return {doc_, view().at(i)};
}
pickle_value pickle_value::key(std::size_t i) const noexcept {
  return {doc_, view().key(i)};
}
pickle_value pickle_value::value(std::size_t i) const noexcept {
  return {doc_, view().value(i)};
}
pickle_value pickle_value::find(std::string_view name) const noexcept {
  return {doc_, view().find(name)};
}

void pickle_value::visit(bool pairs, item_fn fn, void* context) const {
  const auto v = view();
  if (pairs ? v.kind() != kind::dict : !v.is_sequence())
    return;
  for (std::size_t i = 0, n = v.size(); i < n; ++i) {
    if (pairs)
      fn(context, v.key(i).as_string().value_or(std::string_view()), {doc_, v.value(i)});
    else
      fn(context, {}, {doc_, v.at(i)});
  }
}

} // namespace tdiag::trace
