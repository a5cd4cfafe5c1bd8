// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Inputs built to exhaust memory, block, overflow or garble messages: each must load, or be
// refused with one line naming the file, within the memory budget.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/pickle_reader.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <zlib.h>

#include "formats/src/tdtrace/tdtrace_format.hpp"

namespace tdiag::trace {
namespace {

namespace fs = std::filesystem;

class HostileInput : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tdiag_hostile_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    setenv("TDIAG_MEMORY_LIMIT", "64M", 1);
  }
  void TearDown() override {
    unsetenv("TDIAG_MEMORY_LIMIT");
    fs::remove_all(dir_);
  }
  fs::path write(const std::string& name, const std::string& bytes) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // The one-line refusal `load` ends in; nullopt, and a failure, when it loads.
  template <typename Load> static std::optional<input_error> refusal(Load&& load) {
    try {
      load();
    } catch (const input_error& e) {
      return e;
    }
    ADD_FAILURE() << "no exception";
    return std::nullopt;
  }
  // The refusal's line when `load` is refused with `code`, naming `file`, in one line; checked
  // here, "" (and a failure) when it loads.
  template <typename Load>
  static std::string refused_with(Load&& load, std::string_view code, const fs::path& file) {
    const auto e = refusal(std::forward<Load>(load));
    if (!e)
      return {};
    std::string what = e->what();
    EXPECT_EQ(e->report().diagnostics.at(0).code, code) << what;
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  // A seed of the snapshot importer's fuzz target.
  static fs::path seed(const char* name) {
    return fs::path(TDIAG_SOURCE_DIR) / "tests/trace/fuzz/corpus/snapshot_import" / name;
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static std::string varint(std::uint64_t v) {
    std::string out;
    for (; v >= 0x80; v >>= 7)
      out.push_back(static_cast<char>(v | 0x80));
    out.push_back(static_cast<char>(v));
    return out;
  }
  // A chunk whose kernel section declares `count` records in one column of zero bytes: a few
  // hundred compressed bytes that would decode to count * sizeof(kernel_event).
  static std::string bomb_chunk(std::uint32_t count) {
    std::string body = varint(count) + varint(1) + varint(count) + std::string(count, '\0');
    std::string payload =
        std::string(1, static_cast<char>(detail::section_events)) + varint(body.size()) + body;
    std::string compressed(ZSTD_compressBound(payload.size()), '\0');
    compressed.resize(
        ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), 3));
    detail::chunk_header h;
    h.sequence = 7;
    h.compressed_size = static_cast<std::uint32_t>(compressed.size());
    h.uncompressed_size = static_cast<std::uint32_t>(payload.size());
    h.event_count = count;
    h.payload_crc = detail::crc32_of(std::as_bytes(std::span(compressed)));
    return detail::encode_chunk_header(h) + compressed;
  }
  fs::path dir_;
};

TEST_F(HostileInput, ChunkDeclaringMoreRecordsThanTheBudgetIsSkipped) {
  const trace t = make_synthetic_trace();
  const auto good = dir_ / "good.tdtrace";
  write_tdtrace(good, t);
  const auto bomb = bomb_chunk(8u << 20);
  ASSERT_LT(bomb.size(), 4096u);
  const auto path = write("bomb.tdtrace", slurp(good) + bomb);
  const auto loaded = read_tdtrace(path);
  EXPECT_EQ(loaded.loaded.trace.event_count(), t.event_count());
  bool skipped = false;
  for (const auto& w : loaded.loaded.warnings)
    skipped |= w.code == "TDIAG-TR-313" &&
               w.message.find("records declared") != std::string::npos &&
               w.message.find(path.string()) != std::string::npos;
  EXPECT_TRUE(skipped);
  EXPECT_EQ(loaded.info.chunks_corrupted, 2u); // the old footer's bytes and the bomb
  if (const char* seeds = std::getenv("TDIAG_WRITE_SEEDS"))
    std::ofstream(fs::path(seeds) / "declared_count_bomb.tdtrace", std::ios::binary) << slurp(path);
}

// 32 MiB of zeros compress to about a kilobyte: a lane table declaring 8M lanes in them was
// resident gigabytes (260M in 250 MiB) or std::bad_alloc. The payload's inflation is capped
// before anything is allocated; the chunk is skipped, the rest of the file loads.
TEST_F(HostileInput, PayloadInflatingPastTheCapIsSkipped) {
  const trace t = make_synthetic_trace();
  const auto good = dir_ / "good.tdtrace";
  write_tdtrace(good, t);
  std::string body = varint(8u << 20);
  body.resize(std::size_t{32} << 20, '\0');
  const std::string payload =
      std::string(1, static_cast<char>(detail::section_lanes)) + varint(body.size()) + body;
  std::string compressed(ZSTD_compressBound(payload.size()), '\0');
  compressed.resize(
      ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), 3));
  ASSERT_LT(compressed.size(), 8192u);
  detail::chunk_header h;
  h.sequence = 9;
  h.compressed_size = static_cast<std::uint32_t>(compressed.size());
  h.uncompressed_size = static_cast<std::uint32_t>(payload.size());
  h.event_count = 0;
  h.payload_crc = detail::crc32_of(std::as_bytes(std::span(compressed)));
  const auto path =
      write("inflate.tdtrace", slurp(good) + detail::encode_chunk_header(h) + compressed);
  const auto loaded = read_tdtrace(path);
  EXPECT_EQ(loaded.loaded.trace.event_count(), t.event_count());
  bool skipped = false;
  for (const auto& w : loaded.loaded.warnings)
    skipped |= w.code == "TDIAG-TR-313" && w.message.find("would inflate") != std::string::npos;
  EXPECT_TRUE(skipped);
  if (const char* seeds = std::getenv("TDIAG_WRITE_SEEDS"))
    std::ofstream(fs::path(seeds) / "inflate_bomb_lanes.tdtrace", std::ios::binary) << slurp(path);
}

TEST_F(HostileInput, BadHeaderSizeIsNotCalledAVersion) {
  auto bytes = slurp([&] {
    auto p = dir_ / "t.tdtrace";
    write_tdtrace(p, make_synthetic_trace());
    return p;
  }());
  bytes[12] = '\x01'; // header size 1 (the CRC is over the first 28 bytes: fix it)
  bytes[13] = bytes[14] = bytes[15] = '\0';
  const auto crc = detail::crc32_of(std::as_bytes(std::span(bytes.data(), 28)));
  for (int i = 0; i < 4; ++i)
    bytes[28 + i] = static_cast<char>(crc >> (8 * i));
  const auto path = write("header.tdtrace", bytes);
  const auto e = refusal([&] { (void)read_tdtrace(path); });
  ASSERT_TRUE(e);
  const std::string what = e->what();
  EXPECT_EQ(what.find("version"), std::string::npos) << what;
  EXPECT_NE(what.find("declares 1 bytes"), std::string::npos) << what;
}

TEST_F(HostileInput, EventTimesNearTheInt64LimitsAreClamped) {
  trace t = make_synthetic_trace();
  auto kernels = t.kernels.all();
  ASSERT_FALSE(kernels.empty());
  trace odd;
  odd.metadata = t.metadata;
  odd.lanes = t.lanes;
  odd.strings = t.strings;
  kernel_event k = kernels.front();
  k.start = std::numeric_limits<std::int64_t>::min();
  k.end = std::numeric_limits<std::int64_t>::max();
  odd.kernels.push_back(k);
  odd.finalize();
  const auto path = dir_ / "times.tdtrace";
  write_tdtrace(path, odd);
  const auto back = read_tdtrace(path).loaded.trace;
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels.all().front().start, -(std::int64_t{1} << 60));
  EXPECT_EQ(back.kernels.all().front().end, std::int64_t{1} << 60);
  (void)summary_report(back, summarize(back)); // UBSan: no overflow in spans and sums
}

TEST_F(HostileInput, ProcessSubstitutionAndFifosLoadOnce) {
  const auto p = dir_ / "t.tdtrace";
  write_tdtrace(p, make_synthetic_trace());
  const std::string bytes = slurp(p);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    for (std::size_t done = 0; done < bytes.size();)
      done += static_cast<std::size_t>(::write(fds[1], bytes.data() + done, bytes.size() - done));
    _exit(0);
  }
  close(fds[1]);
  const auto loaded = load_trace(fs::path("/proc/self/fd") / std::to_string(fds[0]));
  close(fds[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(loaded.trace.event_count(), make_synthetic_trace().event_count());
}

TEST_F(HostileInput, MultiMemberGzipIsReadAndTrailingGarbageRefused) {
  const std::string json =
      R"({"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":2,"pid":0,"tid":0}]})";
  const auto gzip = [](std::string_view text) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(text.size() + 128, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  };
  // `cat a.gz b.gz`: the first member holds only the opening brace.
  const auto two = write("two.json.gz", gzip(json.substr(0, 1)) + gzip(json.substr(1)));
  EXPECT_EQ(load_trace(two).trace.kernels.size() + load_trace(two).trace.api_calls.size(), 1u);
  const auto trailing = write("trailing.json.gz", gzip(json) + "garbage");
  const auto e = refusal([&] { (void)load_trace(trailing); });
  ASSERT_TRUE(e) << "trailing garbage accepted";
  EXPECT_NE(std::string(e->what()).find("7 bytes of trailing data"), std::string::npos)
      << e->what();
}

// 4 GiB of white space in a 4 MiB gzip was inflated to its end (12 s): past 64 MiB inflated, a
// stream over 200x its compressed bytes read is refused with one line (real traces: 10-30x).
TEST_F(HostileInput, GzipInflatingPastTheRatioLimitIsRefusedEarly) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  std::string out;
  const auto feed = [&](std::string_view text, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    do {
      char buf[1 << 16];
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  };
  feed(R"({"traceEvents": [)", Z_NO_FLUSH);
  const std::string spaces(std::size_t{1} << 20, ' ');
  for (int i = 0; i < 96; ++i) // 96 MiB of white space in about 100 KiB
    feed(spaces, Z_NO_FLUSH);
  feed("]}", Z_FINISH);
  deflateEnd(&z);
  const auto bomb = write("bomb.json.gz", out);
  const auto e = refusal([&] { (void)load_trace(bomb); });
  ASSERT_TRUE(e) << "gzip bomb accepted";
  const auto& d = e->report().diagnostics.front();
  EXPECT_EQ(d.code, "TDIAG-TR-130") << d.message;
  EXPECT_NE(d.message.find("bomb.json.gz: the first "), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("(over 200x, where real traces compress 10-30x)"), std::string::npos)
      << d.message;
  // Stopped near the 64 MiB floor, not at the end of the 96 MiB.
  const auto inflated = d.message.substr(d.message.find("inflate to ") + 11);
  EXPECT_LT(std::stod(inflated), 100.0) << d.message;
  EXPECT_NE(inflated.find("MiB"), std::string::npos) << d.message;
}

TEST_F(HostileInput, MemoReuseInASnapshotIsRefusedWithOneLine) {
  // device_traces = [[event] * 20000] * 20000 through the memo: 400M entries in 80 KB (the
  // fuzz seed, written by pickle.dumps).
  const auto path = seed("memo_reuse_device_traces.pickle");
  const auto what = refused_with([&] { (void)load_trace(path); }, "TDIAG-CORE-006", path);
  EXPECT_NE(what.find("device_traces listing 400000000 entries"), std::string::npos) << what;
}

TEST_F(HostileInput, SnapshotMessagesSayWhatWasFound) {
  const auto what = [](const fs::path& p) -> std::string {
    const auto e = refusal([&] { (void)load_trace(p); });
    return e ? e->what() : "no exception";
  };
  EXPECT_NE(what(seed("missing_address.pickle")).find("'address' (expected an int) is missing"),
            std::string::npos);
  EXPECT_NE(what(seed("big_int_address.pickle"))
                .find("'address' (expected an int) is an int wider than 64 bits"),
            std::string::npos);
  EXPECT_NE(
      what(seed("memo_reuse_segments.pickle")).find("20000 segments listing 400000000 blocks"),
      std::string::npos);
}

// A device's entries keep the file's order, which is the allocator's: an entry whose time_us runs
// back takes the time of the entry before it (sorted by time, an allocation went before its
// segment's creation, the segment was lost: "peak reserved 0 B"), and times pushed to the end
// of the axis are said, in one warning (TDIAG-TR-118); so is data after the pickle.
TEST_F(HostileInput, SnapshotTimesKeepTheFileOrder) {
  const auto back = load_trace(seed("time_us_backwards.pickle"));
  const auto rows = back.trace.memory.all();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].action, memory_action::segment_alloc);
  EXPECT_EQ(rows[1].time, rows[0].time);
  const auto s = summarize(back.trace);
  ASSERT_EQ(s.memory.size(), 1u);
  EXPECT_EQ(s.memory[0].peak_reserved, 2 << 20);
  EXPECT_EQ(s.memory[0].final_reserved, 2 << 20);
  EXPECT_EQ(s.memory[0].final_allocated, 3 << 18);
  ASSERT_EQ(back.warnings.size(), 1u);
  EXPECT_EQ(back.warnings[0].code, "TDIAG-TR-118");
  EXPECT_NE(back.warnings[0].message.find("1 trace entry with a 'time_us' before"),
            std::string::npos)
      << back.warnings[0].message;

  // A second pickle after the first one's STOP is not read, and said (TDIAG-TR-119).
  const auto two = load_trace(seed("two_pickles_concatenated.pickle"));
  EXPECT_EQ(two.trace.memory.size(), 1u);
  ASSERT_EQ(two.warnings.size(), 1u);
  EXPECT_EQ(two.warnings[0].code, "TDIAG-TR-119");
  EXPECT_NE(two.warnings[0].message.find("bytes after the pickle's end"), std::string::npos)
      << two.warnings[0].message;

  // An allocation at an address already live does not match the replay: counted and said.
  const auto twice = load_trace(seed("alloc_twice_at_one_address.pickle"));
  const auto peaks = summarize(twice.trace).memory;
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_EQ(peaks[0].mismatched_events, 1u);
  const auto r = summary_report(twice.trace, summarize(twice.trace));
  ASSERT_GE(r.diagnostics.size(), 2u);
  ASSERT_EQ(r.diagnostics[1].notes.size(), 1u);
  EXPECT_NE(r.diagnostics[1].notes[0].find("1 of the 3 memory events do not match"),
            std::string::npos)
      << r.diagnostics[1].notes[0];

  const auto far = load_trace(seed("time_us_far_apart.pickle"));
  ASSERT_EQ(far.warnings.size(), 1u);
  EXPECT_NE(far.warnings[0].message.find("1 trace entry with a 'time_us' more than 2^60 ns"),
            std::string::npos)
      << far.warnings[0].message;
}

// Sizes and addresses out of range, blocks that do not fit their segment and a NaN time are
// refused with one line naming the entry and the field (the sweep's "16384 PiB" summaries).
TEST_F(HostileInput, SnapshotSizesLayoutsAndTimesAreChecked) {
  const auto refused = [&](const char* name, std::string_view code, std::string_view text) {
    SCOPED_TRACE(name);
    const auto e = refusal([&] { (void)load_trace(seed(name)); });
    ASSERT_TRUE(e);
    const std::string what = e->what();
    EXPECT_EQ(e->report().diagnostics.at(0).code, code) << what;
    EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_NE(what.find(text), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  };
  refused("range_block_size_negative.pickle", "TDIAG-TR-116",
          "segments[0].blocks[0]: 'size' -1048576 is out of range");
  refused("range_total_size_negative.pickle", "TDIAG-TR-116",
          "segments[0]: 'total_size' -2097152 is out of range");
  refused("range_event_size_huge.pickle", "TDIAG-TR-116",
          "device_traces[0][1]: 'size' 2305843009213693952 is out of range");
  refused("range_event_end_overflow.pickle", "TDIAG-TR-116",
          "device_traces[0][0]: 'addr' 0x7ffffffffff00000 with 'size' 2097152 is out of range");
  refused("range_oom_device_free_negative.pickle", "TDIAG-TR-116",
          "device_traces[0][0]: 'device_free' -1 is out of range");
  // A positive int from 2^63 on is named as written, not as the negative int of the same bits.
  refused("range_event_size_positive_2_63.pickle", "TDIAG-TR-116",
          "byte offset 206: 'size' 9223372036854775808 is out of range");
  refused("range_segment_size_positive_2_64.pickle", "TDIAG-TR-116",
          "'total_size' 18446744073709551615 is out of range");
  refused("range_block_address_positive_2_63.pickle", "TDIAG-TR-116",
          "'address' 9223372036854775808 is out of range");
  refused("range_segment_device_huge.pickle", "TDIAG-TR-116",
          "segments[0]: 'device' 1099511627776 is out of range (expected 0 to 65535)");
  refused("range_segment_device_2_64.pickle", "TDIAG-TR-116",
          "segments[0]: 'device' 18446744073709551615 is out of range"); // as written
  refused("layout_blocks_overlap.pickle", "TDIAG-TR-117",
          "segments[0].blocks[1]: the block [0x7f0000001000, +1048576) overlaps "
          "segments[0].blocks[0]");
  refused("layout_block_outside.pickle", "TDIAG-TR-117",
          "segments[0].blocks[0]: the block [0x7f0006400000, +1048576) lies outside its segment");
  // Segments of one device overlap (of two devices they may share addresses).
  refused("layout_segments_overlap.pickle", "TDIAG-TR-117",
          "segments[2]: the segment [0x7f0000400000, +8388608) overlaps segments[0] "
          "[0x7f0000000000, +8388608) on device 0");
  refused("layout_unaddressed_blocks_exceed.pickle", "TDIAG-TR-117",
          "segments[0].blocks[1]: the block [0x7f0000100000, +2097152) lies outside");
  refused("time_us_nan.pickle", "TDIAG-TR-112",
          "'time_us' (expected a finite number of microseconds) is nan");

  // A float time_us is microseconds (rounded), and counts for the origin like an int one.
  const auto floats = load_trace(seed("time_us_float.pickle"));
  EXPECT_EQ(floats.trace.metadata.time_origin_ns, 10'000);
  ASSERT_EQ(floats.trace.memory.size(), 2u);
  EXPECT_EQ(floats.trace.memory.all()[1].time, 3'000);
  // An oom may ask for any size a program can ask for.
  const auto oom = load_trace(seed("oom_request_huge.pickle"));
  ASSERT_EQ(oom.trace.memory.size(), 1u);
  EXPECT_EQ(oom.trace.memory.all()[0].size, std::uint64_t{1} << 62);
}

// A pickle is held to the budget by what it builds, not only by its size: a 16 MB pickle of a
// dict with 8M small ints in one list builds about 100 MB, over the 64 MiB budget, whether it is
// read as a snapshot or as a plain pickle_document (a Flight Recorder dump).
TEST_F(HostileInput, APickleOverTheBudgetByWhatItBuildsIsOneLine) {
  // `head`, then 8M copies of `item` appended to the list it opens, in batches of 1,000.
  const auto big_list = [](std::string head, std::string_view item, std::string_view tail) {
    constexpr int batches = 8000, batch = 1000;
    head.reserve(head.size() + static_cast<std::size_t>(batches) * (batch * item.size() + 2));
    for (int b = 0; b < batches; ++b) {
      for (int i = 0; i < batch; ++i)
        head += item;
      head += b + 1 < batches ? "e(" : "e";
    }
    return head + std::string(tail);
  };
  const auto check = [](const fs::path& path, auto&& load) {
    const auto e = refusal(load);
    ASSERT_TRUE(e);
    const std::string what = e->what();
    EXPECT_EQ(e->report().diagnostics.at(0).code, "TDIAG-CORE-006") << what;
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("what the pickle built by byte offset"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  };
  const auto bytes = big_list("\x80\x04}\x8c\x08segments](", "K\x01", "s.");
  const auto path = write("big_list.pickle", bytes);
  check(path, [&] { (void)load_trace(path); });
  check(path, [&] { (void)pickle_document::parse(bytes, path.string()); });
  // The same list made of 8M fetches of one memoized value: fetches make no new value, and are
  // held to the budget all the same.
  const auto fetches = big_list("\x80\x04}(\x8c\x04junk(K\x01t\x94\x8c\x08segments](",
                                std::string_view("h\x00", 2), "u.");
  const auto fetched = write("fetches.pickle", fetches);
  check(fetched, [&] { (void)pickle_document::parse(fetches, fetched.string()); });
}

// The stacks and strings a traceback interns are held to the budget as they are interned: one
// entry of 400k distinct frames (a 16 MB pickle) interned 220 MB of frames and names at its
// end, under a 100 MB budget, before they were counted.
TEST_F(HostileInput, DistinctFramesAreHeldToTheBudget) {
  using namespace std::string_literals;
  // protocol 4: {'device_traces': [[{'action': 'alloc', 'addr': 4096, 'size': 512,
  // 'frames': [{'name': 'f<i>', 'filename': '/m<i>.py', 'line': i}, ...]}]]}, each frame's keys
  // memoized by the first frame (0 to 2) and fetched by the others.
  const std::string key[3] = {"name", "filename", "line"};
  const auto text = [](const std::string& t) { return "\x8c"s + static_cast<char>(t.size()) + t; };
  const auto int32 = [](int v) { return "J"s + std::string(reinterpret_cast<char*>(&v), 4); };
  std::string p = "\x80\x04}(\x8c\x0d"
                  "device_traces]]}(" +
                  text("action") + text("alloc") + text("addr") + int32(4096) + text("size") +
                  int32(512) + text("frames") + "](";
  constexpr int frames = 400000;
  for (int i = 0; i < frames; ++i) {
    const auto k = [&](int n) {
      return i == 0 ? text(key[n]) + "\x94" : "h"s + static_cast<char>(n);
    };
    p += "}(" + k(0) + text(fmt::format("f{}", i)) + k(1) + text(fmt::format("/m{}.py", i)) + k(2) +
         int32(i) + "u";
    if (i % 1000 == 999)
      p += "e(";
  }
  p += "euaau.";
  const auto path = write("distinct_frames.pickle", p);
  setenv("TDIAG_MEMORY_LIMIT", "100M", 1);
  const auto e = refusal([&] { (void)load_trace(path); });
  ASSERT_TRUE(e);
  const std::string what = e->what();
  EXPECT_EQ(e->report().diagnostics.at(0).code, "TDIAG-CORE-006") << what;
  EXPECT_NE(what.find("what the pickle built by byte offset"), std::string::npos) << what;
}

// No importer makes a record that ends before it starts; one in a file is damage that would
// give the analyses negative busy time: its chunk is skipped and said, the others load.
TEST_F(HostileInput, ARecordEndingBeforeItStartsCostsItsChunk) {
  trace t = make_synthetic_trace({.kernels = 100});
  const auto good = dir_ / "good.tdtrace";
  tdtrace_writer_options o;
  o.layout = tdtrace_layout::chunks;
  write_tdtrace(good, t, o);
  t.kernels.mutable_all()[3].end = t.kernels[3].start - 101;
  const auto bad = dir_ / "bad.tdtrace";
  write_tdtrace(bad, t, o);
  std::string both = slurp(good);
  std::uint64_t footer = 0;
  std::memcpy(&footer, both.data() + both.size() - 24, sizeof footer);
  both.resize(footer); // the good file's chunks, then the bad one's
  const std::string tail = slurp(bad);
  std::memcpy(&footer, tail.data() + tail.size() - 24, sizeof footer);
  both += tail.substr(detail::file_header_size, footer - detail::file_header_size);
  const auto loaded = read_tdtrace(write("ends_early.tdtrace", both));
  EXPECT_EQ(loaded.loaded.trace.kernels.size(), 100u);
  EXPECT_EQ(loaded.info.chunks_corrupted, 1u);
  bool said = false;
  for (const auto& w : loaded.loaded.warnings)
    said |= w.code == "TDIAG-TR-313" &&
            w.message.find("ends 101 ns before it starts") != std::string::npos;
  EXPECT_TRUE(said);
}

// Each chunk fits the budget alone, but they decode into one trace: the same chunk of 20,000
// kernels, 40 times (a few MB on disk, loaded whole far over 64 MiB), was read to the end. The
// load now stops with the one budget line, naming the file.
TEST_F(HostileInput, ChunksTogetherOverTheBudgetAreOneLine) {
  const auto one = dir_ / "one.tdtrace";
  tdtrace_writer_options o;
  o.layout = tdtrace_layout::chunks;
  o.chunk_bytes = std::size_t{64} << 20; // one chunk
  write_tdtrace(one, make_synthetic_trace({.kernels = 20000}), o);
  const std::string bytes = slurp(one);
  std::uint64_t footer = 0;
  std::memcpy(&footer, bytes.data() + bytes.size() - 24, sizeof footer);
  const std::string header = bytes.substr(0, detail::file_header_size);
  const std::string chunk = bytes.substr(header.size(), footer - header.size());
  std::string many = header;
  for (int i = 0; i < 40; ++i)
    many += chunk;
  const auto path = write("many_chunks.tdtrace", many);
  const auto what = refused_with([&] { (void)read_tdtrace(path); }, "TDIAG-TR-316", path);
  EXPECT_NE(what.find("TDIAG_MEMORY_LIMIT"), std::string::npos) << what;
  // A range load through a footer's index is held to the same budget (not extrapolated).
  const auto indexed = dir_ / "indexed.tdtrace";
  o.chunk_bytes = std::size_t{1} << 20;
  write_tdtrace(indexed, make_synthetic_trace({.kernels = 400000}), o);
  tdtrace_read_options whole;
  whole.range = time_span{std::numeric_limits<std::int64_t>::min() / 2,
                          std::numeric_limits<std::int64_t>::max() / 2};
  const auto range = refusal([&] { (void)read_tdtrace(indexed, whole); });
  ASSERT_TRUE(range);
  EXPECT_EQ(range->report().diagnostics.at(0).code, "TDIAG-TR-316") << range->what();
  // A few copies fit, and load whole.
  const auto few = write("few_chunks.tdtrace", header + chunk + chunk);
  EXPECT_EQ(read_tdtrace(few).loaded.trace.kernels.size(), 40000u);
  if (const char* seeds = std::getenv("TDIAG_WRITE_SEEDS"))
    std::ofstream(fs::path(seeds) / "repeated_chunks.tdtrace", std::ios::binary) << slurp(few);
}

} // namespace
} // namespace tdiag::trace
