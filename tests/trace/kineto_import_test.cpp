// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures were computed independently with Python's json + gzip modules
// (json.load(gzip.open(f))['traceEvents'], counting by ph/cat; flows paired by (cat, id)).
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

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

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
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
      max_allocated = std::max(max_allocated, m.total_allocated);
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
  EXPECT_EQ(m.total_reserved, 2097152);
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

// "Bytes": INT64_MIN is a free of 2^63 bytes: negated as unsigned, never a signed overflow (the
// UBSan build runs this too); a size above INT64_MAX saturates instead of turning into a free.
TEST(KinetoImport, ExtremeMemoryBytesDoNotOverflow) {
  const std::string json = R"({"traceEvents": [
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 1, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 64, "Bytes": -9223372036854775808}},
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 2, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 128, "Bytes": 18446744073709551615}}]})";
  const auto r = import_kineto(as_bytes(json), "bytes.json");
  ASSERT_EQ(r.trace.memory.size(), 2u);
  const auto& free = r.trace.memory.all()[0];
  EXPECT_EQ(free.action, memory_action::free_completed);
  EXPECT_EQ(free.size, std::uint64_t{1} << 63);
  const auto& alloc = r.trace.memory.all()[1];
  EXPECT_EQ(alloc.action, memory_action::alloc);
  EXPECT_EQ(alloc.size, std::uint64_t{INT64_MAX});
}

// A thread_name names the host thread and the GPU stream with its (pid, tid), and only those;
// the last name given wins.
TEST(KinetoImport, ThreadNamesNameTheirLanes) {
  std::string json = R"({"traceEvents": [)";
  for (int tid = 0; tid < 50; ++tid) {
    json += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": {0},)"
                        R"( "ts": {0}, "dur": 1}},)",
                        tid);
    json += fmt::format(R"({{"ph": "M", "name": "thread_name", "pid": 1, "tid": {0},)"
                        R"( "args": {{"name": "worker {0}"}}}},)",
                        tid);
  }
  json += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "old"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    {"ph": "M", "name": "thread_name", "pid": 5, "tid": 5, "args": {"name": "no such lane"}}]})";
  const auto r = import_kineto(as_bytes(json), "names.json");
  const auto& lanes = r.trace.lanes;
  for (std::uint64_t tid = 0; tid < 50; ++tid) {
    const auto l = lanes.find_host(1, tid);
    ASSERT_NE(l, no_lane) << tid;
    EXPECT_EQ(r.trace.name(lanes.at(l).name), fmt::format("worker {}", tid));
  }
  const auto gpu = lanes.find_gpu(0, 7);
  ASSERT_NE(gpu, no_lane);
  EXPECT_EQ(r.trace.name(lanes.at(gpu).name), "stream 7");
  EXPECT_EQ(lanes.find_host(5, 5), no_lane);
}

// Many small events (a 62 MB gzip can inflate to 20 GiB of them): the model itself is held to
// the memory budget as it grows, one line naming the file instead of bad_alloc.
TEST(KinetoImport, ModelGrowsWithinTheMemoryBudget) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < 70000; ++i)
    json += fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":{},"dur":1}},)", i);
  json.back() = ']';
  json += "}";
  setenv("TDIAG_MEMORY_LIMIT", "2M", 1);
  try {
    (void)import_kineto(as_bytes(json), "many.json");
    ADD_FAILURE() << "70000 events within a 2 MiB budget";
  } catch (const tdiag::input_error& e) {
    const auto& d = e.report().diagnostics.front();
    EXPECT_EQ(d.code, "TDIAG-CORE-006");
    EXPECT_NE(d.message.find("many.json: the model of its first 65536 events needs"),
              std::string::npos)
        << d.message;
  }
  unsetenv("TDIAG_MEMORY_LIMIT");
  EXPECT_EQ(import_kineto(as_bytes(json), "many.json").trace.api_calls.size(), 70000u);
}

} // namespace
