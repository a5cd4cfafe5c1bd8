// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Flight Recorder view's rows (fr_rings.cpp) on the synthetic scenarios of tests/data/fr:
// one row per rank, rings in sequence order, culprits and first divergences marked where the
// verdict puts them, ranks without a dump shown as such.
#include <tensordiag/viewer/fr_rings.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fr = tdiag::trace::fr;
using namespace tdiag::view;

struct scenario {
  std::vector<fr::dump> dumps;
  fr::job_report report;
  fr_rings rings;
};

scenario open(const std::string& name, int world_size = 0) {
  const auto dir = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/fr" / name;
  scenario s;
  s.dumps = fr::load_dumps(std::vector<std::string>{dir.string()});
  fr::analyze_options options;
  options.world_size = world_size;
  s.report = fr::analyze(s.dumps, options);
  s.rings = build_fr_rings(s.dumps, s.report);
  return s;
}

const fr_row& row_of(const fr_rings& r, int rank) {
  const auto it = std::find_if(r.rows.begin(), r.rows.end(),
                               [&](const fr_row& row) { return row.rank == rank; });
  EXPECT_NE(it, r.rows.end()) << "no row for rank " << rank;
  return *it;
}

TEST(FrRings, OneRowPerRankWithItsRingInSequenceOrder) {
  const auto s = open("all_matched");
  ASSERT_EQ(s.rings.rows.size(), s.report.ranks.size());
  for (const auto& row : s.rings.rows) {
    EXPECT_EQ(row.status, fr_row_status::ok);
    ASSERT_FALSE(row.cells.empty());
    EXPECT_TRUE(std::is_sorted(row.cells.begin(), row.cells.end(),
                               [](const auto& a, const auto& b) { return a.column < b.column; }));
    for (const auto& c : row.cells) {
      EXPECT_FALSE(c.culprit);
      EXPECT_FALSE(c.divergence);
      EXPECT_LT(c.column, s.rings.columns);
    }
  }
  EXPECT_FALSE(s.rings.findings);
  ASSERT_EQ(s.rings.ops.size(), 1u); // named once however many cells
  EXPECT_EQ(op_of(s.rings, s.rings.rows[0].cells[0]), "nccl:all_reduce");
  EXPECT_EQ(group_of(s.rings, s.rings.rows[0].cells[0]), "0");
  EXPECT_EQ(s.rings.verdicts.size(), s.report.groups.size());
}

TEST(FrRings, TheDesyncRanksEntryIsTheCulpritAndTheDivergenceIsMarkedOnEveryRank) {
  const auto s = open("dtype_mismatch");
  ASSERT_EQ(s.report.culprits.size(), 1u);
  const auto& culprit = row_of(s.rings, 3);
  ASSERT_EQ(culprit.culprits.size(), 1u);
  EXPECT_NE(culprit.label.find("culprit: desync"), std::string::npos) << culprit.label;
  const auto marked = std::count_if(culprit.cells.begin(), culprit.cells.end(),
                                    [](const fr_cell& c) { return c.culprit.has_value(); });
  EXPECT_EQ(marked, 1);
  for (const auto& row : s.rings.rows) {
    const auto it = std::find_if(row.cells.begin(), row.cells.end(),
                                 [](const fr_cell& c) { return c.divergence.has_value(); });
    ASSERT_NE(it, row.cells.end()) << "rank " << row.rank;
    EXPECT_EQ(it->seq, 5);
    EXPECT_EQ(s.report.mismatches[*it->divergence].seq, 5);
  }
  EXPECT_FALSE(culprit.divergent_in.empty());
  EXPECT_TRUE(s.rings.findings);
}

TEST(FrRings, ARankWithoutADumpIsARowWithoutCells) {
  const auto s = open("missing_dump", 4);
  const auto& row = row_of(s.rings, 3);
  EXPECT_EQ(row.status, fr_row_status::no_dump);
  EXPECT_TRUE(row.cells.empty());
  EXPECT_NE(row.label.find("no dump"), std::string::npos) << row.label;
  EXPECT_NE(row.label.find("culprit: no_dump"), std::string::npos) << row.label;
}

TEST(FrRings, AnEmptyDumpFileIsShownAsSuch) {
  const auto s = open("empty_dump");
  EXPECT_EQ(row_of(s.rings, 2).status, fr_row_status::empty_file);
  EXPECT_EQ(to_string(fr_row_status::empty_file), "empty dump file");
}

TEST(FrRings, ARankThatNeverIssuedTheDivergentCollectiveIsMarkedMissing) {
  const auto s = open("host_stuck");
  const auto& row = row_of(s.rings, 2);
  ASSERT_FALSE(row.missing.empty());
  EXPECT_EQ(row.missing.front().seq, 5);
  EXPECT_TRUE(row_of(s.rings, 0).missing.empty()); // it issued #5
}

TEST(FrRings, AnUnpostedRecvMarksTheSendersCallAndThePeersMissingSide) {
  const auto s = open("p2p_unposted_recv");
  for (const auto& row : s.rings.rows) {
    const auto marked = std::count_if(row.cells.begin(), row.cells.end(),
                                      [](const fr_cell& c) { return c.divergence.has_value(); });
    EXPECT_EQ(marked, row.rank == 2 ? 1 : 0) << "rank " << row.rank; // the send 2->3 only
  }
  const auto& peer = row_of(s.rings, 3);
  ASSERT_EQ(peer.missing.size(), 1u);
  EXPECT_EQ(peer.missing.front().seq, 1);
  EXPECT_EQ(peer.culprits.size(), 1u);
}

// gloo without timing: every entry says scheduled, pg_status says how far each rank got; the
// cells show what the analysis reads (rank_report::progress), rank 1's #7 not completed.
TEST(FrRings, CellsShowTheProgressTheAnalysisReads) {
  const auto dir = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/fr_real/killed";
  const auto dumps = fr::load_dumps(std::vector<std::string>{dir.string()});
  const auto rings = build_fr_rings(dumps, fr::analyze(dumps));
  for (const int rank : {0, 1, 2}) {
    const auto& row = row_of(rings, rank);
    ASSERT_FALSE(row.cells.empty());
    const auto& last = row.cells.back();
    EXPECT_EQ(last.state, fr::entry_state::scheduled);
    EXPECT_EQ(last.seq, 7);
    EXPECT_EQ(last.progress == fr::entry_progress::completed, rank != 1) << "rank " << rank;
    EXPECT_EQ(row.cells.front().progress, fr::entry_progress::completed);
  }
}

TEST(FrRings, WrappedRingsLineUpByRecordId) {
  const auto s = open("wrapped_ring");
  bool any_wrapped = false;
  std::int64_t lowest = -1;
  for (const auto& row : s.rings.rows) {
    any_wrapped |= row.wrapped;
    for (const auto& c : row.cells)
      lowest = lowest < 0 ? c.record_id : std::min(lowest, c.record_id);
  }
  EXPECT_TRUE(any_wrapped);
  for (const auto& row : s.rings.rows) {
    for (const auto& c : row.cells) {
      EXPECT_EQ(c.column, c.record_id - lowest);
    }
  }
}

} // namespace
