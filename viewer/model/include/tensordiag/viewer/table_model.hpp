// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A sortable, filterable table for the tables panel: text cells, a numeric sort key per cell,
// and where a row leads (an event to select, a time range to show). The panel draws only the
// visible rows (ImGuiListClipper), so a table costs per frame what fits on the screen.
#pragma once

#include <tensordiag/viewer/event_ref.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::view {

struct table_row {
  std::vector<std::string> cells;
  /// Sort key per cell; NaN sorts by the cell's text instead.
  std::vector<double> keys;
  /// What the filter's regex is matched against (usually the name column).
  std::string filter_text;
  event_ref target;      ///< selected on click (may be none)
  std::int64_t time = 0; ///< shown on click when target is none and has_time
  bool has_time = false;
  std::size_t report = static_cast<std::size_t>(-1);     ///< a report diagnostic's report
  std::size_t diagnostic = static_cast<std::size_t>(-1); ///< ... and its index
};

class table_model {
public:
  table_model() = default;
  table_model(std::string title, std::vector<std::string> columns);

  /// Appends a row; cells and keys are padded to the column count.
  void add_row(table_row row);

  /// Keeps the rows whose filter_text matches `pattern` (ECMAScript, case-insensitive) anywhere;
  /// an empty pattern keeps all. A malformed pattern keeps the previous filter and returns its
  /// error text; "" on success.
  std::string set_filter(std::string_view pattern);
  /// Sorts the visible rows by `column` (kept for later filters).
  void sort(std::size_t column, bool ascending);

  [[nodiscard]] const std::string& title() const noexcept { return title_; }
  [[nodiscard]] const std::vector<std::string>& columns() const noexcept { return columns_; }
  [[nodiscard]] const std::vector<table_row>& rows() const noexcept { return rows_; }
  /// Indices into rows() of the rows that pass the filter, in sort order.
  [[nodiscard]] const std::vector<std::uint32_t>& visible() const noexcept { return visible_; }
  [[nodiscard]] const std::string& filter() const noexcept { return filter_; }
  /// The column sort() last used (npos: none) and its direction.
  [[nodiscard]] std::size_t sort_column() const noexcept { return sort_column_; }
  [[nodiscard]] bool sort_ascending() const noexcept { return sort_ascending_; }

private:
  void apply_sort();

  std::string title_;
  std::vector<std::string> columns_;
  std::vector<table_row> rows_;
  std::vector<std::uint32_t> visible_;
  std::string filter_;
  std::size_t sort_column_ = static_cast<std::size_t>(-1);
  bool sort_ascending_ = true;
};

} // namespace tdiag::view
