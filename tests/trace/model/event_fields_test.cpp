// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/event_fields.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "formats/src/tdtrace/tdtrace_schema.hpp"

namespace tdiag::trace {
namespace {

// What docs/trace-format.md says about one field: its name (one per element of an array), then
// its coding, unit and documentation in parentheses.
std::string field_text(const field_info& f, std::span<const field_info> table) {
  std::string names(f.name);
  if (f.count > 1) {
    names.clear();
    for (std::size_t e = 0; e < f.count; ++e)
      names += fmt::format("{}{} {}", e ? ", " : "", f.name, "xyzw"[e]);
  }
  std::string notes;
  auto note = [&](std::string_view text) {
    if (!text.empty())
      notes += fmt::format("{}{}", notes.empty() ? "" : ", ", text);
  };
  const bool time = f.unit == field_unit::ns;
  switch (f.coding) {
  case field_coding::plain:
    note(f.is_signed() && !time ? "signed" : "");
    break;
  case field_coding::delta:
    note(f.is_signed() && !time ? "signed delta" : "delta");
    break;
  case field_coding::relative:
    note(fmt::format("rel {}", table[f.relative_to].name));
    break;
  case field_coding::raw8:
    note("raw8");
    break;
  }
  note(f.type == field_type::f32 ? "float32" : f.type == field_type::f64 ? "float64" : "");
  static const std::map<field_unit, std::string_view> units = {
      {field_unit::ns, "ns"},
      {field_unit::bytes, "bytes"},
      {field_unit::gbps, "GB/s"},
      {field_unit::string_ref, "string id"},
      {field_unit::stack_ref, "stack id"},
      {field_unit::lane_ref, "lane id"},
  };
  if (auto it = units.find(f.unit); it != units.end())
    note(it->second);
  if (!f.doc.empty())
    notes += fmt::format("{}{}", notes.empty() ? "" : "; ", f.doc);
  return notes.empty() ? names : fmt::format("{} ({})", names, notes);
}

template <typename Record> std::string columns_text() {
  std::string out;
  for (const auto& f : event_fields<Record>)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", field_text(f, event_fields<Record>));
  return out;
}

// The Columns cell of each row of the "| k | Kind | Columns |" table, by k.
std::map<int, std::string> documented_columns() {
  std::ifstream in(TDIAG_SOURCE_DIR "/docs/trace-format.md");
  std::map<int, std::string> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| k | Kind | Columns |")) {
      inside = true;
      continue;
    }
    if (!inside || line.starts_with("|---"))
      continue;
    if (!line.starts_with("| "))
      break;
    const auto last = line.rfind(" |");
    const auto cells = line.rfind(" | ", last - 1);
    if (cells != std::string::npos && cells + 3 <= last)
      rows[std::stoi(line.substr(2))] = line.substr(cells + 3, last - cells - 3);
  }
  return rows;
}

TEST(EventFields, DocsSchemaTableIsTheFieldTables) {
  const auto rows = documented_columns();
  const std::string expected[] = {
      columns_text<kernel_event>(),    columns_text<copy_event>(),
      columns_text<api_event>(),       columns_text<range_event>(),
      columns_text<marker_event>(),    columns_text<memory_record>(),
      columns_text<assertion_event>(), columns_text<flow_event>(),
      columns_text<counter_event>(),   columns_text<sync_wait>(),
      columns_text<collective_info>(),
  };
  ASSERT_EQ(rows.size(), std::size(expected)) << "docs/trace-format.md: one row per kind";
  for (int k = 0; k < static_cast<int>(std::size(expected)); ++k) {
    ASSERT_TRUE(rows.count(k)) << "no row for kind " << k;
    EXPECT_EQ(rows.at(k), expected[k]) << "docs/trace-format.md, the Columns of kind " << k;
  }
}

TEST(EventFields, ChunkColumnsFollowTheTable) {
  // One column per field and per array element, in table order; end is coded from start.
  constexpr auto columns = detail::schema<kernel_event>();
  static_assert(columns.size() == 18);
  EXPECT_EQ(columns[0].offset, offsetof(kernel_event, start));
  EXPECT_EQ(columns[1].how, field_coding::relative);
  EXPECT_EQ(columns[1].ref, 0);
  EXPECT_EQ(columns[8].offset, offsetof(kernel_event, grid) + 4);
  EXPECT_EQ(columns[17].offset, offsetof(kernel_event, launch_id));
  constexpr auto flows = detail::schema<flow_event>();
  EXPECT_EQ(flows[1].offset, offsetof(flow_event, target_time));
  EXPECT_EQ(flows[1].ref, 0);
}

TEST(EventFields, ReadFieldReadsTheRecord) {
  kernel_event k;
  k.grid[1] = 7;
  k.device = -3;
  copy_event c;
  c.bandwidth_gbps = 12.5F;
  EXPECT_EQ((read_field<kernel_event, 7>(k, 1)), 7u);
  EXPECT_EQ((read_field<kernel_event, 4>(k)), -3);
  EXPECT_EQ((read_field<copy_event, 13>(c)), 12.5F);
  EXPECT_EQ(event_fields<kernel_event>[7].name, "grid");
  EXPECT_EQ(event_fields<copy_event>[13].name, "bandwidth_gbps");
}

} // namespace
} // namespace tdiag::trace
