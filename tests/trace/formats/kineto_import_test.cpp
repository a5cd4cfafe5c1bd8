// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures were computed independently with Python's json + gzip modules
// (json.load(gzip.open(f))['traceEvents'], counting by ph/cat; flows paired by (cat, id)).
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<std::byte> bytes(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}
// The whole of a gzip file, inflated through the importer's own stream.
std::string inflate_all(std::span<const std::byte> gz) {
  detail::gzip_stream stream(gz, "test");
  std::string text(std::size_t{1} << 16, '\0');
  std::size_t size = 0;
  while (const auto n = stream.read(text.data() + size, text.size() - size)) {
    size += n;
    if (size == text.size())
      text.resize(text.size() * 2);
  }
  text.resize(size);
  return text;
}

using tdiag::trace::test::as_bytes;
std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

std::int64_t error_offset(const tdiag::input_error& e) {
  const auto* f = e.report().diagnostics.front().find_field("offset");
  return f ? std::get<std::int64_t>(f->value) : -1;
}

std::int64_t kernel_ns(const trace& t) {
  std::int64_t total = 0;
  for (const auto& k : t.kernels.all())
    total += k.end - k.start;
  return total;
}

TEST(KinetoImport, LargeSharedTrace) {
  const auto path = shared("train_trace_large.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  kineto_stats stats;
  const auto r = import_kineto_file(path, {}, &stats);
  const auto& t = r.trace;
  EXPECT_EQ(stats.events, 266570u); // len(traceEvents)
  EXPECT_EQ(stats.json_bytes, 89416019u);
  EXPECT_EQ(t.kernels.size(), 15000u);        // cat == "kernel"
  EXPECT_EQ(t.copies.size(), 1760u);          // 760 gpu_memcpy + 1000 gpu_memset
  EXPECT_EQ(t.memory.size(), 38880u);         // name == "[memory]"
  EXPECT_EQ(t.flows.size(), 16760u + 10880u); // ac2g + fwdbwd pairs
  std::set<string_id> names;
  for (const auto& k : t.kernels.all())
    names.insert(k.name);
  EXPECT_EQ(names.size(), 36u);
  EXPECT_EQ(kernel_ns(t), 583820431); // sum(dur) = 583820.431 us
  EXPECT_EQ(t.metadata.time_origin_ns, 1790857026000000000);
  EXPECT_TRUE(t.finalized());
  std::size_t cpu_ops = 0, runtime = 0, driver = 0;
  for (const auto& a : t.api_calls.all()) {
    cpu_ops += a.kind == api_kind::cpu_op;
    runtime += a.kind == api_kind::runtime;
    driver += a.kind == api_kind::driver;
  }
  EXPECT_EQ(cpu_ops, 132680u);
  EXPECT_EQ(runtime, 18572u);
  EXPECT_EQ(driver, 1200u);
  std::int64_t max_allocated = 0;
  for (const auto& m : t.memory.all())
    if (m.device == 0)
      max_allocated = std::max(max_allocated, t.detail_of(m).total_allocated);
  EXPECT_EQ(max_allocated, 1221156352); // max Total Allocated over Device Type 1 events
}

TEST(KinetoImport, SmallTraceSameWithTinyWindows) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto bytes = read_bytes(path);
  kineto_stats a, b;
  const auto big = import_kineto(bytes, "small", {}, &a);
  const auto tiny = import_kineto(bytes, "small", {}, &b, 4096); // hundreds of windows
  EXPECT_EQ(a.events, 6979u);
  EXPECT_EQ(big.trace.kernels.size(), 393u);
  EXPECT_EQ(big.trace.flows.size(), 441u + 276u);
  EXPECT_EQ(b.events, a.events);
  EXPECT_TRUE(big.trace == tiny.trace);
}

TEST(KinetoImport, PlainJsonFormsAndArgsOrder) {
  // Bare-array form; args before ph; a string holding "},{" to tempt the window cutter.
  const std::string json = R"([
    {"args": {"correlation": 7, "stream": 3, "device": 1, "grid": [2, 1, 1]}, "ph": "X", "cat": "kernel",
     "name": "k},{x", "pid": 1, "tid": 3, "ts": 10.5, "dur": 2.25},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 10, "dur": 1,
     "args": {"correlation": 7, "cbid": 211}},
    {"ph": "s", "id": 7, "pid": 9, "tid": 9, "ts": 10, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 7, "pid": 1, "tid": 3, "ts": 10.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 9, "tid": 9, "ts": 11,
     "args": {"Addr": 18446744073709551000, "Bytes": -512, "Total Allocated": 0, "Total Reserved": 2097152,
              "Device Type": 1, "Device Id": 1}}
  ])";
  const auto r = import_kineto(as_bytes(json), "inline.json");
  const auto& t = r.trace;
  ASSERT_EQ(t.kernels.size(), 1u);
  const auto& k = t.kernels.all()[0];
  EXPECT_EQ(t.name(k.name), "k},{x");
  EXPECT_EQ(k.start, 10500);
  EXPECT_EQ(k.end, 12750);
  EXPECT_EQ(k.correlation, 7u);
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(k.stream, 3u);
  EXPECT_EQ(k.grid[0], 2u);
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.api_calls.all()[0].cbid, 211u);
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows.all()[0].target_lane, k.lane);
  ASSERT_EQ(t.memory.size(), 1u);
  const auto& m = t.memory.all()[0];
  EXPECT_EQ(m.action, memory_action::free_completed);
  EXPECT_EQ(m.size, 512u);
  EXPECT_EQ(m.device, 1);
  EXPECT_EQ(m.address, 18446744073709551000u);
  EXPECT_EQ(t.detail_of(m).total_reserved, 2097152);
}

TEST(KinetoImport, Sniffing) {
  EXPECT_TRUE(sniff_kineto(as_bytes("\n  {\n  \"schemaVersion\": 1, \"traceEvents\": [")));
  EXPECT_TRUE(sniff_kineto(as_bytes("[{\"ph\": \"X\"}]")));
  EXPECT_FALSE(sniff_kineto(as_bytes("{\"hello\": 1}")));
  EXPECT_FALSE(sniff_kineto(as_bytes("\x80\x04\x95")));
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    return;
  auto head = read_bytes(path);
  head.resize(4096);
  EXPECT_TRUE(sniff_kineto(head));
}

// A UTF-8 byte order mark before the JSON (Windows editors write one) is passed over; an error
// after it still names the file's byte offset.
TEST(KinetoImport, ByteOrderMarkIsPassedOver) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string json = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", )"
                           R"("pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"stream": 7}}]})";
  EXPECT_TRUE(sniff_kineto(as_bytes(bom + json)));
  const auto r = import_kineto(as_bytes(bom + json), "bom.json");
  EXPECT_EQ(r.trace.kernels.size(), 1u);
  std::string bad = bom + json;
  bad.replace(bad.find("\"dur\": 2"), 9, "\"dur\": []");
  try {
    (void)import_kineto(as_bytes(bad), "bom.json");
    ADD_FAILURE() << "a list for dur was read";
  } catch (const tdiag::input_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bom.json"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// null where a string or args are due is absent (writers that fill every key write it); any
// other type is refused with one line naming the field, not simdjson's "does not have the
// requested type" at a byte offset.
TEST(KinetoImport, FieldsOfTheWrongTypeAreNamed) {
  const auto event = [](std::string_view field) {
    return fmt::format(R"({{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, )"
                       R"("tid": 7, "ts": 1, "dur": 2, "args": {{"stream": 7}}, {}}}]}})",
                       field);
  };
  for (const auto* field : {R"("cat": null)", R"("name": null)", R"("args": null)"}) {
    SCOPED_TRACE(field);
    EXPECT_NO_THROW((void)import_kineto(as_bytes(event(field)), "null.json"));
  }
  struct refused {
    std::string json, says;
  };
  for (const auto& [json, says] :
       {refused{event(R"("name": 5)"), "traceEvents[0].name: expected a JSON string, got 5"},
        refused{event(R"("args": [1])"), "traceEvents[0].args: expected a JSON object"},
        refused{R"({"distributedInfo": [0], "traceEvents": []})",
                "distributedInfo: expected a JSON object"},
        refused{R"({"deviceProperties": "x", "traceEvents": []})",
                R"(deviceProperties: expected a JSON array, got "x")"}}) {
    SCOPED_TRACE(json);
    try {
      (void)import_kineto(as_bytes(json), "typed.json");
      ADD_FAILURE() << "read";
    } catch (const tdiag::input_error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

TEST(KinetoImport, TruncatedGzipNamesTheOffset) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  auto bytes = read_bytes(path);
  bytes.resize(bytes.size() / 2);
  try {
    (void)import_kineto(bytes, "cut.json.gz");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(e.report().diagnostics.front().code, "TDIAG-TR-120");
    EXPECT_EQ(error_offset(e), static_cast<std::int64_t>(bytes.size()));
    EXPECT_NE(std::string(e.what()).find("ends early"), std::string::npos) << e.what();
  }
}

TEST(KinetoImport, TruncatedAndCorruptedJsonNameTheOffset) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto gz = read_bytes(path);
  const auto text = inflate_all(gz);
  for (std::size_t cut : {std::size_t{100}, std::size_t{5000}, text.size() / 2, text.size() - 3}) {
    try {
      (void)import_kineto(as_bytes(std::string_view(text).substr(0, cut)), "cut.json", {}, nullptr,
                          4096);
      FAIL() << "no error at cut " << cut;
    } catch (const tdiag::input_error& e) {
      EXPECT_LE(error_offset(e), static_cast<std::int64_t>(cut)) << e.what();
      EXPECT_GE(error_offset(e), 0);
    }
  }
  std::string damaged(text);
  const auto at = damaged.find("\"ts\"", damaged.size() / 2);
  damaged.replace(at, 4, "\"ts'"); // an unterminated key
  try {
    (void)import_kineto(as_bytes(damaged), "damaged.json");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_NEAR(static_cast<double>(error_offset(e)), static_cast<double>(at), 4096.0) << e.what();
  }
}

} // namespace
