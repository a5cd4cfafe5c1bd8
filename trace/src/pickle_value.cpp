// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading a parsed pickle: pickle_value's typed accessors over pickle_document's nodes.
#include <tensordiag/trace/pickle_reader.hpp>

#include <bit>
#include <cstring>

#include "pickle_opcodes.hpp"

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

// --- pickle_value ---------------------------------------------------------------------------

pickle_kind pickle_value::kind() const noexcept {
  return doc_ ? doc_->nodes_[index_].kind : pickle_kind::none;
}
std::uint64_t pickle_value::offset() const noexcept {
  return doc_ ? doc_->nodes_[index_].offset : 0;
}
bool pickle_value::is_sequence() const noexcept {
  const auto k = kind();
  return k == pickle_kind::list || k == pickle_kind::tuple || k == pickle_kind::set;
}

std::optional<bool> pickle_value::as_bool() const noexcept {
  if (kind() != pickle_kind::boolean || !doc_)
    return std::nullopt;
  return doc_->nodes_[index_].payload != 0;
}
std::optional<std::int64_t> pickle_value::as_int() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::integer || n.kind == pickle_kind::boolean)
    return static_cast<std::int64_t>(n.payload);
  return std::nullopt;
}
std::optional<std::uint64_t> pickle_value::as_uint() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::integer || n.kind == pickle_kind::boolean) {
    if (static_cast<std::int64_t>(n.payload) < 0)
      return std::nullopt;
    return n.payload;
  }
  if (n.kind == pickle_kind::big_integer)
    return detail::wide_long_as_uint(
        reinterpret_cast<const std::uint8_t*>(doc_->bytes_.data()) + n.payload, n.aux);
  return std::nullopt;
}
std::optional<double> pickle_value::as_double() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::floating)
    return std::bit_cast<double>(n.payload);
  if (n.kind == pickle_kind::integer)
    return static_cast<double>(static_cast<std::int64_t>(n.payload));
  if (auto u = as_uint())
    return static_cast<double>(*u);
  return std::nullopt;
}
std::optional<std::string_view> pickle_value::as_string() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind != pickle_kind::string && n.kind != pickle_kind::bytes)
    return std::nullopt;
  return std::string_view(doc_->bytes_.data() + n.payload, n.aux);
}

std::size_t pickle_value::size() const noexcept {
  if (!doc_)
    return 0;
  const auto& n = doc_->nodes_[index_];
  if (n.kind < pickle_kind::list)
    return 0;
  const auto count = doc_->containers_[n.aux].size();
  return n.kind == pickle_kind::dict ? count / 2 : count;
}
pickle_value pickle_value::at(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][i]};
}
pickle_value pickle_value::key(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][2 * i]};
}
pickle_value pickle_value::value(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][2 * i + 1]};
}
pickle_value pickle_value::find(std::string_view name) const noexcept {
  if (!doc_ || kind() != pickle_kind::dict)
    return {};
  const auto& items = doc_->containers_[doc_->nodes_[index_].aux];
  // Backwards: with a repeated key, Python keeps the last value.
  for (std::size_t i = items.size() & ~std::size_t{1}; i >= 2;) {
    i -= 2;
    const auto& k = doc_->nodes_[items[i]];
    if (k.kind == pickle_kind::string && k.aux == name.size() &&
        std::memcmp(doc_->bytes_.data() + k.payload, name.data(), name.size()) == 0)
      return {doc_, items[i + 1]};
  }
  return {};
}

} // namespace tdiag::trace
