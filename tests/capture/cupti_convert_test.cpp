// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// CUPTI record -> trace event conversion on hand-made CUpti_Activity* structs: no GPU, no
// driver, no libcupti.
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tdiag::capture {
namespace {

constexpr std::uint64_t base = 1'700'000'000'000'000'000ull;

template <typename Record> const CUpti_Activity& as_activity(const Record& r) {
  return reinterpret_cast<const CUpti_Activity&>(r);
}

CUpti_ActivityKernel10 make_kernel(std::uint32_t correlation, std::uint64_t start,
                                   std::uint64_t end, const char* name = "gemm_kernel") {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = base + start;
  k.end = base + end;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 7;
  k.gridX = 128, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.registersPerThread = 40;
  k.correlationId = correlation;
  k.name = name;
  return k;
}

CUpti_ActivityAPI make_api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint32_t correlation,
                           std::uint64_t start, std::uint64_t end) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.cbid = cbid;
  a.start = base + start;
  a.end = base + end;
  a.processId = 4242;
  a.threadId = 99;
  a.correlationId = correlation;
  return a;
}

CUpti_ActivityMemory4 make_memory(CUpti_ActivityMemoryOperationType op, bool pooled,
                                  std::uint64_t address, std::uint64_t bytes, std::uint64_t time) {
  CUpti_ActivityMemory4 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = op;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = 50;
  m.address = address;
  m.bytes = bytes;
  m.timestamp = base + time;
  m.deviceId = 0;
  m.streamId = 13;
  if (pooled) {
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = 0x7000'0000;
    m.memoryPoolConfig.pool.size = 64 << 20;
    m.memoryPoolConfig.utilizedSize = bytes;
  }
  return m;
}

converter_options test_options() {
  converter_options o;
  o.time_base_ns = base;
  o.api_name = [](bool driver, std::uint32_t cbid) -> std::string {
    if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
      return "cudaLaunchKernel";
    return {};
  };
  // Fake symbols: address 0x1000 + i is "f<i>" in a.cpp; 0x9000 lies in libcupti.
  o.symbolizer = [](const std::vector<std::uintptr_t>& addresses) {
    std::vector<symbol> out;
    for (auto a : addresses) {
      if (a >= 0x9000)
        out.push_back({"cupti_internal", "", 0, "/usr/local/cuda/lib/libcupti.so.13"});
      else
        out.push_back({"f" + std::to_string(a - 0x1000), "a.cpp",
                       static_cast<std::uint32_t>(a - 0x1000 + 10), "/app/bin/train"});
    }
    return out;
  };
  return o;
}

// CUPTI names kernels by their mangled symbol; the trace has them demangled, as Kineto's do, and
// keeps names that are not mangled (extern "C" kernels) as they are.
TEST(CuptiConvert, KernelNamesAreDemangled) {
  cupti_converter c(test_options());
  const auto templated = make_kernel(11, 1000, 5000, "_Z12phase_kernelILi3EEvPi");
  const auto plain = make_kernel(12, 6000, 7000, "plain_c_kernel");
  ASSERT_TRUE(c.add(as_activity(templated)));
  ASSERT_TRUE(c.add(as_activity(plain)));
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.name(t.kernels[0].name), "void phase_kernel<3>(int*)");
  EXPECT_EQ(t.name(t.kernels[1].name), "plain_c_kernel");
}

TEST(CuptiConvert, KernelRecordBecomesKernelEvent) {
  cupti_converter c(test_options());
  const auto k = make_kernel(11, 1000, 5000);
  ASSERT_TRUE(c.add(as_activity(k)));
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.kernels.size(), 1u);
  const auto& e = t.kernels[0];
  EXPECT_EQ(e.start, 1000);
  EXPECT_EQ(e.end, 5000);
  EXPECT_EQ(t.name(e.name), "gemm_kernel");
  EXPECT_EQ(e.device, 1);
  EXPECT_EQ(e.context, 3u);
  EXPECT_EQ(e.stream, 7u);
  EXPECT_EQ(e.lane, t.lanes.find_gpu(1, 7));
  EXPECT_EQ(e.grid[0], 128u);
  EXPECT_EQ(e.grid[1], 2u);
  EXPECT_EQ(e.block[0], 256u);
  EXPECT_EQ(e.shared_static, 1024u);
  EXPECT_EQ(e.shared_dynamic, 4096u);
  EXPECT_EQ(e.registers, 40u);
  EXPECT_EQ(e.correlation, 11u);
  EXPECT_EQ(e.launch_id, 0u);
  EXPECT_EQ(c.counts().kernels, 1u);
}

TEST(CuptiConvert, RepeatedKernelNamesAreInternedOnce) {
  cupti_converter c(test_options());
  for (std::uint32_t i = 0; i < 100; ++i) {
    const auto k = make_kernel(i + 1, i * 10, i * 10 + 5, i % 2 ? "odd" : "even");
    c.add(as_activity(k));
  }
  const trace::trace t = c.take_batch();
  EXPECT_EQ(t.kernels.size(), 100u);
  EXPECT_EQ(t.strings.size(), 3u); // "", "even", "odd"
}

TEST(CuptiConvert, MemcpyAndMemsetBecomeCopies) {
  cupti_converter c(test_options());
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = base + 10;
  m.end = base + 90;
  m.streamId = 7;
  m.correlationId = 21;
  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xAB;
  s.bytes = 4096;
  s.start = base + 100;
  s.end = base + 110;
  s.streamId = 7;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.correlationId = 22;
  ASSERT_TRUE(c.add(as_activity(m)));
  ASSERT_TRUE(c.add(as_activity(s)));
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.copies.size(), 2u);
  EXPECT_EQ(t.copies[0].kind, trace::copy_kind::htod);
  EXPECT_EQ(t.copies[0].src_kind, trace::memory_kind::pageable);
  EXPECT_EQ(t.copies[0].dst_kind, trace::memory_kind::device);
  EXPECT_EQ(t.copies[0].bytes, 1u << 20);
  EXPECT_EQ(t.copies[0].start, 10);
  EXPECT_EQ(t.name(t.copies[0].name), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(t.copies[1].kind, trace::copy_kind::memset);
  EXPECT_EQ(t.copies[1].value, 0xABu);
  EXPECT_EQ(t.copies[1].bytes, 4096u);
  EXPECT_EQ(t.name(t.copies[1].name), "Memset (Device)");
  EXPECT_EQ(c.counts().copies, 2u);
}

TEST(CuptiConvert, CopyKindsMapToTraceKinds) {
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH), trace::copy_kind::dtoh);
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), trace::copy_kind::dtod);
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_ATOD), trace::copy_kind::dtod);
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOA), trace::copy_kind::htod);
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), trace::copy_kind::htoh);
  EXPECT_EQ(to_copy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), trace::copy_kind::ptop);
  EXPECT_EQ(to_copy_kind(200), trace::copy_kind::unknown);
  EXPECT_EQ(to_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), trace::memory_kind::pinned);
  EXPECT_EQ(to_memory_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), trace::memory_kind::managed);
  EXPECT_EQ(to_memory_kind(999), trace::memory_kind::unknown);
}

TEST(CuptiConvert, ApiRecordsGetNamesAndHostLanes) {
  cupti_converter c(test_options());
  const auto r = make_api(CUPTI_ACTIVITY_KIND_RUNTIME,
                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 500, 900);
  const auto d =
      make_api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 12, 600, 800);
  ASSERT_TRUE(c.add(as_activity(r)));
  ASSERT_TRUE(c.add(as_activity(d)));
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.api_calls.size(), 2u);
  EXPECT_EQ(t.name(t.api_calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(t.api_calls[0].kind, trace::api_kind::runtime);
  EXPECT_EQ(t.api_calls[0].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_EQ(t.api_calls[0].process, 4242);
  EXPECT_EQ(t.api_calls[0].thread, 99u);
  EXPECT_EQ(t.api_calls[0].lane, t.lanes.find_host(4242, 99));
  EXPECT_EQ(t.api_calls[0].start, 500);
  EXPECT_EQ(t.api_calls[0].end, 900);
  // No name known: a stable placeholder naming domain and id.
  EXPECT_EQ(t.name(t.api_calls[1].name),
            "driver cbid " + std::to_string(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(t.api_calls[1].kind, trace::api_kind::driver);
}

TEST(CuptiConvert, PoolAllocationsAreBlocksAndPlainOnesSegments) {
  cupti_converter c(test_options());
  const auto a =
      make_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, true, 0xA000, 512, 10);
  const auto f = make_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, true, 0xA000, 512, 20);
  const auto s =
      make_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, false, 0xB000, 4096, 30);
  const auto sf =
      make_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, false, 0xB000, 4096, 40);
  for (const auto* r : {&a, &f, &s, &sf})
    ASSERT_TRUE(c.add(as_activity(*r)));
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.memory.size(), 4u);
  EXPECT_EQ(t.memory[0].action, trace::memory_action::alloc);
  EXPECT_EQ(t.detail_of(t.memory[0]).pool, 0x7000'0000u);
  EXPECT_EQ(t.memory[0].size, 512u);
  EXPECT_EQ(t.memory[0].address, 0xA000u);
  EXPECT_EQ(t.memory[0].stream, 13u);
  EXPECT_EQ(t.memory[0].time, 10);
  EXPECT_EQ(t.detail_of(t.memory[0]).total_reserved, 64 << 20);
  EXPECT_EQ(t.memory[0].lane, t.lanes.find_memory(0));
  EXPECT_EQ(t.memory[1].action, trace::memory_action::free_completed);
  EXPECT_EQ(t.memory[2].action, trace::memory_action::segment_alloc);
  EXPECT_EQ(t.detail_of(t.memory[2]).pool, 0u);
  EXPECT_EQ(t.detail_of(t.memory[2]).total_allocated, -1);
  EXPECT_EQ(t.memory[3].action, trace::memory_action::segment_free);
}

TEST(CuptiConvert, MemoryPoolRecordsBecomePoolEvents) {
  cupti_converter c(test_options());
  CUpti_ActivityMemoryPool3 p;
  std::memset(&p, 0, sizeof(p));
  p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p.address = 0x7000'0000;
  p.size = 32 << 20;
  p.utilizedSize = 1 << 20;
  p.deviceId = 2;
  p.timestamp = base + 5;
  for (auto op : {CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED,
                  CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED,
                  CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED}) {
    p.memoryPoolOperationType = op;
    ASSERT_TRUE(c.add(as_activity(p)));
  }
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.memory.size(), 3u);
  EXPECT_EQ(t.memory[0].action, trace::memory_action::pool_create);
  EXPECT_EQ(t.memory[1].action, trace::memory_action::pool_trim);
  EXPECT_EQ(t.memory[2].action, trace::memory_action::pool_destroy);
  EXPECT_EQ(t.detail_of(t.memory[0]).pool, 0x7000'0000u);
  EXPECT_EQ(t.memory[0].device, 2);
  EXPECT_EQ(t.detail_of(t.memory[0]).total_reserved, 32 << 20);
  EXPECT_EQ(t.detail_of(t.memory[0]).total_allocated, 1 << 20);
}

TEST(CuptiConvert, CorrelationAttachesStackAndLaunchId) {
  cupti_converter c(test_options());
  correlation_info info;
  info.correlation = 11;
  info.launch_id = 77;
  // Innermost first: two tool frames (libcupti), then the application's f1 <- f2 <- f3.
  for (std::uintptr_t a : {0x9000u, 0x9001u, 0x1001u, 0x1002u, 0x1003u})
    info.stack.frames[info.stack.size++] = a;
  c.add_correlation(info);
  const auto api = make_api(CUPTI_ACTIVITY_KIND_RUNTIME,
                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 100, 200);
  ASSERT_TRUE(c.add(as_activity(api)));
  const trace::trace first = c.take_batch();
  ASSERT_EQ(first.api_calls.size(), 1u);
  const auto frames = first.stacks.stack(first.api_calls[0].stack);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(first.name(first.stacks.frame_at(frames[0]).function), "f1");
  EXPECT_EQ(first.name(first.stacks.frame_at(frames[0]).file), "a.cpp");
  EXPECT_EQ(first.stacks.frame_at(frames[0]).line, 11u);
  EXPECT_EQ(first.name(first.stacks.frame_at(frames[2]).function), "f3");
  // The kernel comes in a later buffer: the launch id is still known.
  const auto k = make_kernel(11, 300, 400);
  ASSERT_TRUE(c.add(as_activity(k)));
  const trace::trace second = c.take_batch();
  ASSERT_EQ(second.kernels.size(), 1u);
  EXPECT_EQ(second.kernels[0].launch_id, 77u);
  c.forget_before(12);
  EXPECT_EQ(c.pending_correlations(), 0u);
}

TEST(CuptiConvert, StackWithoutLaunchIdIsForgottenAfterItsApiRecord) {
  cupti_converter c(test_options());
  correlation_info info;
  info.correlation = 5;
  info.stack.frames[info.stack.size++] = 0x1004;
  c.add_correlation(info);
  EXPECT_EQ(c.pending_correlations(), 1u);
  c.add(as_activity(make_api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 5, 0, 1)));
  EXPECT_EQ(c.pending_correlations(), 0u);
}

TEST(CuptiConvert, UnknownKindsAreCountedAsIgnored) {
  cupti_converter c(test_options());
  CUpti_ActivityAPI other;
  std::memset(&other, 0, sizeof(other));
  other.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  EXPECT_FALSE(c.add(as_activity(other)));
  EXPECT_EQ(c.counts().ignored, 1u);
  EXPECT_EQ(c.batch_events(), 0u);
}

TEST(CuptiConvert, HostEventsJoinTheBatch) {
  cupti_converter c(test_options());
  trace::memory_record m;
  m.time = 50;
  m.device = 0;
  m.address = 0xC000;
  m.size = 256;
  m.pool = 9;
  raw_stack stack;
  stack.frames[stack.size++] = 0x1007;
  c.add_memory(m, stack, "tracing_pool");
  trace::assertion_event a;
  a.time = 60;
  a.device = 0;
  a.launch_id = 3;
  a.block[0] = 4;
  a.thread[0] = 5;
  c.add_assertion(a, "k.cu:42: i < n", "i = 7");
  c.add_launch_marker(40, 4242, 99, "my_kernel");
  c.add_dropped(7);
  const trace::trace t = c.take_batch();
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.name(t.detail_of(t.memory[0]).user_metadata), "tracing_pool");
  EXPECT_NE(t.memory[0].stack, trace::no_stack);
  ASSERT_EQ(t.assertions.size(), 1u);
  EXPECT_EQ(t.name(t.assertions[0].site), "k.cu:42: i < n");
  EXPECT_EQ(t.name(t.assertions[0].message), "i = 7");
  EXPECT_EQ(t.assertions[0].launch_id, 3u);
  ASSERT_EQ(t.markers.size(), 1u);
  EXPECT_EQ(t.name(t.markers[0].name), "my_kernel");
  EXPECT_EQ(t.name(t.markers[0].category), "tdiag.launch");
  EXPECT_EQ(t.metadata.dropped_records, 7u);
}

TEST(CuptiConvert, BatchesRoundTripThroughTheWriter) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tdiag_capture_convert_" + std::to_string(getpid()) + ".tdtrace");
  {
    trace::tdtrace_writer writer(path, {"", "cupti", 123, 0, {}});
    cupti_converter c(test_options());
    for (int batch = 0; batch < 3; ++batch) {
      for (std::uint32_t i = 0; i < 1000; ++i) {
        const std::uint32_t id = batch * 1000 + i + 1;
        c.add(as_activity(make_kernel(id, id * 100, id * 100 + 50)));
        c.add(as_activity(make_api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, id,
                                   id * 100 - 20, id * 100 - 10)));
      }
      c.add_dropped(2);
      ASSERT_TRUE(writer.append(c.take_batch()));
    }
    writer.close();
  }
  const auto back = trace::read_tdtrace(path);
  std::filesystem::remove(path);
  const trace::trace& t = back.loaded.trace;
  EXPECT_EQ(t.kernels.size(), 3000u);
  EXPECT_EQ(t.api_calls.size(), 3000u);
  EXPECT_EQ(t.metadata.dropped_records, 6u);
  EXPECT_EQ(t.metadata.time_origin_ns, 123);
  const auto lane = t.lanes.find_gpu(1, 7);
  ASSERT_NE(lane, trace::no_lane);
  EXPECT_EQ(t.kernels.lane(lane).size(), 3000u);
  EXPECT_EQ(t.name(t.kernels.lane(lane)[0].name), "gemm_kernel");
}

TEST(CuptiConvert, ToolFramesAreRecognised) {
  EXPECT_TRUE(is_tool_frame({"x", "", 0, "/usr/local/cuda/lib/libcupti.so.13"}));
  EXPECT_TRUE(is_tool_frame({"x", "", 0, "/lib/x86_64-linux-gnu/libcuda.so.1"}));
  EXPECT_TRUE(is_tool_frame({"x", "", 0, "/opt/tdiag/lib/libtdiag_capture.so"}));
  EXPECT_TRUE(is_tool_frame({"cudaLaunchKernel", "", 0, "/app/train"}));
  EXPECT_FALSE(is_tool_frame({"main", "main.cpp", 3, "/app/train"}));
  EXPECT_FALSE(is_tool_frame({"x", "", 0, "/usr/lib/libcudnn.so.9"}));
}

int symbolize_me() {
  return 42;
}

TEST(CuptiConvert, SymbolizesRealAddresses) {
  if (std::system("command -v addr2line >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "addr2line (binutils) is not installed";
  // Stack addresses are return addresses: the symbolizer looks one byte before them.
  const auto address = reinterpret_cast<std::uintptr_t>(&symbolize_me) + 1;
  const auto symbols = symbolize_addresses({address});
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_NE(symbols[0].function.find("symbolize_me"), std::string::npos) << symbols[0].function;
}

TEST(CuptiConvert, SymbolizesInProcessWithFileAndLine) {
  const auto address = reinterpret_cast<std::uintptr_t>(&symbolize_me) + 1;
  const auto symbols = symbolize_in_process({address, address});
  ASSERT_EQ(symbols.size(), 2u);
  EXPECT_NE(symbols[0].function.find("symbolize_me"), std::string::npos) << symbols[0].function;
  EXPECT_FALSE(symbols[0].module.empty());
  // This test is built with debug information (RelWithDebInfo); the symbol table alone still
  // names the function.
#if TDIAG_CAPTURE_TEST_HAS_DEBUG_INFO
  EXPECT_NE(symbols[0].file.find("cupti_convert_test.cpp"), std::string::npos) << symbols[0].file;
  EXPECT_GT(symbols[0].line, 0u);
#endif
  EXPECT_EQ(symbols[1].function, symbols[0].function);
  // A C library function: named from its module's symbols, demangled where C++.
  const auto libc = symbolize_in_process({reinterpret_cast<std::uintptr_t>(&std::abort) + 1});
  EXPECT_NE(libc[0].function.find("abort"), std::string::npos) << libc[0].function;
  EXPECT_NE(libc[0].module.find("libc"), std::string::npos) << libc[0].module;
}

TEST(CuptiConvert, UnknownAddressesKeepTheirValue) {
  const auto s = symbolize_in_process({0x10});
  EXPECT_EQ(s[0].function, "0x10");
  EXPECT_TRUE(s[0].file.empty());
}

} // namespace
} // namespace tdiag::capture
