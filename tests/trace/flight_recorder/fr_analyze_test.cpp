// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// analyze() on the synthetic scenarios of tests/data/fr (make_dumps.py) and the real dumps of
// tests/data/fr_real (PyTorch 2.11, scripts/gpu/fr-dumps.py): in each, the culprit set and causes
// are exactly truth.json's (so no innocent rank is named), and the first divergence is the one
// truth.json states.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/flight_recorder.hpp>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fr = tdiag::trace::fr;
const std::filesystem::path data_root = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data";
const std::filesystem::path data_dir = data_root / "fr";

struct truth {
  std::map<int, std::string> culprits;
  bool stuck = false;
  std::int64_t mismatch_seq = -1;
  std::string mismatch_state;
};

truth read_truth(const std::filesystem::path& folder) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.load((folder / "truth.json").string()).get(doc), simdjson::SUCCESS);
  truth t;
  t.stuck = doc["stuck"].get_bool().value();
  simdjson::dom::object culprits;
  EXPECT_EQ(doc["culprits"].get(culprits), simdjson::SUCCESS);
  for (auto [rank, cause] : culprits)
    t.culprits[std::stoi(std::string(rank))] = std::string(cause.get_string().value());
  simdjson::dom::element mm;
  if (doc["mismatch"].get(mm) == simdjson::SUCCESS) {
    t.mismatch_seq = mm["seq"].get_int64().value();
    t.mismatch_state = std::string(mm["state"].get_string().value());
  }
  return t;
}

fr::job_report analyze_path(const std::filesystem::path& folder) {
  const std::vector<std::string> inputs{folder.string()};
  return fr::analyze(fr::load_dumps(inputs));
}

fr::job_report analyze_folder(const std::string& name) {
  return analyze_path(data_dir / name);
}

// A scenario: a folder of tests/data/fr or, with "fr_real/" before it, of tests/data/fr_real.
std::filesystem::path scenario_path(const std::string& name) {
  return name.starts_with("fr_real/") ? data_root / name : data_dir / name;
}

class FrScenario : public testing::TestWithParam<std::string> {};

TEST_P(FrScenario, NamesExactlyTheTruthsCulpritsWithTheirCauses) {
  const auto t = read_truth(scenario_path(GetParam()));
  const auto r = analyze_path(scenario_path(GetParam()));
  std::map<int, std::string> named;
  for (const auto& c : r.culprits)
    named[c.rank] = std::string(fr::to_string(c.cause));
  EXPECT_EQ(named, t.culprits) << fr::to_text(r);
  EXPECT_EQ(r.stuck, t.stuck) << fr::to_text(r);
  if (t.mismatch_seq >= 0) {
    bool found = false;
    for (const auto& m : r.mismatches)
      found = found || (m.seq == t.mismatch_seq && fr::to_string(m.state) == t.mismatch_state);
    EXPECT_TRUE(found) << t.mismatch_state << " at #" << t.mismatch_seq << "\n" << fr::to_text(r);
  }
}

const std::vector<std::string> scenarios = {
    "all_matched",
    "skipped_collective",
    "size_mismatch",
    "dtype_mismatch",
    "host_stuck",
    "json_form",
    "started_not_completed",
    "not_started",
    "missing_dump",
    "empty_dump",
    "all_waiting",
    "wrapped_ring",
    "older_dump",
    "all_scheduled",
    "all_scheduled_no_status",
    "ranks_string",
    "proto2",
    "proto5",
    "group_count_disagree",
    "gloo_killed",
    "cross_group_victim",
    "version_2_0_list_ranks",
    "p2p_stuck",
    "p2p_unposted_recv",
    "two_missing",
    "one_ahead",
};

// Written by PyTorch 2.11 (gloo, four, six and eight ranks, and one NCCL rank), a planted fault
// each, or none: `collectives` runs the gather/scatter family right on every rank.
const std::vector<std::string> real_dumps = {
    "fr_real/matched",
    "fr_real/skip",
    "fr_real/skip_json",
    "fr_real/size",
    "fr_real/dtype",
    "fr_real/killed",
    "fr_real/host_stuck",
    "fr_real/gil_held",
    "fr_real/nccl_single",
    "fr_real/matched_w6",
    "fr_real/skip_w6",
    "fr_real/size_w6",
    "fr_real/dtype_w6",
    "fr_real/killed_w6",
    "fr_real/host_stuck_w6",
    "fr_real/gil_held_w6",
    "fr_real/matched_w8",
    "fr_real/skip_w8",
    "fr_real/size_w8",
    "fr_real/dtype_w8",
    "fr_real/killed_w8",
    "fr_real/host_stuck_w8",
    "fr_real/gil_held_w8",
    "fr_real/collectives",
    "fr_real/collectives_nccl",
};

std::string test_name(const testing::TestParamInfo<std::string>& scenario) {
  std::string name;
  for (char c : scenario.param.substr(scenario.param.find('/') + 1))
    if (c != '_')
      name += c;
  return name;
}

INSTANTIATE_TEST_SUITE_P(Synthetic, FrScenario, testing::ValuesIn(scenarios), test_name);
INSTANTIATE_TEST_SUITE_P(PyTorch211, FrScenario, testing::ValuesIn(real_dumps), test_name);

TEST(FrAnalyze, EveryScenarioFolderIsTested) {
  for (const auto* list : {&scenarios, &real_dumps}) {
    const bool real = list == &real_dumps;
    std::size_t folders = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(real ? data_root / "fr_real" : data_dir))
      if (e.is_directory()) {
        ++folders;
        const auto name = (real ? "fr_real/" : "") + e.path().filename().string();
        EXPECT_NE(std::find(list->begin(), list->end(), name), list->end()) << e.path();
      }
    EXPECT_EQ(folders, list->size());
  }
}

// gloo's recorder names the default group "" in pg_config while its entries say "0": the
// nameless config's ranks are the group's, so the rank that died is a member without a dump.
TEST(FrAnalyze, GlooNamelessConfigGivesTheDefaultGroupItsMembers) {
  const auto r = analyze_path(data_root / "fr_real/killed");
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].name, "0");
  EXPECT_EQ(r.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.groups[0].waiting, (std::vector<int>{1}));
}

// Without timing (gloo) every entry says `scheduled`; pg_status tells which completed, and the
// report's per-entry progress reads it as the verdict does.
TEST(FrAnalyze, EntryProgressReadsPgStatusWhereTheStateSaysScheduled) {
  const auto dumps =
      fr::load_dumps(std::vector<std::string>{(data_root / "fr_real/killed").string()});
  const auto r = fr::analyze(dumps);
  ASSERT_EQ(r.ranks.size(), 4u); // rank 3 left no dump
  EXPECT_TRUE(r.ranks[3].progress.empty());
  const auto of_seq = [&](std::size_t d, std::int64_t seq) {
    for (std::size_t i = 0; i < dumps[d].entries.size(); ++i)
      if (dumps[d].entries[i].collective_seq_id == seq) {
        EXPECT_EQ(dumps[d].entries[i].state, fr::entry_state::scheduled);
        return r.ranks[d].progress[i];
      }
    ADD_FAILURE() << "no #" << seq << " on rank " << dumps[d].rank;
    return fr::entry_progress::unknown;
  };
  for (std::size_t d = 0; d < dumps.size(); ++d) {
    ASSERT_EQ(r.ranks[d].rank, dumps[d].rank);
    ASSERT_EQ(r.ranks[d].progress.size(), dumps[d].entries.size());
  }
  EXPECT_EQ(of_seq(0, 7), fr::entry_progress::completed); // the verdict: completed on 0, 2
  EXPECT_EQ(of_seq(2, 7), fr::entry_progress::completed);
  EXPECT_NE(of_seq(1, 7), fr::entry_progress::completed); // not on 1
  EXPECT_EQ(of_seq(1, 6), fr::entry_progress::completed);
  EXPECT_EQ(fr::to_string(fr::entry_progress::pending), "not completed");
}

TEST(FrAnalyze, AllMatchedHasNoFindings) {
  const auto r = analyze_folder("all_matched");
  EXPECT_FALSE(r.findings());
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].last_seq, 8);
  EXPECT_EQ(r.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
}

TEST(FrAnalyze, HostStuckRankCarriesItsLastEntryAndStack) {
  const auto r = analyze_folder("host_stuck");
  ASSERT_EQ(r.culprits.size(), 1u);
  const auto& c = r.culprits[0];
  EXPECT_EQ(c.seq, 5);
  EXPECT_EQ(c.op, "nccl:all_reduce");
  EXPECT_EQ(c.pg, "0");
  EXPECT_EQ(c.own_seq, 4);
  EXPECT_EQ(c.own_state, "completed");
  ASSERT_EQ(c.frames.size(), 4u);
  EXPECT_EQ(c.frames[2].file, "train.py");
  EXPECT_EQ(r.groups[0].waiting, (std::vector<int>{0, 1, 3}));
}

TEST(FrAnalyze, DesyncNamesWhatEachSideIssued) {
  const auto r = analyze_folder("skipped_collective");
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].op, "nccl:all_reduce");
  EXPECT_EQ(r.culprits[0].own_op, "nccl:broadcast");
  ASSERT_TRUE(r.groups[0].first_divergence.has_value());
  const auto& m = r.mismatches[*r.groups[0].first_divergence];
  EXPECT_EQ(m.state, fr::match_state::collective_type_mismatch);
  EXPECT_EQ(m.ranks, (std::vector<int>{2}));
}

TEST(FrAnalyze, AllWaitingSaysWhatCannotBeKnown) {
  const auto r = analyze_folder("all_waiting");
  EXPECT_TRUE(r.culprits.empty());
  EXPECT_TRUE(r.stuck);
  ASSERT_FALSE(r.unknowns.empty());
  EXPECT_NE(r.unknowns[0].find("cannot tell"), std::string::npos) << r.unknowns[0];
}

TEST(FrAnalyze, WrappedRingIsNotMissingOlderCollectives) {
  const auto r = analyze_folder("wrapped_ring");
  for (const auto& m : r.mismatches)
    EXPECT_GE(m.seq, 19) << m.detail; // the older seqs only some rings hold are unknown
  for (const auto& rk : r.ranks)
    EXPECT_TRUE(rk.wrapped);
}

TEST(FrAnalyze, TwoRanksThatDisagreeAreNotJudged) {
  // Two ranks, one divergent call: no majority, so nobody is named.
  std::vector<fr::dump> dumps(2);
  for (int r = 0; r < 2; ++r) {
    auto& d = dumps[static_cast<std::size_t>(r)];
    d.rank = r;
    d.groups = {{"0", "default_pg", {0, 1}}};
    d.ops = {r == 0 ? "nccl:all_reduce" : "nccl:broadcast"};
    d.shapes = {{}};
    fr::entry e;
    e.collective_seq_id = 1;
    e.state = fr::entry_state::started;
    d.entries = {e};
  }
  const auto r = fr::analyze(dumps);
  EXPECT_TRUE(r.culprits.empty()) << fr::to_text(r);
  ASSERT_FALSE(r.mismatches.empty());
  EXPECT_EQ(r.mismatches[0].state, fr::match_state::collective_type_mismatch);
}

// One completed call per rank, with per-rank shapes.
std::vector<fr::dump> one_call(const std::string& op, std::vector<fr::tensor_shapes> shapes) {
  std::vector<fr::dump> dumps(shapes.size());
  std::vector<int> all;
  for (std::size_t r = 0; r < shapes.size(); ++r)
    all.push_back(static_cast<int>(r));
  for (std::size_t r = 0; r < shapes.size(); ++r) {
    auto& d = dumps[r];
    d.rank = static_cast<int>(r);
    d.groups = {{"0", "default_pg", all}};
    d.ops = {op};
    d.shapes = {shapes[r]};
    fr::entry e;
    e.collective_seq_id = 1;
    e.state = fr::entry_state::completed;
    d.entries = {e};
  }
  return dumps;
}

TEST(FrAnalyze, PerRankSizesThatAreLegalAreNotDivergences) {
  const fr::tensor_shapes root{{{4}, {4}, {4}}, {{4}}, {"Float", "Float", "Float"}, {"Float"}};
  const fr::tensor_shapes leaf{{}, {{4}}, {}, {"Float"}};
  auto r = fr::analyze(one_call("gloo:scatter", {root, leaf, leaf}));
  EXPECT_FALSE(r.findings()) << fr::to_text(r);
  r = fr::analyze(one_call("nccl:all_to_all_single", {{{{6}}, {{6}}, {"Float"}, {"Float"}},
                                                      {{{2}}, {{2}}, {"Float"}, {"Float"}},
                                                      {{{4}}, {{4}}, {"Float"}, {"Float"}}}));
  EXPECT_FALSE(r.findings()) << fr::to_text(r);
  // Different sizes on an all_reduce: rank 1 is the odd one out.
  r = fr::analyze(one_call("nccl:all_reduce", {{{{6}}, {{6}}, {"Float"}, {"Float"}},
                                               {{{2}}, {{2}}, {"Float"}, {"Float"}},
                                               {{{6}}, {{6}}, {"Float"}, {"Float"}}}));
  ASSERT_EQ(r.culprits.size(), 1u) << fr::to_text(r);
  EXPECT_EQ(r.culprits[0].rank, 1);
  EXPECT_EQ(r.mismatches.at(0).state, fr::match_state::size_or_syntax_mismatch);
}

// The rules hold a call against itself too: every rank issuing an all_gather whose output is not
// the group size times its input is a divergence of the whole group (it read "every collective
// matched"); the same call with the right sizes matches. Dims whose product overflows int64
// count as its limit, never as a wrapped number.
TEST(FrAnalyze, ACallEveryRankIssuedIsHeldToItsGroup) {
  const fr::tensor_shapes bad{{{4, 4}}, {{1, 0}}, {"Float"}, {"Float"}};
  auto r = fr::analyze(one_call("nccl:_all_gather_base", {bad, bad, bad, bad}));
  ASSERT_EQ(r.mismatches.size(), 1u) << fr::to_text(r);
  EXPECT_EQ(r.mismatches[0].state, fr::match_state::size_or_syntax_mismatch);
  EXPECT_EQ(r.mismatches[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.culprits.size(), 4u);
  EXPECT_NE(fr::to_text(r).find("as every rank did; it does not fit a group of 4"),
            std::string::npos)
      << fr::to_text(r);
  const fr::tensor_shapes good{{{4, 4}}, {{16, 4}}, {"Float"}, {"Float"}};
  r = fr::analyze(one_call("nccl:_all_gather_base", {good, good, good, good}));
  EXPECT_FALSE(r.findings()) << fr::to_text(r);
  // An output listed as a tensor per rank counts all of them.
  const fr::tensor_shapes listed{
      {{4, 4}}, {{4, 4}, {4, 4}, {4, 4}, {4, 4}}, {"Float"}, {"Float", "Float", "Float", "Float"}};
  r = fr::analyze(one_call("nccl:all_gather", {listed, listed, listed, listed}));
  EXPECT_FALSE(r.findings()) << fr::to_text(r);
  r = fr::analyze(one_call("nccl:all_gather", {listed, listed, listed}));
  EXPECT_EQ(r.mismatches.size(), 1u) << fr::to_text(r); // four outputs in a group of three
  const std::int64_t huge = std::int64_t{1} << 32;
  const fr::tensor_shapes wide{{{huge, huge}}, {{huge, huge}}, {"Float"}, {"Float"}};
  r = fr::analyze(one_call("nccl:_all_gather_base", {wide, wide}));
  EXPECT_EQ(r.mismatches.size(), 1u) << fr::to_text(r);
}

TEST(FrAnalyze, AStaleStateBehindACompletedCollectiveIsCompleted) {
  // Rank 1's #1 still reads `started`, yet it completed #2: a rank's collectives of one group
  // complete in order, so #1 completed too and nothing diverges.
  auto dumps = one_call("nccl:all_reduce", {{{{4}}, {{4}}, {"Float"}, {"Float"}},
                                            {{{4}}, {{4}}, {"Float"}, {"Float"}}});
  for (auto& d : dumps) {
    auto second = d.entries[0];
    second.collective_seq_id = 2;
    second.record_id = 1;
    d.entries.push_back(second);
  }
  dumps[1].entries[0].state = fr::entry_state::started;
  auto r = fr::analyze(dumps);
  EXPECT_TRUE(r.mismatches.empty()) << fr::to_text(r);
  EXPECT_FALSE(r.findings());
  // Without the later completion the same entry is a state divergence, but no rank holds #1:
  // it completed on rank 0, so rank 1's part arrived, and every member dumped. Rank 1's
  // completion was recorded late (real gloo dumps of a job that hung nowhere show this).
  for (auto& d : dumps)
    d.entries.pop_back();
  r = fr::analyze(dumps);
  ASSERT_EQ(r.mismatches.size(), 1u) << fr::to_text(r);
  EXPECT_EQ(r.mismatches[0].state, fr::match_state::collective_state_mismatch);
  EXPECT_TRUE(r.culprits.empty()) << fr::to_text(r);
  EXPECT_FALSE(r.stuck) << fr::to_text(r);
  EXPECT_NE(fr::to_text(r).find("recorded late"), std::string::npos) << fr::to_text(r);
}

TEST(FrAnalyze, WorldSizeAddsRanksWithoutADump) {
  std::vector<fr::dump> dumps(2);
  for (int r = 0; r < 2; ++r) {
    auto& d = dumps[static_cast<std::size_t>(r)];
    d.rank = r;
    d.groups = {{"1", "tp", {}}, {"0", "default_pg", {}}};
    d.ops = {"nccl:all_reduce"};
    d.shapes = {{}};
    fr::entry e;
    e.collective_seq_id = 1;
    e.state = fr::entry_state::started;
    d.entries = {e, e};
    d.entries[1].group = 1;
  }
  EXPECT_TRUE(fr::analyze(dumps).culprits.empty());
  fr::analyze_options options;
  options.world_size = 3;
  const auto r = fr::analyze(dumps, options);
  EXPECT_EQ(r.ranks.size(), 3u);
  // Without a membership list the third rank is not known to be a member of group "1"; the
  // default group spans the world, so there it is the member whose part the dumps cannot show.
  ASSERT_EQ(r.culprits.size(), 1u) << fr::to_text(r);
  EXPECT_EQ(r.culprits[0].rank, 2);
  EXPECT_EQ(r.culprits[0].pg, "0");
  EXPECT_EQ(r.culprits[0].cause, fr::cause::no_dump);
  // A size the dumps contradict (rank 1's dump in a job said to be one rank) is the user's
  // mistake or the wrong folder, said with the dump it concerns, never ignored.
  dumps[1].source = "dumps/rank_1";
  options.world_size = 1;
  try {
    (void)fr::analyze(dumps, options);
    FAIL() << "no exception";
  } catch (const tdiag::input_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-FR-014") << what;
    EXPECT_NE(what.find("dumps/rank_1: it is rank 1's dump, but --world-size 1"), std::string::npos)
        << what;
  }
}

// A job of more ranks than the memory budget holds (a mistyped --world-size, a pg_config naming
// a billion) is the budget's one line before anything is built, not an exhausted machine.
TEST(FrAnalyze, AWorldOverTheMemoryBudgetIsRefusedWithOneLine) {
  std::vector<fr::dump> dumps(1);
  dumps[0].rank = 0;
  fr::analyze_options options;
  options.world_size = 1'000'000'000;
  setenv("TDIAG_MEMORY_LIMIT", "64M", 1);
  std::string code, message;
  try {
    (void)fr::analyze(dumps, options);
  } catch (const tdiag::input_error& e) {
    code = e.report().diagnostics.at(0).code;
    message = e.what();
  }
  dumps[0].groups = {{"0", "default_pg", {0, 1 << 20, 1 << 21, 1 << 22}}};
  dumps[0].ops = {"nccl:all_reduce"};
  dumps[0].shapes = {{}};
  dumps[0].entries.resize(1);
  options.world_size = 0;
  setenv("TDIAG_MEMORY_LIMIT", "1K", 1); // two ranks at most
  std::string stated;
  try {
    (void)fr::analyze(dumps, options);
  } catch (const tdiag::input_error& e) {
    stated = e.what();
  }
  unsetenv("TDIAG_MEMORY_LIMIT");
  EXPECT_EQ(code, "TDIAG-CORE-006") << message;
  EXPECT_NE(message.find("--world-size: a job of 1000000000 ranks"), std::string::npos) << message;
  EXPECT_NE(stated.find("pg_config['0'] naming more than 2 ranks in the job"), std::string::npos)
      << stated;
  EXPECT_EQ(fr::analyze(dumps).ranks.size(), 4u); // within the budget, every member is a rank
}

} // namespace

// Every group of every scenario gets a verdict sentence: a group whose laggards' dumps are just
// older than the others' printed an empty status line (a hostile sweep's dumps).
TEST(FrAnalyze, EveryGroupOfEveryScenarioHasAVerdict) {
  std::size_t groups = 0;
  for (const auto& root : {data_dir, data_root / "fr_real"})
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (!entry.is_directory())
        continue;
      try {
        for (const auto& g : analyze_path(entry.path()).groups) {
          EXPECT_FALSE(g.verdict.empty()) << entry.path() << " group " << g.name;
          ++groups;
        }
      } catch (const tdiag::input_error&) {
        // a scenario of refused dumps
      }
    }
  EXPECT_GT(groups, 40u);
}

// One dump of a job whose four ranks completed everything: the others left none, and the
// verdict says so rather than "every member completed".
TEST(FrAnalyze, MembersWithoutADumpAreNotCountedAsCompleted) {
  const std::vector<std::string> one{(data_root / "fr_real/collectives/_dump_0").string()};
  const auto r = fr::analyze(fr::load_dumps(one));
  ASSERT_EQ(r.groups.size(), 1u);
  const auto& g = r.groups[0];
  EXPECT_EQ(g.without_dump, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g.verdict.find("every member"), std::string::npos) << g.verdict;
  EXPECT_NE(g.verdict.find("rank(s) 1-3 left no dump"), std::string::npos) << g.verdict;
  EXPECT_FALSE(g.stuck);
}
