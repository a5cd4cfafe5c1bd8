// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "snapshot_stream.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "pickle_opcodes.hpp"

namespace tdiag::trace::detail {
namespace {

using kind = pickle_kind;
using namespace snap;

} // namespace

// --- snap_value ------------------------------------------------------------------------------

pickle_kind snap_value::kind() const noexcept {
  if (s_ == nullptr)
    return kind::none;
  switch (tag_of(v_)) {
  case t_false:
  case t_true:
    return kind::boolean;
  case t_int:
    return kind::integer;
  case t_box:
    return s_->boxes_[payload_of(v_)].kind;
  case t_container: {
    const auto& c = s_->containers_[payload_of(v_)];
    return c.converted ? kind::dict : c.kind;
  }
  case t_row:
  case t_frame:
    return kind::dict;
  case t_stack:
    return kind::list;
  default:
    return kind::none;
  }
}
std::uint64_t snap_value::offset() const noexcept {
  if (s_ != nullptr && tag_of(v_) == t_box)
    return s_->boxes_[payload_of(v_)].offset;
  if (s_ != nullptr && tag_of(v_) == t_container)
    return s_->containers_[payload_of(v_)].offset;
  return where_;
}
bool snap_value::is_sequence() const noexcept {
  const auto k = kind();
  return k == kind::list || k == kind::tuple || k == kind::set;
}
std::optional<bool> snap_value::as_bool() const noexcept {
  if (s_ == nullptr || (tag_of(v_) != t_true && tag_of(v_) != t_false))
    return std::nullopt;
  return tag_of(v_) == t_true;
}
std::optional<std::int64_t> snap_value::as_int() const noexcept {
  if (s_ == nullptr)
    return std::nullopt;
  if (tag_of(v_) == t_int)
    return inline_int(v_);
  if (tag_of(v_) == t_true || tag_of(v_) == t_false)
    return tag_of(v_) == t_true ? 1 : 0;
  if (tag_of(v_) == t_box && s_->boxes_[payload_of(v_)].kind == kind::integer)
    return static_cast<std::int64_t>(s_->boxes_[payload_of(v_)].payload);
  return std::nullopt;
}
std::optional<std::uint64_t> snap_value::as_uint() const noexcept {
  if (auto i = as_int())
    return *i < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(*i));
  if (kind() != kind::big_integer)
    return std::nullopt;
  const auto& b = s_->boxes_[payload_of(v_)];
  const auto* p = reinterpret_cast<const std::uint8_t*>(s_->arena_.data()) + b.payload;
  if ((p[b.aux - 1] & 0x80) != 0)
    return std::nullopt; // negative
  for (std::size_t i = 8; i < b.aux; ++i)
    if (p[i] != 0)
      return std::nullopt; // wider than 64 bits
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}
std::optional<double> snap_value::as_double() const noexcept {
  if (kind() == kind::floating)
    return std::bit_cast<double>(s_->boxes_[payload_of(v_)].payload);
  if (auto i = as_int())
    return static_cast<double>(*i);
  if (auto u = as_uint())
    return static_cast<double>(*u);
  return std::nullopt;
}
std::optional<std::string_view> snap_value::as_string() const noexcept {
  const auto k = kind();
  if (k != kind::string && k != kind::bytes)
    return std::nullopt;
  const auto& b = s_->boxes_[payload_of(v_)];
  return std::string_view(s_->arena_.data() + b.payload, b.aux);
}
std::optional<std::uint32_t> snap_value::row() const noexcept {
  if (s_ == nullptr)
    return std::nullopt;
  if (tag_of(v_) == t_row)
    return static_cast<std::uint32_t>(payload_of(v_));
  if (tag_of(v_) == t_container && s_->containers_[payload_of(v_)].converted)
    return s_->containers_[payload_of(v_)].cached;
  return std::nullopt;
}
std::optional<std::uint32_t> snap_value::string_key() const noexcept {
  if (kind() != kind::string)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v_));
}
std::size_t snap_value::size() const noexcept {
  if (s_ == nullptr || tag_of(v_) != t_container)
    return 0;
  const auto& c = s_->containers_[payload_of(v_)];
  if (c.converted)
    return 0;
  const auto n = c.run_count + c.items.size();
  return c.kind == kind::dict ? n / 2 : n;
}
snap_value snap_value::at(std::size_t i) const noexcept {
  const auto& c = s_->containers_[payload_of(v_)];
  if (i < c.run_count)
    return {s_, make(t_row, c.run_first + i), c.offset};
  return {s_, c.items[i - c.run_count], c.offset};
}
snap_value snap_value::key(std::size_t i) const noexcept {
  const auto& c = s_->containers_[payload_of(v_)];
  return {s_, c.items[2 * i], c.offset};
}
snap_value snap_value::value(std::size_t i) const noexcept {
  const auto& c = s_->containers_[payload_of(v_)];
  return {s_, c.items[2 * i + 1], c.offset};
}
snap_value snap_value::find(std::string_view name) const noexcept {
  if (kind() != kind::dict)
    return {};
  for (std::size_t i = 0, n = size(); i < n; ++i)
    if (key(i).as_string() == name)
      return value(i);
  return {};
}

// --- snap_stream ------------------------------------------------------------------------------

snap_stream::snap_stream(input_file* file, std::string_view bytes, std::string source,
                         const pickle_limits& limits, entry_sink& sink)
    : file_(file), source_(std::move(source)), limits_(limits), sink_(sink) {
  if (file_ != nullptr) {
    total_ = file_->size();
  } else {
    data_ = reinterpret_cast<const std::uint8_t*>(bytes.data());
    end_ = bytes.size();
    total_ = bytes.size();
  }
}

std::optional<std::uint32_t> snap_stream::cached(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_container)
    return std::nullopt;
  const auto& c = containers_[payload_of(v.raw())];
  if (c.converted || c.cached == none32)
    return std::nullopt;
  return c.cached;
}
bool snap_stream::unshared(snap_value v) const noexcept {
  return tag_of(v.raw()) == t_container && containers_[payload_of(v.raw())].refs <= 1;
}
std::optional<std::uint32_t> snap_stream::settled_stack(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_stack)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v.raw()));
}
std::optional<std::uint32_t> snap_stream::settled_frame(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_frame)
    return std::nullopt;
  return static_cast<std::uint32_t>(payload_of(v.raw()));
}

} // namespace tdiag::trace::detail
