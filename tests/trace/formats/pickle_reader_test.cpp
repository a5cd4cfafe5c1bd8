// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The byte strings below were produced by CPython 3 `pickle.dumps(..., protocol=N)`; the
// figures for the shared snapshot were computed with Python's own `pickle` and `pickletools`.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

using tdiag::trace::pickle_document;
using tdiag::trace::pickle_kind;
using tdiag::trace::pickle_limits;

std::string bytes(const char* data, std::size_t n) {
  return std::string(data, n);
}
#define TDIAG_BYTES(lit) bytes(lit, sizeof(lit) - 1)

// {'a': [1, -2, 2**40, 2**64 + 5, -2**70], 'b': (1.5, None, True, False), 's': 'héllo',
//  'y': b'xy', 'sh': (shared, shared), 'big': 300, 'neg': -70000}, protocol 3.
const std::string basic = TDIAG_BYTES(
    "\x80\x03\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x61\x71\x01\x5d\x71\x02\x28\x4b\x01\x4a\xfe\xff"
    "\xff\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x09\x05\x00\x00\x00\x00\x00\x00\x00\x01\x8a\x09"
    "\x00\x00\x00\x00\x00\x00\x00\x00\xc0\x65\x58\x01\x00\x00\x00\x62\x71\x03\x28\x47\x3f\xf8\x00"
    "\x00\x00\x00\x00\x00\x4e\x88\x89\x74\x71\x04\x58\x01\x00\x00\x00\x73\x71\x05\x58\x06\x00\x00"
    "\x00\x68\xc3\xa9\x6c\x6c\x6f\x71\x06\x58\x01\x00\x00\x00\x79\x71\x07\x43\x02\x78\x79\x71\x08"
    "\x58\x02\x00\x00\x00\x73\x68\x71\x09\x5d\x71\x0a\x28\x4b\x01\x4b\x02\x65\x68\x0a\x86\x71\x0b"
    "\x58\x03\x00\x00\x00\x62\x69\x67\x71\x0c\x4d\x2c\x01\x58\x03\x00\x00\x00\x6e\x65\x67\x71\x0d"
    "\x4a\x90\xee\xfe\xff\x75\x2e");

// {'k': {1, 2}, 'f': frozenset([3]), 'u': 2**63}, protocol 5 (FRAME, MEMOIZE, sets).
const std::string proto5 = TDIAG_BYTES(
    "\x80\x05\x95\x29\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x6b\x94\x8f\x94\x28\x4b\x01"
    "\x4b\x02\x90\x8c\x01\x66\x94\x28\x4b\x03\x91\x94\x8c\x01\x75\x94\x8a\x09\x00\x00\x00\x00\x00"
    "\x00\x00\x80\x00\x75\x2e");

// collections.OrderedDict(a=1), protocol 2: GLOBAL at offset 2.
const std::string with_global = TDIAG_BYTES(
    "\x80\x02\x63\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e\x73\x0a\x4f\x72\x64\x65\x72\x65\x64\x44"
    "\x69\x63\x74\x0a\x71\x00\x29\x52\x71\x01\x58\x01\x00\x00\x00\x61\x71\x02\x4b\x01\x73\x2e");

// The same, protocol 4: STACK_GLOBAL at offset 39 (pickletools.genops).
const std::string with_stack_global = TDIAG_BYTES(
    "\x80\x04\x95\x29\x00\x00\x00\x00\x00\x00\x00\x8c\x0b\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e"
    "\x73\x94\x8c\x0b\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x94\x93\x94\x29\x52\x94\x8c\x01"
    "\x61\x94\x4b\x01\x73\x2e");

// l = []; l.append(l), protocol 2.
const std::string cyclic = TDIAG_BYTES("\x80\x02\x5d\x71\x00\x68\x00\x61\x2e");

const tdiag::field_value* field(const tdiag::input_error& e, std::string_view name) {
  return e.report().diagnostics.front().find_field(name);
}

std::string expect_error(const std::string& data, std::string* code = nullptr,
                         std::int64_t* offset = nullptr, std::string* opcode = nullptr,
                         const pickle_limits& limits = {}) {
  try {
    (void)pickle_document::parse(data, "test.pickle", limits);
  } catch (const tdiag::input_error& e) {
    const auto& d = e.report().diagnostics.front();
    if (code)
      *code = d.code;
    if (offset)
      *offset = std::get<std::int64_t>(field(e, "offset")->value);
    if (opcode)
      *opcode = std::get<std::string>(field(e, "opcode")->value);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(PickleReader, ReadsPlainData) {
  const auto doc = pickle_document::parse(basic);
  const auto root = doc.root();
  ASSERT_TRUE(root.is_dict());
  EXPECT_EQ(root.size(), 7u);
  EXPECT_EQ(doc.protocol(), 3);
  const auto a = root.find("a");
  ASSERT_EQ(a.kind(), pickle_kind::list);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a.at(0).as_int(), 1);
  EXPECT_EQ(a.at(1).as_int(), -2);
  EXPECT_EQ(a.at(2).as_int(), std::int64_t{1} << 40);
  EXPECT_EQ(a.at(3).kind(), pickle_kind::big_integer);
  EXPECT_FALSE(a.at(3).as_uint().has_value()); // 2**64 + 5 does not fit
  EXPECT_FALSE(a.at(4).as_uint().has_value()); // negative
  const auto b = root.find("b");
  ASSERT_EQ(b.kind(), pickle_kind::tuple);
  EXPECT_EQ(b.at(0).as_double(), 1.5);
  EXPECT_TRUE(b.at(1).is_none());
  EXPECT_EQ(b.at(2).as_bool(), true);
  EXPECT_EQ(b.at(3).as_bool(), false);
  EXPECT_EQ(root.find("s").as_string(), "h\xc3\xa9llo");
  EXPECT_EQ(root.find("y").kind(), pickle_kind::bytes);
  EXPECT_EQ(root.find("y").as_string(), "xy");
  EXPECT_EQ(root.find("big").as_int(), 300);
  EXPECT_EQ(root.find("neg").as_int(), -70000);
  EXPECT_FALSE(root.find("missing").valid());
}

TEST(PickleReader, MemoKeepsSharing) {
  const auto doc = pickle_document::parse(basic);
  const auto sh = doc.root().find("sh");
  ASSERT_EQ(sh.size(), 2u);
  EXPECT_EQ(sh.at(0).id(), sh.at(1).id());
  EXPECT_EQ(sh.at(1).size(), 2u);
  EXPECT_EQ(sh.at(1).at(1).as_int(), 2);
}

TEST(PickleReader, WalksItemsAndPairsInOrderWithIdentity) {
  const auto doc = pickle_document::parse(basic);
  const auto root = doc.root();
  std::vector<std::string> keys;
  root.for_each_item([&](std::string_view key, const tdiag::trace::pickle_value& v) {
    keys.emplace_back(key);
    EXPECT_TRUE(v.valid());
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "s", "y", "sh", "big", "neg"}));
  std::vector<std::int64_t> ints;
  root.find("a").for_each_element(
      [&](const tdiag::trace::pickle_value& v) { ints.push_back(v.as_int().value_or(0)); });
  EXPECT_EQ(ints, (std::vector<std::int64_t>{1, -2, std::int64_t{1} << 40, 0, 0}));
  int calls = 0;
  root.for_each_element([&](const tdiag::trace::pickle_value&) { ++calls; }); // a dict: none
  root.find("a").for_each_item(
      [&](std::string_view, const tdiag::trace::pickle_value&) { ++calls; });
  EXPECT_EQ(calls, 0);
  const auto sh = root.find("sh");
  EXPECT_EQ(sh.at(0).identity(), sh.at(1).identity()); // one object, fetched twice
  EXPECT_NE(sh.at(0).identity(), root.find("a").identity());
  EXPECT_EQ(tdiag::trace::pickle_value().identity(), 0u);
}

TEST(PickleReader, Protocol5FramesAndSets) {
  const auto doc = pickle_document::parse(proto5);
  const auto root = doc.root();
  EXPECT_EQ(doc.protocol(), 5);
  EXPECT_EQ(root.find("k").kind(), pickle_kind::set);
  EXPECT_EQ(root.find("k").size(), 2u);
  EXPECT_EQ(root.find("f").kind(), pickle_kind::set);
  EXPECT_EQ(root.find("u").as_uint(), std::uint64_t{1} << 63); // 9-byte LONG1
}

TEST(PickleReader, RefusesCodeOpcodesWithOffset) {
  std::string code, opcode;
  std::int64_t offset = -1;
  auto what = expect_error(with_global, &code, &offset, &opcode);
  EXPECT_EQ(code, "TDIAG-TR-106");
  EXPECT_EQ(opcode, "GLOBAL");
  EXPECT_EQ(offset, 2);
  EXPECT_NE(what.find("byte offset 2"), std::string::npos) << what;
  what = expect_error(with_stack_global, &code, &offset, &opcode);
  EXPECT_EQ(opcode, "STACK_GLOBAL");
  EXPECT_EQ(offset, 39);
  EXPECT_EQ(code, "TDIAG-TR-106");
}

TEST(PickleReader, RefusesEveryCodeOpcode) {
  const char ops[] = {'c',    '\x93', 'R',    'b',    'i', 'o', '\x81',
                      '\x92', '\x82', '\x83', '\x84', 'P', 'Q'};
  for (char op : ops) {
    std::string data = "\x80\x02";
    data += op;
    data += std::string(16, '\n');
    std::string code;
    std::int64_t offset = -1;
    expect_error(data, &code, &offset);
    EXPECT_EQ(code, "TDIAG-TR-106") << int(static_cast<unsigned char>(op));
    EXPECT_EQ(offset, 2);
  }
}

TEST(PickleReader, RefusesCycles) {
  std::string code;
  expect_error(cyclic, &code);
  EXPECT_EQ(code, "TDIAG-TR-107");
}

TEST(PickleReader, EveryTruncationIsAnErrorWithOffset) {
  for (std::size_t n = 0; n < basic.size(); ++n) {
    std::string code;
    std::int64_t offset = -1;
    const auto what = expect_error(basic.substr(0, n), &code, &offset);
    EXPECT_TRUE(code == "TDIAG-TR-101" || code == "TDIAG-TR-102") << n << ": " << what;
    EXPECT_GE(offset, 0);
    EXPECT_LE(offset, static_cast<std::int64_t>(n));
  }
}

TEST(PickleReader, LimitsAreEnforced) {
  pickle_limits limits;
  limits.max_values = 5;
  std::string code;
  expect_error(basic, &code, nullptr, nullptr, limits);
  EXPECT_EQ(code, "TDIAG-TR-104");
  limits = {};
  limits.max_depth = 1;
  expect_error(basic, &code, nullptr, nullptr, limits);
  EXPECT_EQ(code, "TDIAG-TR-104");
  limits = {};
  limits.max_bytes = 10;
  expect_error(basic, &code, nullptr, nullptr, limits);
  EXPECT_EQ(code, "TDIAG-TR-104");
}

TEST(PickleReader, BadMemoIndex) {
  std::string code;
  // BINGET 5 with an empty memo.
  expect_error(TDIAG_BYTES("\x80\x02h\x05."), &code);
  EXPECT_EQ(code, "TDIAG-TR-103");
  // LONG_BINPUT far away must not allocate for it.
  expect_error(TDIAG_BYTES("\x80\x02N"
                           "r\xff\xff\xff\x7f."),
               &code);
  EXPECT_EQ(code, "TDIAG-TR-103");
}

TEST(PickleReader, SharedTrainingSnapshot) {
  const std::filesystem::path path = TDIAG_SHARED_DIR "/traces/train_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto doc = pickle_document::read_file(path);
  EXPECT_EQ(doc.protocol(), 4);
  const auto root = doc.root();
  // Python: len(d['segments']) == 45, len(d['device_traces'][0]) == 5898.
  EXPECT_EQ(root.find("segments").size(), 45u);
  ASSERT_EQ(root.find("device_traces").size(), 1u);
  const auto events = root.find("device_traces").at(0);
  EXPECT_EQ(events.size(), 5898u);
  EXPECT_EQ(events.at(0).find("action").as_string(), "segment_alloc");
  EXPECT_EQ(events.at(0).find("addr").as_uint(), 139842589556736u);
  EXPECT_EQ(events.at(0).find("time_us").as_int(), 1796200892070881);
  // Python: 3,951 distinct frame lists among the 5,898 entries (the memo keeps them shared).
  std::set<std::uint32_t> frame_lists;
  for (std::size_t i = 0; i < events.size(); ++i)
    frame_lists.insert(events.at(i).find("frames").id());
  EXPECT_EQ(frame_lists.size(), 3951u);
}

} // namespace
