// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The code registries of all libraries (header-only, so this test needs no other library):
// codes are unique across libraries, carry their library's one prefix, aliases point at current
// codes, docs/error-codes.md is exactly the registries' listing, and the sources and docs use
// only registered codes. TDIAG_UPDATE_DOCS=1 rewrites docs/error-codes.md from the registries.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/capture/codes.hpp>
#include <tensordiag/core/codes.hpp>
#include <tensordiag/dtensor_checks/codes.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/fr_codes.hpp>
#include <tensordiag/viewer/codes.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct registry {
  std::string_view library;
  std::string_view prefix;
  std::span<const tdiag::code_entry> table;
};

const std::vector<registry>& registries() {
  static const std::vector<registry> all = {
      {"core", "CORE", tdiag::codes::table},
      {"assertions", "DSA", tdiag::assertions::codes::table},
      {"dtensor_checks", "DT", tdiag::dtensor::codes::table},
      {"trace", "TR", tdiag::trace::codes::table},
      {"capture", "CAPTURE", tdiag::capture::codes::table},
      {"viewer", "VIEW", tdiag::view::codes::table},
      {"trace_fr", "FR", tdiag::trace::fr::codes::table},
  };
  return all;
}

const std::filesystem::path source_dir = TDIAG_SOURCE_DIR;
const std::filesystem::path docs_page = source_dir / "docs" / "error-codes.md";
constexpr std::string_view marker = "<!-- Generated from the codes.hpp registries; the test "
                                    "tensordiag.test.core.codes checks it. -->\n";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The listing docs/error-codes.md carries after its marker line.
std::string listing() {
  std::string out;
  for (const auto& r : registries()) {
    out += "\n## " + std::string(r.library) + ": `TDIAG-" + std::string(r.prefix) + "-NNN`\n\n";
    out += "| Code | Title | Replaced by |\n|---|---|---|\n";
    for (const auto& e : r.table) {
      out += "| `" + std::string(e.code) + "` | " + std::string(e.title) + " | ";
      out += e.alias_of.empty() ? std::string() : "`" + std::string(e.alias_of) + "`";
      out += " |\n";
    }
  }
  return out;
}

std::set<std::string> current_codes() {
  std::set<std::string> out;
  for (const auto& r : registries())
    for (const auto& e : r.table)
      if (e.alias_of.empty())
        out.insert(std::string(e.code));
  return out;
}

} // namespace

TEST(Codes, AreUniqueAndCarryTheirLibrarysOnePrefix) {
  std::map<std::string, std::string_view> seen;
  for (const auto& r : registries()) {
    std::set<std::string_view> current;
    for (const auto& e : r.table)
      if (e.alias_of.empty())
        current.insert(e.code);
    const std::regex own("TDIAG-" + std::string(r.prefix) + "-[0-9]{3}");
    for (const auto& e : r.table) {
      const std::string code(e.code);
      EXPECT_TRUE(seen.emplace(code, r.library).second)
          << code << " is in " << r.library << " and " << seen[code];
      EXPECT_FALSE(e.title.empty()) << code;
      if (e.alias_of.empty()) {
        EXPECT_TRUE(std::regex_match(code, own)) << code << " in " << r.library;
      } else {
        EXPECT_TRUE(current.contains(e.alias_of))
            << code << " is an alias of " << e.alias_of << ", not a current code of " << r.library;
      }
    }
  }
}

TEST(Codes, AliasesResolveToTheirReplacement) {
  EXPECT_EQ(tdiag::canonical_code(tdiag::trace::codes::table, "TDIAG-TRACE-113"),
            tdiag::trace::codes::undecodable_chunk);
  EXPECT_EQ(tdiag::canonical_code(tdiag::trace::codes::table, "TDIAG-TR-113"), "TDIAG-TR-113");
  EXPECT_EQ(tdiag::canonical_code(tdiag::codes::table, "TDIAG-BE-001"),
            tdiag::codes::unknown_backend);
  static_assert(tdiag::canonical_code(tdiag::assertions::codes::table, "TDIAG-BE-010") ==
                tdiag::assertions::codes::cuda_call_failed);
}

TEST(Codes, TheDocsPageListsEveryCode) {
  const std::string page = read(docs_page);
  const auto at = page.find(marker);
  const std::string expected = listing();
  if (std::getenv("TDIAG_UPDATE_DOCS") != nullptr) {
    std::ofstream(docs_page, std::ios::binary)
        << (at == std::string::npos ? page + "\n" + std::string(marker)
                                    : page.substr(0, at + marker.size()))
        << expected;
    GTEST_SKIP() << "rewrote " << docs_page;
  }
  ASSERT_NE(at, std::string::npos) << docs_page << " lacks its marker line";
  EXPECT_EQ(page.substr(at + marker.size()), expected)
      << "run TDIAG_UPDATE_DOCS=1 tensordiag.test.core.codes to regenerate " << docs_page;
}

// Every TDIAG-XXX-NNN written in the libraries' sources and in the docs (outside the listing)
// is a current code: a retired one would be written again by new code.
TEST(Codes, SourcesAndDocsUseOnlyCurrentCodes) {
  const auto current = current_codes();
  const std::regex code("TDIAG-[A-Z]+-[0-9]{3}");
  std::size_t files = 0;
  const auto scan = [&](const std::filesystem::path& path) {
    ++files;
    const std::string text = read(path);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), code);
         it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(current.contains(it->str()))
          << path << ": " << it->str() << " is not a current code (codes.hpp)";
  };
  for (const char* dir : {"core", "assertions", "dtensor_checks", "trace", "capture", "viewer",
                          "cli", "docs", "samples"}) {
    if (!std::filesystem::exists(source_dir / dir))
      continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir / dir)) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && entry.path() != docs_page &&
          (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h" ||
           ext == ".md") &&
          entry.path().filename() != "codes.hpp")
        scan(entry.path());
    }
  }
  EXPECT_GT(files, 100u) << "the scan found the sources";
}
