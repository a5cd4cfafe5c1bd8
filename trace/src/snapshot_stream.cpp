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

std::span<const std::uint64_t> snap_stream::items(snap_value v) const noexcept {
  if (tag_of(v.raw()) != t_container)
    return {};
  const auto& c = containers_[payload_of(v.raw())];
  return c.converted ? std::span<const std::uint64_t>{} : std::span<const std::uint64_t>(c.items);
}
std::string_view snap_stream::box_text(std::uint64_t handle) const noexcept {
  if (tag_of(handle) != t_box)
    return {};
  const auto& b = boxes_[payload_of(handle)];
  if (b.kind != pickle_kind::string && b.kind != pickle_kind::bytes)
    return {};
  return std::string_view(arena_.data() + b.payload, b.aux);
}

} // namespace tdiag::trace::detail
