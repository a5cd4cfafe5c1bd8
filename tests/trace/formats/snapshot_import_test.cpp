// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures were computed independently with Python's pickle module:
//   d = pickle.load(open(f, 'rb')); Counter(e['action'] for e in d['device_traces'][0]), etc.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace tdiag::trace;

std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::map<memory_action, std::size_t> count_actions(const trace& t) {
  std::map<memory_action, std::size_t> n;
  for (const auto& e : t.memory.all())
    ++n[e.action];
  return n;
}

TEST(SnapshotImport, TrainingSnapshotCounts) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto r = import_snapshot_file(path);
  const auto& t = r.trace;
  EXPECT_EQ(t.metadata.format, "torch-snapshot");
  const auto n = count_actions(t);
  // Counter: alloc 2049, free_requested 1902, free_completed 1902, segment_alloc 45.
  EXPECT_EQ(n.at(memory_action::alloc), 2049u);
  EXPECT_EQ(n.at(memory_action::free_requested), 1902u);
  EXPECT_EQ(n.at(memory_action::free_completed), 1902u);
  EXPECT_EQ(n.at(memory_action::segment_alloc), 45u);
  EXPECT_EQ(t.memory.size(), 5898u);
  // time_us of the first entry: 1796200892070881; the last: 1796200897971579.
  EXPECT_EQ(t.metadata.time_origin_ns, 1796200892070881000);
  EXPECT_EQ(t.span().end, (1796200897971579 - 1796200892070881) * 1000);
  ASSERT_TRUE(t.final_allocator_state.has_value());
  const auto& final_state = *t.final_allocator_state;
  EXPECT_EQ(final_state.segments.size(), 45u);
  EXPECT_EQ(final_state.reserved_bytes(), 994050048u);  // sum(total_size)
  EXPECT_EQ(final_state.allocated_bytes(), 222617600u); // sum(allocated_size)
  // The first entry's innermost frame: convert, torch/nn/modules/module.py:1370.
  const auto& first = t.memory.all()[0];
  const auto frames = t.stacks.stack(first.stack);
  ASSERT_FALSE(frames.empty());
  const auto& f = t.stacks.frame_at(frames[0]);
  EXPECT_EQ(t.name(f.function), "convert");
  EXPECT_EQ(f.line, 1370u);
  EXPECT_TRUE(t.name(f.file).ends_with("torch/nn/modules/module.py"));
  ASSERT_NE(t.metadata.property("allocator.max_split_size"), nullptr);
  EXPECT_EQ(*t.metadata.property("allocator.max_split_size"), "-1");
}

TEST(SnapshotImport, OomSnapshot) {
  const auto path = shared("oom_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto r = import_snapshot_file(path);
  const auto& t = r.trace;
  const auto events = t.memory.all();
  ASSERT_EQ(events.size(), 23u);
  const auto& oom = events.back();
  EXPECT_EQ(oom.action, memory_action::oom);
  EXPECT_EQ(oom.size, 3221225472u);                       // 3 GiB asked
  EXPECT_EQ(t.detail_of(oom).device_free, 147642777600u); // 137.5 GiB free on the device
  EXPECT_EQ(events[21].action, memory_action::segment_free);
  EXPECT_EQ(events[20].action, memory_action::segment_free);
  EXPECT_EQ(events[20].size, 268435456u);
  EXPECT_EQ(events[21].size, 268435456u);
  EXPECT_EQ(t.final_allocator_state->segments.size(), 9u);
}

TEST(SnapshotImport, LoadTraceDispatchesByContent) {
  const auto path = shared("oom_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  // A misleading name: detection is by content.
  const auto copy = std::filesystem::path(TDIAG_BINARY_DIR) / "snapshot_import_test_trace.json";
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  const auto r = load_trace(copy);
  EXPECT_EQ(r.trace.metadata.format, "torch-snapshot");
  EXPECT_EQ(r.trace.memory.size(), 23u);
}

TEST(SnapshotImport, TruncationsAreErrorsWithOffsets) {
  const auto path = shared("oom_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto bytes = read_all(path);
  for (std::size_t cut = 0; cut < bytes.size(); cut += 97) {
    try {
      (void)import_snapshot(bytes.substr(0, cut), "cut.pickle");
      FAIL() << "no error at " << cut;
    } catch (const tdiag::input_error& e) {
      const auto* off = e.report().diagnostics.front().find_field("offset");
      ASSERT_NE(off, nullptr) << e.what();
      EXPECT_LE(std::get<std::int64_t>(off->value), static_cast<std::int64_t>(cut));
      EXPECT_NE(std::string(e.what()).find("byte offset"), std::string::npos);
    }
  }
}

TEST(SnapshotImport, NotASnapshot) {
  // pickle.dumps([1, 2], protocol=2)
  const std::string list_pickle("\x80\x02]q\x00(K\x01K\x02"
                                "e.",
                                12);
  try {
    (void)import_snapshot(list_pickle, "list.pickle");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(e.report().diagnostics.front().code, "TDIAG-TR-111");
  }
}

} // namespace

namespace {

std::filesystem::path generated(const char* name, std::uint64_t events) {
  auto path = std::filesystem::temp_directory_path() /
              fmt::format("tdiag_snapshot_import_{}_{}", ::getpid(), name);
  synthetic_file_options o;
  o.events = events;
  (void)write_synthetic_snapshot(path, o);
  return path;
}

TEST(SnapshotImport, StreamedFileEqualsTheBytesInMemory) {
  // ~3 MB: the streaming reader refills its 1 MiB window mid-opcode several times.
  const auto path = generated("stream.pickle", 60'000);
  const auto from_file = load_trace(path);
  const auto from_bytes = import_snapshot(read_all(path), "bytes.pickle");
  EXPECT_EQ(from_file.trace.memory.size(), 60'000u);
  EXPECT_TRUE(from_file.trace.memory == from_bytes.trace.memory);
  EXPECT_EQ(from_file.trace.stacks.stack_count(), from_bytes.trace.stacks.stack_count());
  ASSERT_TRUE(from_file.trace.final_allocator_state.has_value());
  EXPECT_EQ(from_file.trace.final_allocator_state->segments.size(),
            from_bytes.trace.final_allocator_state->segments.size());
  std::filesystem::remove(path);
}

TEST(SnapshotImport, TooLargeForTheBudgetIsOnePlainLine) {
  const auto path = generated("large.pickle", 200'000);
  setenv("TDIAG_MEMORY_LIMIT", "4M", 1);
  try {
    (void)load_trace(path);
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    const auto& d = e.report().diagnostics.front();
    EXPECT_EQ(d.code, "TDIAG-TR-115");
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("65535 counted in the first "), std::string::npos) << what;
    EXPECT_NE(what.find("; the memory budget is 4.0 MiB (TDIAG_MEMORY_LIMIT)"), std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    // What to do is on the same line: convert, then open whole or in part.
    for (const auto* todo : {"--tdtrace OUT.tdtrace", "--device N", "--window A:B"})
      EXPECT_NE(what.find(todo), std::string::npos) << todo << ": " << what;
    const auto* estimated = d.find_field("events_estimated");
    ASSERT_NE(estimated, nullptr);
    // Extrapolated from the share of the file read: within 10% of the 200,000 entries.
    EXPECT_NEAR(static_cast<double>(std::get<std::int64_t>(estimated->value)), 200'000.0, 20'000.0);
  }
  unsetenv("TDIAG_MEMORY_LIMIT");
  std::filesystem::remove(path);
}

} // namespace

namespace {

// BINUNICODE: opcode, 4-byte length, bytes.
std::string binunicode(const std::string& s) {
  std::string out = "X";
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>((s.size() >> (8 * i)) & 0xff);
  return out + s;
}

// An entry giving 'user_metadata' twice, a float then a str, reads as its last value, as Python
// reads it; the float's item read an empty optional's string (found by the fuzzer: a crash).
TEST(SnapshotImport, UserMetadataGivenTwiceReadsAsItsLastValue) {
  std::string entry = "}(" + binunicode("action") + binunicode("alloc") + binunicode("addr") +
                      "K\x07" + binunicode("user_metadata") + "G@\x09\x21\xfb\x54\x44\x2d\x18" +
                      binunicode("user_metadata") + binunicode("tag") + "u";
  const std::string p = "\x80\x04}(" + binunicode("device_traces") + "](](" + entry + entry + "ee" +
                        binunicode("segments") + "]u.";
  const auto t = import_snapshot(p, "twice.pickle").trace;
  ASSERT_EQ(t.memory.size(), 2u);
  for (const auto& m : t.memory.all())
    EXPECT_EQ(t.name(t.detail_of(m).user_metadata), "tag");
  // The last value not a str either: one line naming it.
  std::string bad = entry;
  bad.replace(bad.find(binunicode("tag")), binunicode("tag").size(), "K\x05");
  const std::string q = "\x80\x04}(" + binunicode("device_traces") + "](](" + bad + "ee" +
                        binunicode("segments") + "]u.";
  EXPECT_THROW((void)import_snapshot(q, "twice.pickle"), tdiag::input_error);
}

TEST(SnapshotImport, StringsLongerThanTheReadWindow) {
  // {'device_traces': [[{'action': 'alloc', 'addr': 7, 'user_metadata': <3 MiB>}, ...]]}:
  // the reader's 1 MiB window must grow for one opcode and slide on.
  const std::string meta(3u << 20, 'm');
  std::string entry = "}(" + binunicode("action") + binunicode("alloc") + binunicode("addr") +
                      "K\x07" + binunicode("user_metadata") + binunicode(meta) + "u";
  std::string p = "\x80\x04}(" + binunicode("device_traces") + "](](" + entry + entry + "ee" +
                  binunicode("segments") + "]u.";
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("tdiag_snapshot_import_{}_long.pickle", ::getpid());
  std::ofstream(path, std::ios::binary) << p;
  const auto r = load_trace(path);
  ASSERT_EQ(r.trace.memory.size(), 2u);
  EXPECT_EQ(r.trace.memory.all()[1].address, 7u);
  EXPECT_EQ(r.trace.strings.name(r.trace.detail_of(r.trace.memory.all()[1]).user_metadata).size(),
            meta.size());
  EXPECT_TRUE(r.trace.memory == import_snapshot(p, "bytes.pickle").trace.memory);
  std::filesystem::remove(path);
}

// Protocol-4 entries the way pickle writes them once their keys are memoized (memo 5-8:
// 'action', 'alloc', 'addr', 'time_us'): flat dicts the importer turns into rows as it reads
// them, with no dict made (e0 is appended alone, e1 to e3 in one batch; `middle` is e2).
std::string memoized_entries(const std::string& middle) {
  const auto memo = [](const std::string& s) { return binunicode(s) + "\x94"; };
  const auto flat = [](char addr, char time) {
    return std::string("}\x94(h\x05h\x06h\x07K") + addr + "h\x08K" + time + "u";
  };
  const std::string e0 = "}\x94(" + memo("action") + memo("alloc") + memo("addr") + "K\x0a" +
                         memo("time_us") + "K\x01u";
  // Past the entries: the flat read looks 1 KiB ahead.
  const std::string pad = binunicode("pad") + binunicode(std::string(2000, 'x'));
  return "\x80\x04}\x94(" + memo("device_traces") + "]\x94(]\x94" + e0 + "a(" + flat(11, 2) +
         middle + flat(13, 4) + "ee" + pad + "u.";
}

TEST(SnapshotImport, FlatEntriesKeepFileOrderAmongOthers) {
  // e2 holds a str the flat read does not take ('user_metadata': 'x'): it becomes a dict, and
  // its row must still come between e1's and e3's.
  const auto p = memoized_entries("}\x94(h\x05h\x06h\x07K\x0ch\x08K\x03" +
                                  binunicode("user_metadata") + binunicode("x") + "u");
  const auto r = import_snapshot(p, "flat.pickle");
  const auto rows = r.trace.memory.all();
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].address, 10u + i);
    EXPECT_EQ(rows[i].time, static_cast<std::int64_t>(i) * 1000);
    EXPECT_EQ(rows[i].action, memory_action::alloc);
  }
  EXPECT_EQ(r.trace.strings.name(r.trace.detail_of(rows[2]).user_metadata), "x");
  EXPECT_EQ(r.trace.metadata.time_origin_ns, 1000);
}

TEST(SnapshotImport, FlatEntryWithAStrAddressNamesIt) {
  // e2's 'addr' is the memoized str 'alloc': the row cannot be made without the dict, which
  // then names the field and what it holds.
  const auto p = memoized_entries("}\x94(h\x05h\x06h\x07h\x06h\x08K\x03u");
  try {
    (void)import_snapshot(p, "flat.pickle");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("flat.pickle: byte offset "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'addr' (expected an int) is a str"), std::string::npos)
        << e.what();
  }
}

// A PUT that replaces a memoized key (slot 7, 'addr', becomes 'size') between two flat entries:
// the next entry's key is what the slot holds now, not what the one before it fetched there.
TEST(SnapshotImport, FlatEntryKeysFollowAPutThatReplacesOne) {
  const auto p = memoized_entries(binunicode("size") + "q\x07" + "0");
  const auto r = import_snapshot(p, "flat.pickle");
  const auto rows = r.trace.memory.all();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].address, 11u);
  EXPECT_EQ(rows[2].address, 0u);
  EXPECT_EQ(rows[2].size, 13u);
}

// A key given twice reads as its last value, as in Python, whether the entry is read key by key
// (the first, whose fourth key is new) or by slots (the second): the time replaced is not the
// snapshot's earliest either.
TEST(SnapshotImport, FlatEntryKeyGivenTwiceReadsAsItsLastValue) {
  using namespace std::string_literals; // (time_us 0 holds a NUL)
  const auto twice = "}\x94(h\x05h\x06h\x07K\x0ch\x08K\x00h\x08K\x03h\x07K\x0du"s;
  const auto r = import_snapshot(memoized_entries(twice + twice), "twice.pickle");
  const auto rows = r.trace.memory.all();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(r.trace.metadata.time_origin_ns, 1000); // e0's time_us 1
  for (const std::size_t i : {2u, 3u}) {
    EXPECT_EQ(rows[i].address, 13u) << i;
    EXPECT_EQ(rows[i].time, 2000) << i;
  }
}

// LONG1 ints of every length a flat entry reads (1 to 7 bytes), positive and negative (a
// negative 'stream' wraps to u64, as the dict's read does).
TEST(SnapshotImport, FlatEntriesReadLong1IntsOfEveryLength) {
  const auto long1 = [](std::int64_t v, int n) {
    std::string out = "\x8a" + std::string(1, static_cast<char>(n));
    for (int i = 0; i < n; ++i)
      out += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
    return out;
  };
  // 'stream' memoized at 10 (e1 took 9), then popped.
  std::string middle = binunicode("stream") + "\x94" + "0";
  std::vector<std::pair<std::uint64_t, std::int64_t>> want; // (addr, stream)
  for (int n = 1; n <= 7; ++n) {
    const auto addr = (std::uint64_t{1} << (8 * n - 1)) - 3;  // near the largest n bytes hold
    const auto stream = 5 - (std::int64_t{1} << (8 * n - 1)); // near the most negative
    middle += "}\x94(h\x05h\x06h\x07" + long1(static_cast<std::int64_t>(addr), n) + "h\x0a" +
              long1(stream, n) + "h\x08K\x03u";
    want.emplace_back(addr, stream);
  }
  const auto r = import_snapshot(memoized_entries(middle), "long1.pickle");
  const auto rows = r.trace.memory.all();
  ASSERT_EQ(rows.size(), 2 + want.size() + 1);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(rows[2 + i].address, want[i].first) << i;
    EXPECT_EQ(rows[2 + i].stream, static_cast<std::uint64_t>(want[i].second)) << i;
  }
}

} // namespace

namespace {

// One snapshot written the way pickle.dump writes it, with the memo puts of protocol 2
// (BINPUT, LONG_BINPUT past index 255) or of protocol 4 (MEMOIZE); strings memoized once.
class snapshot_writer {
public:
  explicit snapshot_writer(int protocol, bool frames = false)
      : protocol_(protocol), frames_(frames) {
    out_ = std::string("\x80") + static_cast<char>(protocol);
  }
  void put() {
    if (protocol_ >= 4) {
      out_ += '\x94';
    } else if (next_ < 256) {
      out_ += 'q';
      out_ += static_cast<char>(next_);
    } else {
      out_ += 'r';
      le(next_, 4);
    }
    ++next_;
  }
  void get(std::uint32_t i) {
    if (i < 256) {
      out_ += 'h';
      out_ += static_cast<char>(i);
    } else {
      out_ += 'j';
      le(i, 4);
    }
  }
  [[nodiscard]] std::uint32_t last() const { return next_ - 1; }
  // A FRAME opcode, as protocol 4 starts one before an object every 64 KiB (here: often).
  void frame() {
    if (frames_) {
      out_ += '\x95';
      le(16, 8);
    }
  }
  void str(const std::string& s) {
    if (const auto it = strings_.find(s); it != strings_.end())
      return get(it->second);
    out_ += binunicode(s);
    put();
    strings_[s] = last();
  }
  void integer(std::uint64_t v) {
    if (v < 256) {
      out_ += 'K';
      le(v, 1);
    } else if (v < 65536) {
      out_ += 'M';
      le(v, 2);
    } else if (v < 0x80000000u) {
      out_ += 'J';
      le(v, 4);
    } else {
      // LONG1 as pickle writes it: the fewest bytes that leave the sign bit clear.
      int n = 1;
      while (n < 8 && (v >> (8 * n - 1)) != 0)
        ++n;
      out_ += '\x8a';
      out_ += static_cast<char>(n);
      le(v, n);
    }
  }
  std::string& out() { return out_; }

private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  int protocol_;
  bool frames_;
  std::string out_;
  std::uint32_t next_ = 0;
  std::map<std::string, std::uint32_t> strings_;
};

// 700 entries on device 0 (and three of them again on device 1): frames shared through the memo,
// fresh lists of fresh frame dicts (one of a single frame, which pickle appends alone), or none;
// extra keys the importer skips.
// With more entries, the last one lists entry 303's frames again, fetched from the memo.
constexpr std::uint64_t refetched = 303;
std::string written_snapshot(int protocol, bool frames = false, std::uint64_t entries = 700) {
  snapshot_writer w(protocol, frames);
  w.out() += "}";
  w.put();
  w.out() += "(";
  w.str("device_traces");
  w.out() += "]";
  w.put();
  w.out() += "]";
  w.put();
  w.out() += "(";
  std::uint32_t shared_frames = 0;
  std::vector<std::uint32_t> entry_memo, list_memo(entries, 0);
  const char* actions[] = {"alloc", "free_requested", "free_completed", "segment_alloc"};
  for (std::uint64_t i = 0; i < entries; ++i) {
    w.frame();
    w.out() += "}";
    w.put();
    entry_memo.push_back(w.last());
    w.out() += "(";
    w.str("action");
    w.str(actions[i % 4]);
    w.str("addr");
    w.frame();
    w.integer(0x7f0000000000 + i * 4096);
    w.str("size");
    w.integer(i * 512);
    w.str("stream");
    w.integer(i % 3);
    w.str("time_us");
    w.integer(1'700'000'000'000'000 + i * 7);
    w.str("compile_context");
    w.str("N/A");
    w.str("user_metadata");
    w.str(i % 5 == 0 ? "tag" : "");
    if (i % 3 != 2) {
      w.frame();
      w.str("frames");
      w.frame();
      if (i % 3 == 1 && i > 1) {
        w.get(shared_frames);
      } else if (i + 1 == entries && entries > 700) {
        w.get(list_memo[refetched]);
      } else {
        w.out() += "]";
        w.put();
        list_memo[i] = w.last();
        if (i == 0)
          shared_frames = w.last();
        const auto n = 1 + i % 4;
        w.out() += n > 1 ? "(" : "";
        for (std::uint64_t f = 0; f < n; ++f) {
          w.frame();
          w.out() += "}";
          w.put();
          w.out() += "(";
          w.str("filename");
          w.str(fmt::format("mod{}.py", (i + f) % 7));
          w.str("line");
          w.frame();
          w.integer(10 + (i * 3 + f) % 40);
          w.str("name");
          w.str(fmt::format("fn{}", (i + 2 * f) % 11));
          w.out() += "u";
        }
        w.out() += n > 1 ? "e" : "a";
      }
    }
    w.out() += "u";
    if (i % 100 == 99)
      w.out() += "e(";
  }
  // A second device lists entries 100 to 102 again (fetched from the memo): two of them were
  // read flat, so their memo puts must have gone where the protocol says.
  w.out() += "ea]";
  w.put();
  w.out() += "(";
  for (const auto i : {100, 101, 102})
    w.get(entry_memo[i]);
  w.out() += "ea";
  // Past the entries: the flat read looks ahead.
  w.str("pad");
  w.str(std::string(2000, 'x'));
  w.str("segments");
  w.out() += "]";
  w.put();
  w.out() += "u.";
  return w.out();
}

// The rows of written_snapshot(_, _, entries), as written; `other` is another import of it.
void check_written(const trace& t, const trace& other, std::uint64_t entries) {
  ASSERT_EQ(t.memory.size(), entries + 3);
  EXPECT_TRUE(t.memory == other.memory);
  EXPECT_EQ(t.stacks.stack_count(), other.stacks.stack_count());
  const auto rows = t.memory.all();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& m = rows[r];
    const auto i = r < entries ? r : 100 + (r - entries);
    EXPECT_EQ(m.device, r < entries ? 0 : 1) << r;
    EXPECT_EQ(m.address, 0x7f0000000000 + i * 4096) << i;
    EXPECT_EQ(m.size, i * 512) << i;
    EXPECT_EQ(m.stream, i % 3) << i;
    EXPECT_EQ(m.time, static_cast<std::int64_t>(i) * 7000) << i;
    EXPECT_EQ(t.name(t.detail_of(m).user_metadata), i % 5 == 0 ? "tag" : "") << i;
    // The frames each entry was written with (innermost first), or those it fetched.
    const auto frames = t.stacks.stack(m.stack);
    const auto from = i % 3 == 1 && i > 1 ? 0 : i + 1 == entries && entries > 700 ? refetched : i;
    ASSERT_EQ(frames.size(), i % 3 == 2 ? 0 : 1 + from % 4) << i;
    for (std::size_t f = 0; f < frames.size(); ++f) {
      const auto& fr = t.stacks.frame_at(frames[f]);
      EXPECT_EQ(t.name(fr.file), fmt::format("mod{}.py", (from + f) % 7)) << i;
      EXPECT_EQ(fr.line, 10 + (from * 3 + f) % 40) << i;
      EXPECT_EQ(t.name(fr.function), fmt::format("fn{}", (from + 2 * f) % 11)) << i;
    }
  }
}

// Entries are read in one go (frames lists too) whatever the memo puts and FRAME opcodes: every
// field as written, and as the other protocols give it.
TEST(SnapshotImport, ProtocolsTwoAndFourImportAlike) {
  const auto p2 = import_snapshot(written_snapshot(2), "p2.pickle");
  const auto p4 = import_snapshot(written_snapshot(4), "p4.pickle");
  const auto framed = import_snapshot(written_snapshot(4, true), "framed.pickle");
  check_written(p2.trace, p4.trace, 700);
  check_written(framed.trace, p4.trace, 700);
}

// Past some 64 K memo slots the early ones are packed (snap_memo): rows and a frames list
// fetched from there read back as stored.
TEST(SnapshotImport, PackedMemoSlotsReadBack) {
  constexpr std::uint64_t entries = 40'000; // about 100 K memo slots
  const auto p2 = import_snapshot(written_snapshot(2, false, entries), "p2.pickle");
  const auto p4 = import_snapshot(written_snapshot(4, true, entries), "p4.pickle");
  check_written(p2.trace, p4.trace, entries);
  check_written(p4.trace, p2.trace, entries);
}

} // namespace
