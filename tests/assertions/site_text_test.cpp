// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "../../assertions/src/site_text.hpp"

using namespace tdiag::assertions::detail;

TEST(SiteText, SplitsArgumentsAtTopLevelCommasOnly) {
  const auto parts = split_arguments(R"(f(a, b) < n[1, 2], "x, {}", g(c, d))");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "f(a, b) < n[1, 2]");
  EXPECT_EQ(parts[1], R"("x, {}")");
  EXPECT_EQ(parts[2], "g(c, d)");
}

TEST(SiteText, ShortFunctionNamesKeepTemplateArguments) {
  EXPECT_EQ(
      short_function_name("void gather(const T*, const I*, T*, int) [with T = float; I = int]"),
      "gather<float, int>");
  EXPECT_EQ(short_function_name("void gather(const T *, int) [T = double]"), "gather<double>");
  EXPECT_EQ(short_function_name("void ns::gather<float>(float const*, int)"), "ns::gather<float>");
  EXPECT_EQ(short_function_name("void plain_kernel(int)"), "plain_kernel");
  EXPECT_EQ(strip_parentheses("(pair<a, b>)"), "pair<a, b>");
}

TEST(SiteText, DescribesIndexChecksWithBothValues) {
  site_text site;
  site.kind = tdiag::assertions::site_kind::index;
  site.expression = "j, n";
  site.operand_count = 2;
  tdiag::assertions::failure_record r{};
  r.operand_count = 2;
  r.types[0] = tdiag::assertions::value_type::i32;
  r.values[0] = 17;
  r.types[1] = tdiag::assertions::value_type::i32;
  r.values[1] = 16;
  const auto text = describe(site, &r);
  EXPECT_EQ(text.headline, "index 17 not below 16 (TDIAG_CHECK_INDEX(j, n))");
  ASSERT_EQ(text.values.size(), 2u);
  EXPECT_EQ(text.values[0].name, "j");
  EXPECT_EQ(text.values[1].name, "n");
}

TEST(SiteText, BadFormatStringsShowTheFormatAndTheValues) {
  site_text site;
  site.expression = R"(x > 0, "x is {:q}", x)";
  site.message = "x is {:q}";
  site.operand_count = 1;
  tdiag::assertions::failure_record r{};
  r.operand_count = 1;
  r.types[0] = tdiag::assertions::value_type::i32;
  r.values[0] = 5;
  const auto text = describe(site, &r);
  EXPECT_NE(text.headline.find("format error"), std::string::npos) << text.headline;
  EXPECT_NE(text.headline.find("x is {:q}"), std::string::npos);
}

namespace {
// Lays out a copy as gpu_fail.h's save_site_text() does: four NUL-terminated strings in a row.
void save(tdiag::assertions::site_text_copy& e, std::uint64_t site, std::uint32_t line,
          const std::string (&text)[4]) {
  e.descriptor = {};
  e.descriptor.version = tdiag::assertions::layout_version;
  e.descriptor.kind = tdiag::assertions::site_kind::index;
  e.descriptor.operand_count = 2;
  e.descriptor.line = line;
  std::uint32_t* lengths[4] = {&e.descriptor.file_length, &e.descriptor.expression_length,
                               &e.descriptor.message_length, &e.descriptor.function_length};
  std::size_t used = 0;
  for (int i = 0; i < 4; ++i) {
    std::memcpy(e.text + used, text[i].data(), text[i].size());
    e.text[used + text[i].size()] = 0;
    *lengths[i] = static_cast<std::uint32_t>(text[i].size());
    used += text[i].size() + 1;
  }
  e.site = site;
}
} // namespace

TEST(SiteText, SavedSiteTextIsFoundByAddressAfterATrap) {
  auto area = std::make_unique<tdiag::assertions::trap_text_area>();
  *area = {};
  save(area->entries[0], 0x1000, 7, {"a.cu", "i, n", "", "void k(int)"});
  save(area->entries[1], 0x2000, 42, {"/src/gather.cu", "j, n", "bad {}", "void gather(int*)"});
  area->claimed = 2;

  const auto s = saved_site(area.get(), 0x2000);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->file, "/src/gather.cu");
  EXPECT_EQ(s->expression, "j, n");
  EXPECT_EQ(s->message, "bad {}");
  EXPECT_EQ(s->function, "void gather(int*)");
  EXPECT_EQ(s->line, 42u);
  EXPECT_EQ(s->kind, tdiag::assertions::site_kind::index);
  EXPECT_EQ(s->operand_count, 2u);
  EXPECT_EQ(saved_site(area.get(), 0x1000)->file, "a.cu");
  EXPECT_FALSE(saved_site(area.get(), 0x3000).has_value()) << "a site nobody saved";
  EXPECT_FALSE(saved_site(nullptr, 0x2000).has_value()) << "a back-end without the area";
}
