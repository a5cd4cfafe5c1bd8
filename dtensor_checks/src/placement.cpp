// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/codes.hpp>
#include <tensordiag/dtensor_checks/placement.hpp>

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace tdiag::dtensor {

const placement& placement_list::at(std::size_t i) const {
  if (i >= size_)
    throw std::out_of_range("placement_list::at");
  return items_[i];
}

void placement_list::push_back(const placement& p) {
  if (size_ >= capacity)
    throw std::length_error("a mesh has at most 8 dims");
  items_[size_++] = p;
}

void placement_list::assign(std::size_t n, placement p) {
  if (n > capacity)
    throw std::length_error("a mesh has at most 8 dims");
  for (std::size_t i = 0; i < n; ++i)
    items_[i] = p;
  size_ = static_cast<std::uint8_t>(n);
}

std::string_view to_string(reduce_op op) noexcept {
  switch (op) {
  case reduce_op::sum:
    return "sum";
  case reduce_op::avg:
    return "avg";
  case reduce_op::max:
    return "max";
  case reduce_op::min:
    return "min";
  }
  return "sum";
}

std::optional<reduce_op> parse_reduce_op(std::string_view text) noexcept {
  if (text == "sum")
    return reduce_op::sum;
  if (text == "avg")
    return reduce_op::avg;
  if (text == "max")
    return reduce_op::max;
  if (text == "min")
    return reduce_op::min;
  return std::nullopt;
}

std::string to_string(const placement& p) {
  switch (p.kind) {
  case placement_kind::replicate:
    return "R";
  case placement_kind::shard:
    return fmt::format("S({})", p.dim);
  case placement_kind::partial:
    return fmt::format("P({})", to_string(p.op));
  }
  return "R";
}

std::string to_torch_string(const placement& p) {
  switch (p.kind) {
  case placement_kind::replicate:
    return "Replicate()";
  case placement_kind::shard:
    return fmt::format("Shard(dim={})", p.dim);
  case placement_kind::partial:
    return p.masked ? "MaskPartial(sum)" : fmt::format("Partial({})", to_string(p.op));
  }
  return "Replicate()";
}

namespace {
[[noreturn]] void bad_placements(std::string message) {
  throw_input_error(codes::placement_count, "invalid placements", std::move(message),
                    "write placements as R, S(d) or P(sum|avg|max|min), e.g. (S(0),P(sum))");
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// `name(inner)` → inner, or nullopt when `s` is not of that form.
std::optional<std::string_view> call_body(std::string_view s, std::string_view name) noexcept {
  if (s.size() < name.size() + 2 || s.substr(0, name.size()) != name)
    return std::nullopt;
  s.remove_prefix(name.size());
  s = trim(s);
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    return std::nullopt;
  return trim(s.substr(1, s.size() - 2));
}
} // namespace

std::optional<placement> parse_placement(std::string_view text) noexcept {
  text = trim(text);
  if (text == "R" || text == "Replicate()" || text == "Replicate")
    return placement::replicate();
  if (text == "P" || text == "Partial()" || text == "Partial")
    return placement::partial();
  for (std::string_view name : {"S", "Shard"}) {
    if (auto body = call_body(text, name)) {
      auto b = *body;
      if (b.substr(0, 4) == "dim=")
        b = trim(b.substr(4));
      std::int32_t d = 0;
      auto [p, ec] = std::from_chars(b.data(), b.data() + b.size(), d);
      if (ec != std::errc{} || p != b.data() + b.size() || d < 0 || d > 64)
        return std::nullopt;
      return placement::shard(d);
    }
  }
  for (std::string_view name : {"P", "Partial"}) {
    if (auto body = call_body(text, name)) {
      auto b = *body;
      if (b.substr(0, 10) == "reduce_op=")
        b = trim(b.substr(10));
      if (b.size() >= 2 && (b.front() == '\'' || b.front() == '"'))
        b = b.substr(1, b.size() - 2);
      if (b.empty())
        return placement::partial();
      if (auto op = parse_reduce_op(b))
        return placement::partial(*op);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string to_string(const placement_list& ps) {
  std::string out = "[";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i)
      out += ", ";
    out += to_string(ps[i]);
  }
  return out + "]";
}

std::string to_compact_string(const placement_list& ps) {
  std::string out;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    out += to_string(ps[i]);
    if (!ps[i].is_shard())
      continue;
    // PyTorch marks the mesh dim when one tensor dim is sharded on several mesh dims.
    std::size_t same = 0;
    for (const auto& q : ps)
      same += q.is_shard(ps[i].dim) ? 1 : 0;
    if (same > 1)
      out += fmt::format("[{}]", i);
  }
  return out;
}

std::string to_torch_string(const placement_list& ps) {
  std::string out = "(";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i)
      out += ", ";
    out += to_torch_string(ps[i]);
  }
  if (ps.size() == 1)
    out += ",";
  return out + ")";
}

placement_list parse_placements(std::string_view text) {
  auto t = trim(text);
  if (!t.empty() && (t.front() == '(' || t.front() == '[')) {
    const char close = t.front() == '(' ? ')' : ']';
    if (t.back() != close) {
      bad_placements(fmt::format("unbalanced brackets in placements '{}'", text));
    }
    t = trim(t.substr(1, t.size() - 2));
  }
  placement_list out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= t.size(); ++i) {
    if (i < t.size() && t[i] == '(')
      ++depth;
    if (i < t.size() && t[i] == ')')
      --depth;
    if (i == t.size() || (t[i] == ',' && depth == 0)) {
      auto item = trim(t.substr(start, i - start));
      start = i + 1;
      if (item.empty() && i == t.size() && !out.empty())
        break; // trailing comma
      auto p = parse_placement(item);
      if (!p) {
        bad_placements(
            fmt::format("'{}' is not a placement (expected R, S(d) or P(sum|avg|max|min))", item));
      }
      if (out.size() == placement_list::capacity)
        bad_placements(
            fmt::format("more than {} placements in '{}'", placement_list::capacity, text));
      out.push_back(*p);
    }
  }
  return out;
}

bool has_shard(const placement_list& ps) noexcept {
  for (const auto& p : ps) {
    if (p.is_shard())
      return true;
  }
  return false;
}

bool all_replicate(const placement_list& ps) noexcept {
  for (const auto& p : ps) {
    if (!p.is_replicate())
      return false;
  }
  return true;
}

} // namespace tdiag::dtensor
