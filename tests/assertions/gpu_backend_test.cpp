// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The GPU back-end source shared by CUDA and HIP (assertions/src/gpu/gpu_backend.hpp) over a
// pretend runtime (stub_gpu_api.h): where the launch slot goes, which runtime calls a launch
// makes, and how a failed call is reported. The real runtimes run it in the gpu-labelled tests.
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "stub_gpu_api.h"

namespace {

using tdiag::test::stub_counts;
using tdiag::test::stub_gpu_api;
using stub_backend = tdiag::assertions::detail::gpu_backend<stub_gpu_api>;
constexpr std::uint32_t slots = 256;

class GpuBackend : public ::testing::Test {
protected:
  void SetUp() override {
    stub_gpu_api::static_bytes = 0;
    stub_gpu_api::dynamic_limit = 48 * 1024;
    buffer = be.allocate_failure_buffer(0, 4096);
    const auto* header = static_cast<const tdiag::assertions::buffer_header*>(buffer.host);
    table = reinterpret_cast<const std::uint64_t*>(header->reserved[0]);
    stub_counts.reset();
  }
  void TearDown() override { be.free_failure_buffer(0, buffer); }

  // Launches with id `id`; returns the slot the dynamic shared memory size carries.
  std::uint32_t launch(std::uint64_t id, std::uint64_t shared = 0,
                       tdiag::test::stub_stream* stream = nullptr) {
    tdiag::launch_request r;
    r.kernel = kernel; // any address: the stub never calls it
    r.shared_memory = shared;
    r.stream = stream;
    r.launch_id = id;
    EXPECT_EQ(be.launch(r), tdiag::launch_status::ok);
    const std::uint64_t seen = stub_gpu_api::static_bytes + stub_counts.last_shared.load();
    return static_cast<std::uint32_t>(seen % 256);
  }

  stub_backend be;
  tdiag::mapped_buffer buffer;
  const std::uint64_t* table = nullptr;
  const void* kernel = this; // its attributes are queried once: a new one to change them
};

TEST_F(GpuBackend, SlotTableNamesTheLaunchOfTheSharedMemorySize) {
  const std::uint32_t slot = launch(41);
  ASSERT_NE(slot, 0u);
  EXPECT_LT(stub_counts.last_shared.load(), 256u); // no request: the slot bytes alone
  EXPECT_EQ(table[slot], 41u);
  EXPECT_EQ(table[slots + slot], stub_counts.last_shared.load());
  // The next launch gets another slot, the first keeps its launch.
  const std::uint32_t next = launch(42);
  EXPECT_NE(next, slot);
  EXPECT_EQ(table[next], 42u);
  EXPECT_EQ(table[slot], 41u);
}

TEST_F(GpuBackend, PaddingKeepsTheRequestAndCountsStaticSharedMemoryWhereTheDeviceDoes) {
  for (const std::uint64_t& static_bytes :
       {std::uint64_t{0}, std::uint64_t{100}}) { // CUDA sees dynamic only, AMD the total
    stub_gpu_api::static_bytes = static_bytes;
    kernel = &static_bytes;
    for (const std::uint64_t shared : {0u, 1u, 255u, 256u, 1000u}) {
      const std::uint32_t slot = launch(1000 + shared, shared);
      const std::uint64_t given = stub_counts.last_shared.load();
      SCOPED_TRACE(testing::Message() << "static " << static_bytes << ", shared " << shared);
      EXPECT_GE(given, shared);
      EXPECT_LT(given, shared + 256);
      EXPECT_EQ(table[slot], 1000 + shared);
      EXPECT_EQ(table[slots + slot], static_bytes + given);
    }
  }
}

TEST_F(GpuBackend, NoRoomForTheSlotLaunchesUnregistered) {
  stub_gpu_api::dynamic_limit = 1000;
  (void)launch(7, 1000);
  EXPECT_EQ(stub_counts.last_shared.load(), 1000u); // as asked, slot 0 in the device's eyes
  EXPECT_EQ(stub_counts.launches.load(), 1u);
}

TEST_F(GpuBackend, LegacyStreamLaunchesMakeNoCaptureQuery) {
  for (std::uint64_t id = 1; id <= 100; ++id)
    (void)launch(id);
  EXPECT_EQ(stub_counts.launches.load(), 100u);
  EXPECT_EQ(stub_counts.capture_queries.load(), 0u);
  EXPECT_EQ(stub_counts.attribute_queries.load(), 1u); // once per kernel
  EXPECT_EQ(stub_counts.device_queries.load(), 0u);    // one device: never asked
  // An event at the first launch and one in every launch_slot_pool::event_every after.
  EXPECT_LE(stub_counts.event_records.load(), 100u / 8 + 1);
}

// Each kernel launches by the handle the runtime gave for it, also when kernels alternate (the
// last kernel's entry is cached) and when the launch has no slot.
TEST_F(GpuBackend, EachKernelLaunchesByItsOwnHandle) {
  const int other = 0;
  for (std::uint64_t id = 1; id <= 6; ++id) {
    kernel = id % 2 == 0 ? static_cast<const void*>(&other) : static_cast<const void*>(this);
    (void)launch(id);
  }
  stub_gpu_api::dynamic_limit = 0; // no room for a slot: launched unregistered, same handle
  kernel = &table;
  (void)launch(7);
  EXPECT_EQ(stub_counts.launches.load(), 7u);
  EXPECT_EQ(stub_counts.attribute_queries.load(), 3u);
  EXPECT_EQ(stub_counts.wrong_handles.load(), 0u);
}

TEST_F(GpuBackend, CapturedLaunchKeepsAGraphSlot) {
  tdiag::test::stub_stream stream;
  stream.capturing = true;
  const std::uint32_t slot = launch(9, 0, &stream);
  EXPECT_GE(slot, 224u); // launch_slot_pool::graph_first
  EXPECT_EQ(table[slot], 9u | (1ull << 63));
  EXPECT_EQ(stub_counts.capture_queries.load(), 1u);
  EXPECT_EQ(stub_counts.event_records.load(), 0u); // nothing recorded into a capture
  stream.capturing = false;
  const std::uint32_t normal = launch(10, 0, &stream);
  EXPECT_LT(normal, 224u);
  EXPECT_EQ(table[normal], 10u);
  EXPECT_EQ(table[slot], 9u | (1ull << 63)); // the graph replays its slot: never reused
}

__global__ void stub_kernel(int) {}

TEST(GpuBackendRuntime, CapturedLaunchIsKeptWithItsCaptureForGood) {
  // Through the whole runtime: a launch captured into a graph stays findable with its capture
  // after the ring has gone round and after configure() started a new one, whose ids go on.
  auto stub = std::make_shared<stub_backend>();
  tdiag::register_backend(stub, -1000);
  tdiag::set_active_backend("stub");
  tdiag::assertions::runtime_config config;
  config.print = false;
  config.launches = 16;
  tdiag::assertions::configure(config);
  tdiag::test::stub_stream stream;
  stream.capturing = true;
  TDIAG_LAUNCH(stub_kernel, 1, 1, 0, &stream, 0);
  const std::uint64_t id = tdiag::assertions::launches().next_id() - 1;
  stream.capturing = false;
  for (int i = 0; i < 100; ++i)
    TDIAG_LAUNCH(stub_kernel, 1, 1, 0, &stream, i);
  tdiag::assertions::configure(config);
  EXPECT_GT(tdiag::assertions::launches().next_id(), id + 100) << "ids go on after configure()";
  EXPECT_FALSE(tdiag::assertions::launches().find(id).has_value());
  const auto pinned = tdiag::assertions::detail::find_graph_launch(id);
  tdiag::set_active_backend("");
  tdiag::assertions::configure(tdiag::assertions::runtime_config{});
  ASSERT_TRUE(pinned.has_value());
  EXPECT_EQ(pinned->info.launch_id, id);
  EXPECT_STREQ(pinned->info.kernel_name, "stub_kernel");
  EXPECT_EQ(pinned->capture_id, 77u);
  EXPECT_EQ(pinned->graph, &stream);
  EXPECT_FALSE(tdiag::assertions::detail::find_graph_launch(id + 1).has_value());
}

thread_local std::uint64_t launching = 0; // the id this thread is launching now

TEST_F(GpuBackend, GraphSlotsMoveToANewBuffer) {
  // configure() gives a device a new buffer and slot table; a graph captured before replays its
  // slot, so the new table must still name the captured launch (the old one is kept too).
  tdiag::test::stub_stream stream;
  stream.capturing = true;
  const std::uint32_t slot = launch(5, 0, &stream);
  const std::uint32_t normal = launch(6);
  const tdiag::mapped_buffer second = be.allocate_failure_buffer(0, 4096);
  const auto* header = static_cast<const tdiag::assertions::buffer_header*>(second.host);
  const auto* moved = reinterpret_cast<const std::uint64_t*>(header->reserved[0]);
  EXPECT_EQ(moved[slot], 5u | (1ull << 63));
  EXPECT_EQ(moved[slots + slot], table[slots + slot]);
  EXPECT_EQ(moved[normal], 0u) << "ordinary slots start free";
  be.free_failure_buffer(0, second);
}

TEST_F(GpuBackend, ConcurrentLaunchesFindTheirOwnIdInTheSlotTheyCarry) {
  // At the moment of each launch call, the slot its shared memory size carries must name that
  // launch: from four host threads on four streams at once, with slots coming back all the time
  // (the stub's events complete at once).
  std::atomic<int> wrong{0}, unregistered{0};
  stub_gpu_api::on_launch = [&](std::size_t shared) {
    const std::uint64_t slot = shared % 256;
    if (slot == 0)
      ++unregistered;
    else if (table[slot] != launching || table[slots + slot] != shared)
      ++wrong;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      tdiag::test::stub_stream stream;
      for (std::uint64_t i = 1; i <= 500; ++i) {
        tdiag::launch_request r;
        r.kernel = &stream;
        r.stream = &stream;
        r.launch_id = launching = (static_cast<std::uint64_t>(t + 1) << 32) | i;
        (void)be.launch(r);
      }
    });
  for (auto& t : threads)
    t.join();
  stub_gpu_api::on_launch = nullptr;
  EXPECT_EQ(wrong.load(), 0);
  // A thread the scheduler keeps waiting holds its last slots (no event frees them yet), which
  // may leave another thread a launch without a slot now and then; never most of them.
  EXPECT_LT(unregistered.load(), 100);
  EXPECT_EQ(stub_counts.launches.load(), 2000u);
  EXPECT_EQ(stub_counts.capture_queries.load(), 2000u); // user streams: asked at every launch
}

TEST_F(GpuBackend, FailedCallNamesTheRuntimeFunctionAndDevice) {
  try {
    (void)be.create_stream(3);
    FAIL() << "no error for device 3";
  } catch (const tdiag::error& e) {
    ASSERT_EQ(e.report().diagnostics.size(), 1u);
    const auto& d = e.report().diagnostics.front();
    EXPECT_EQ(d.code, tdiag::assertions::codes::cuda_call_failed);
    EXPECT_EQ(d.title, "Stub call failed");
    EXPECT_NE(d.message.find("stubSetDevice failed on device 3: stubError (stub error)"),
              std::string::npos)
        << d.message;
  }
}

} // namespace
