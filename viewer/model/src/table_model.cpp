// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/table_model.hpp>

#include <algorithm>
#include <numeric>
#include <regex>

namespace tdiag::view {

table_model::table_model(std::string title, std::vector<std::string> columns)
    : title_(std::move(title)), columns_(std::move(columns)) {}

void table_model::add_row(table_row row) {
  row.cells.resize(columns_.size());
  row.keys.resize(columns_.size(), std::numeric_limits<double>::quiet_NaN());
  if (row.filter_text.empty() && !row.cells.empty())
    row.filter_text = row.cells.front();
  const bool passes = filter_.empty(); // re-filtered by set_filter() otherwise
  rows_.push_back(std::move(row));
  if (passes)
    visible_.push_back(static_cast<std::uint32_t>(rows_.size() - 1));
}

std::string table_model::set_filter(std::string_view pattern) {
  std::vector<std::uint32_t> kept;
  if (pattern.empty()) {
    kept.resize(rows_.size());
    std::iota(kept.begin(), kept.end(), 0u);
  } else {
    std::regex re;
    try {
      re = std::regex(pattern.begin(), pattern.end(),
                      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return e.what();
    }
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (std::regex_search(rows_[i].filter_text, re))
        kept.push_back(static_cast<std::uint32_t>(i));
  }
  filter_ = pattern;
  visible_ = std::move(kept);
  apply_sort();
  return {};
}

void table_model::sort(std::size_t column, bool ascending) {
  sort_column_ = column;
  sort_ascending_ = ascending;
  apply_sort();
}

void table_model::apply_sort() {
  if (sort_column_ >= columns_.size())
    return;
  const std::size_t c = sort_column_;
  std::stable_sort(visible_.begin(), visible_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto& ra = rows_[a];
    const auto& rb = rows_[b];
    const double ka = ra.keys[c];
    const double kb = rb.keys[c];
    bool less;
    bool greater;
    if (!std::isnan(ka) && !std::isnan(kb)) {
      less = ka < kb;
      greater = kb < ka;
    } else {
      less = ra.cells[c] < rb.cells[c];
      greater = rb.cells[c] < ra.cells[c];
    }
    return sort_ascending_ ? less : greater;
  });
}

} // namespace tdiag::view
