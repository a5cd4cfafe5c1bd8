// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

std::string code_of(const tdiag::error& e) {
  return e.report().diagnostics.at(0).code;
}

TEST(LoadTrace, DispatchesTdtraceByContentNotName) {
  const auto path = test::temp_path("looks_like.json"); // the name must not matter
  const trace t = make_synthetic_trace({.kernels = 100});
  write_tdtrace(path, t);
  const load_result r = load_trace(path);
  EXPECT_EQ(r.trace.metadata.format, "tdtrace");
  EXPECT_EQ(r.trace.event_count(), t.event_count());
  EXPECT_TRUE(r.trace.finalized());
}

// A capture writes launches and kernels but no flows; loading derives one flow per correlated
// kernel or copy, as the synthetic trace does when asked.
TEST(LoadTrace, CapturedTraceGetsLaunchFlowsFromCorrelationIds) {
  const auto path = test::temp_path("captured.tdtrace");
  const trace with = make_synthetic_trace({.kernels = 50});
  const trace without = make_synthetic_trace({.kernels = 50, .with_flows = false});
  ASSERT_EQ(without.flows.size(), 0u);
  write_tdtrace(path, without);
  const load_result r = load_trace(path);
  EXPECT_EQ(r.trace.flows.size(), with.flows.size());
  EXPECT_EQ(r.trace.flows.size(), with.kernels.size() + with.copies.size());
}

// A real capture: `tdiag capture --stacks -- python3 samples/capture_demo/torch_step.py 20` on
// an H200 (2026-12-02). Its counts as `tdiag capture` printed them there.
TEST(LoadTrace, OpensAPyTorchRunCapturedOnAnH200) {
  const auto path = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests" / "data" / "trace" /
                    "h200_torch_step.tdtrace";
  const load_result r = load_trace(path);
  EXPECT_EQ(r.trace.metadata.format, "tdtrace");
  EXPECT_EQ(r.trace.kernels.size(), 510u);
  EXPECT_EQ(r.trace.copies.size(), 25u);
  EXPECT_EQ(r.trace.api_calls.size(), 8965u);
  EXPECT_EQ(r.trace.memory.size(), 816u);
  EXPECT_EQ(r.trace.flows.size(), 535u); // every kernel and copy back to its launching call
}

TEST(LoadTrace, UnknownAndMissingFilesGiveCodedErrors) {
  const auto path = test::temp_path("garbage.bin");
  const char junk[] = "\x01\x02\x03 not a trace";
  test::write_file(path, junk, sizeof junk);
  try {
    (void)load_trace(path);
    FAIL();
  } catch (const input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-002");
  }
  // A pickle of a protocol no snapshot uses is said as what it is.
  const auto future = test::temp_path("protocol6.pickle");
  test::write_file(future, "\x80\x06}.", 4);
  try {
    (void)load_trace(future);
    FAIL();
  } catch (const input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-002");
    EXPECT_NE(std::string(e.what()).find("a pickle of protocol 6, where PyTorch's snapshots are "
                                         "protocol 2 to 5"),
              std::string::npos)
        << e.what();
  }
  // Protocols 0 and 1 have no PROTO opcode: they are known by how pickle.dump starts a dict.
  using namespace std::string_view_literals;
  const std::pair<std::string_view, const char*> text_pickles[] = {
      {"(dp0\nVsegments\np1\n(lp2\nsS'device_traces'\np3\n(lp4\ns."sv, "protocol 0"},
      {"}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02u."sv, "protocol 1"}};
  for (const auto& [bytes, protocol] : text_pickles) {
    const auto old = test::temp_path("old_protocol.pickle");
    test::write_file(old, bytes.data(), bytes.size());
    try {
      (void)load_trace(old);
      FAIL() << protocol;
    } catch (const input_error& e) {
      EXPECT_EQ(code_of(e), "TDIAG-TR-002");
      EXPECT_NE(std::string(e.what()).find(fmt::format("it begins as a pickle of {} does (no "
                                                       "PROTO opcode), where PyTorch's snapshots "
                                                       "are protocol 2 to 5",
                                                       protocol)),
                std::string::npos)
          << e.what();
    }
  }
  try {
    (void)load_trace("/no/such/trace.tdtrace");
    FAIL();
  } catch (const input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-CORE-004"); // the one file reader's code
  }
}

TEST(LoadTrace, RegisteredImportersAreTriedAfterBuiltIns) {
  importer custom;
  custom.name = "test-format";
  custom.sniff = [](std::span<const std::byte> head) {
    return head.size() >= 9 && std::memcmp(head.data(), "TESTTRACE", 9) == 0;
  };
  custom.load = [](const std::filesystem::path&, const load_options&) {
    load_result r;
    r.trace.metadata.format = "test-format";
    return r;
  };
  register_importer(custom);
  const auto names = importers();
  for (const char* builtin : {"tdtrace", "torch-snapshot", "kineto-json"}) {
    EXPECT_TRUE(std::any_of(names.begin(), names.end(),
                            [&](const importer& i) { return i.name == builtin; }))
        << builtin << " is not a built-in importer";
  }
  EXPECT_EQ(names.back().name, "test-format");
  const auto path = test::temp_path("custom.any");
  test::write_file(path, "TESTTRACE", 9);
  EXPECT_EQ(load_trace(path).trace.metadata.format, "test-format");
}

} // namespace
} // namespace tdiag::trace
