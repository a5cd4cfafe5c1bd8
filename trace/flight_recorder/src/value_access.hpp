// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One view over the two forms of a dump, so that one builder (dump_builder.hpp) reads both: a
// pickle value of the safe pickle reader, or a simdjson DOM element. The JSON form writes some
// numbers as strings (pg_status) and absent times as 0; the accessors accept what either writes.
#pragma once

#include <tensordiag/trace/pickle_reader.hpp>

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tdiag::trace::fr::detail {

// An integer written as text ("17", "-1"), as the JSON form writes pg_status.
inline std::optional<std::int64_t> int_from_text(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return v;
}

struct pickle_access {
  using value = pickle_value;
  static bool present(const value& v) { return v.valid() && !v.is_none(); }
  static bool exists(const value& v) { return v.valid(); } ///< None included
  static bool is_bool(const value& v) { return v.valid() && v.kind() == pickle_kind::boolean; }
  static bool is_dict(const value& v) { return v.valid() && v.is_dict(); }
  static bool is_list(const value& v) { return v.valid() && v.is_sequence(); }
  static value find(const value& v, std::string_view key) { return v.find(key); }
  /// The object a value is, equal for every reference to one shared object; 0 when unknown.
  static std::uint64_t identity(const value& v) { return v.is_dict() ? v.identity() : 0; }
  static std::optional<std::int64_t> as_int(const value& v) {
    if (!v.valid())
      return std::nullopt;
    if (auto i = v.as_int())
      return i;
    if (auto s = v.as_string())
      return int_from_text(*s);
    return std::nullopt;
  }
  static std::optional<double> as_double(const value& v) {
    return v.valid() ? v.as_double() : std::nullopt;
  }
  static std::optional<std::string_view> as_string(const value& v) {
    return v.valid() && v.kind() == pickle_kind::string ? v.as_string() : std::nullopt;
  }
  static std::optional<bool> as_bool(const value& v) {
    return v.valid() ? v.as_bool() : std::nullopt;
  }
  template <typename Fn> static void for_each(const value& v, Fn&& fn) {
    v.for_each_element([&](const value& item) { fn(item); });
  }
  // Keys as text: a str or bytes key's contents, "" for any other.
  template <typename Fn> static void for_each_member(const value& v, Fn&& fn) {
    v.for_each_item([&](std::string_view key, const value& item) { fn(key, item); });
  }
  static std::size_t size(const value& v) { return v.valid() ? v.size() : 0; }
};

// A DOM element, or nothing (a key that is absent).
struct json_value {
  simdjson::dom::element element;
  bool valid = false;
};

struct json_access {
  using value = json_value;
  static bool present(const value& v) { return v.valid && !v.element.is_null(); }
  static bool exists(const value& v) { return v.valid; } ///< null included
  static bool is_bool(const value& v) { return v.valid && v.element.is_bool(); }
  static bool is_dict(const value& v) { return v.valid && v.element.is_object(); }
  static bool is_list(const value& v) { return v.valid && v.element.is_array(); }
  static value find(const value& v, std::string_view key) {
    if (!is_dict(v))
      return {};
    simdjson::dom::object object;
    if (v.element.get_object().get(object) != simdjson::SUCCESS)
      return {};
    value found; // with a repeated key, the last, as Python's json keeps
    for (auto field : object)
      if (field.key == key)
        found = {field.value, true};
    return found;
  }
  static std::uint64_t identity(const value&) { return 0; } // JSON shares no objects
  static std::optional<std::int64_t> as_int(const value& v) {
    if (!v.valid)
      return std::nullopt;
    if (v.element.is_int64())
      return v.element.get_int64().value_unsafe();
    if (v.element.is_uint64())
      return std::nullopt; // above int64: no sequence number or time is
    if (v.element.is_bool())
      return v.element.get_bool().value_unsafe() ? 1 : 0;
    if (v.element.is_string())
      return int_from_text(v.element.get_string().value_unsafe());
    return std::nullopt;
  }
  static std::optional<double> as_double(const value& v) {
    if (!v.valid || !v.element.is_number())
      return std::nullopt;
    return v.element.get_double().value_unsafe();
  }
  static std::optional<std::string_view> as_string(const value& v) {
    if (!v.valid || !v.element.is_string())
      return std::nullopt;
    return v.element.get_string().value_unsafe();
  }
  static std::optional<bool> as_bool(const value& v) {
    if (!v.valid || !v.element.is_bool())
      return std::nullopt;
    return v.element.get_bool().value_unsafe();
  }
  template <typename Fn> static void for_each(const value& v, Fn&& fn) {
    simdjson::dom::array array;
    if (v.element.get_array().get(array) != simdjson::SUCCESS)
      return;
    for (simdjson::dom::element e : array)
      fn(value{e, true});
  }
  template <typename Fn> static void for_each_member(const value& v, Fn&& fn) {
    simdjson::dom::object object;
    if (v.element.get_object().get(object) != simdjson::SUCCESS)
      return;
    for (auto field : object)
      fn(field.key, value{field.value, true});
  }
  static std::size_t size(const value& v) {
    simdjson::dom::array array;
    if (v.valid && v.element.get_array().get(array) == simdjson::SUCCESS)
      return array.size();
    simdjson::dom::object object;
    if (v.valid && v.element.get_object().get(object) == simdjson::SUCCESS)
      return object.size();
    return 0;
  }
};

} // namespace tdiag::trace::fr::detail
