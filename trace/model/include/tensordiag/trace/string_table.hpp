// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Interned strings: every name in a trace (kernel, op, file, function, lane) is stored once and
// referenced by a 32-bit id. Kineto JSON repeats a 300-character kernel name in every event; a
// trace keeps it once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tdiag::trace {

/// Id of an interned string. Id 0 is always the empty string ("no name").
using string_id = std::uint32_t;
inline constexpr string_id no_string = 0;

class string_table {
public:
  string_table();
  string_table(const string_table& other);
  string_table& operator=(const string_table& other);
  string_table(string_table&&) noexcept = default;
  string_table& operator=(string_table&&) noexcept = default;
  ~string_table() = default;

  /// The id of `text`, adding it if new. Equal texts always get the same id. Not thread-safe.
  [[nodiscard]] string_id intern(std::string_view text);
  /// The id of `text` if interned, else no_string (for the empty text too).
  [[nodiscard]] string_id find(std::string_view text) const noexcept;
  /// The text of `id`; stays valid while the table lives (strings never move).
  /// Undefined for id >= size().
  [[nodiscard]] std::string_view name(string_id id) const noexcept { return *strings_[id]; }
  /// The text of `id`, or "" when `id` is out of range (for data read from outside).
  [[nodiscard]] std::string_view name_or_empty(string_id id) const noexcept {
    return id < strings_.size() ? std::string_view(*strings_[id]) : std::string_view();
  }
  /// Number of ids, including id 0.
  [[nodiscard]] std::size_t size() const noexcept { return strings_.size(); }
  /// Total bytes of text held (for statistics).
  [[nodiscard]] std::size_t text_bytes() const noexcept { return text_bytes_; }
  /// About the bytes the table holds, its index included (an importer's memory budget).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

  friend bool operator==(const string_table& a, const string_table& b);

private:
  // unique_ptr keeps each string's address stable, so the map's string_view keys stay valid as
  // the vector grows.
  std::vector<std::unique_ptr<std::string>> strings_;
  std::unordered_map<std::string_view, string_id> index_;
  std::size_t text_bytes_ = 0;
};

} // namespace tdiag::trace
