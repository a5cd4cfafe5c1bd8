// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The event records of a trace, one trivially copyable fixed-width struct per kind. Times are
// signed nanoseconds on the trace's axis (trace_metadata::time_origin_ns says what 0 is).
// Ranged kinds have `start` and `end`; instant kinds have `time`. Every record names its lane.
// Names and stacks are ids into the trace's string_table and stack_table.
//
// Layouts are frozen per file-format version: add fields only at the end of a record, and bump
// the .tdtrace version when you do (docs/trace-format.md).
#pragma once

#include <tensordiag/trace/lane_table.hpp>
#include <tensordiag/trace/stack_table.hpp>
#include <tensordiag/trace/string_table.hpp>

#include <cstdint>
#include <type_traits>

namespace tdiag::trace {

/// A GPU kernel execution (CUPTI CONCURRENT_KERNEL, Kineto "kernel").
struct kernel_event {
  std::int64_t start = 0; ///< ns
  std::int64_t end = 0;   ///< ns
  lane_id lane = 0;       ///< a gpu_stream lane
  string_id name = no_string;
  std::int32_t device = 0;
  std::uint32_t context = 0;
  std::uint64_t stream = 0;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_static = 0;  ///< bytes
  std::uint32_t shared_dynamic = 0; ///< bytes
  std::uint32_t registers = 0;      ///< per thread
  std::uint32_t correlation = 0;    ///< CUPTI correlation id; 0 = none
  std::uint64_t launch_id = 0;      ///< tensordiag assertion-runtime launch id; 0 = none
  friend bool operator==(const kernel_event&, const kernel_event&) = default;
};

enum class copy_kind : std::uint8_t {
  unknown = 0,
  htod = 1,
  dtoh = 2,
  dtod = 3,
  htoh = 4,
  ptop = 5, ///< peer to peer
  memset = 6,
};

/// Memory kind of a copy's source or destination (CUPTI_ACTIVITY_MEMORY_KIND_*).
enum class memory_kind : std::uint8_t {
  unknown = 0,
  pageable = 1,
  pinned = 2,
  device = 3,
  array = 4,
  managed = 5,
  device_static = 6,
  managed_static = 7,
};

/// A memcpy or memset on a GPU stream (CUPTI MEMCPY/MEMSET, Kineto "gpu_memcpy"/"gpu_memset").
struct copy_event {
  std::int64_t start = 0;
  std::int64_t end = 0;
  lane_id lane = 0;           ///< a gpu_stream lane
  string_id name = no_string; ///< e.g. "Memcpy HtoD (Pageable -> Device)"; may be no_string
  std::uint64_t bytes = 0;
  std::int32_t device = 0;
  std::uint32_t context = 0;
  std::uint64_t stream = 0;
  copy_kind kind = copy_kind::unknown;
  memory_kind src_kind = memory_kind::unknown;
  memory_kind dst_kind = memory_kind::unknown; ///< for memset: the memory set
  std::uint8_t reserved0 = 0;
  std::uint32_t correlation = 0;
  std::uint32_t value = 0; ///< memset value
  /// The source's own bandwidth (Kineto's "memory bandwidth (GB/s)", computed from the true ns
  /// duration, which a trace written in whole us no longer has); 0 = not given.
  float bandwidth_gbps = 0;
  friend bool operator==(const copy_event&, const copy_event&) = default;
};

enum class api_kind : std::uint8_t {
  runtime = 0, ///< cudaXxx / hipXxx
  driver = 1,  ///< cuXxx
  cpu_op = 2,  ///< framework operator (aten::mm)
  python = 3,  ///< python_function
  other = 4,
};

/// A host-side range: runtime/driver API call or CPU operator.
struct api_event {
  std::int64_t start = 0;
  std::int64_t end = 0;
  lane_id lane = 0; ///< a host_thread lane
  string_id name = no_string;
  std::int64_t process = 0;
  std::uint64_t thread = 0;
  std::uint32_t correlation = 0; ///< links to kernel/copy events; 0 = none
  stack_id stack = no_stack;
  api_kind kind = api_kind::runtime;
  std::uint8_t reserved0[3] = {0, 0, 0};
  std::uint32_t cbid = 0; ///< CUPTI callback id when known
  friend bool operator==(const api_event&, const api_event&) = default;
};

enum class range_kind : std::uint8_t {
  user_annotation = 0, ///< record_function / NVTX push-pop on a host thread
  gpu_annotation = 1,  ///< annotation projected onto a GPU stream
  step = 2,            ///< ProfilerStep#N
  external = 3,        ///< snapshot external_annotations
  other = 4,
  gpu_sync = 5, ///< the GPU waiting on a stream, event or context (Kineto cuda_sync)
};

/// An annotation range (NVTX, record_function, profiler step).
struct range_event {
  std::int64_t start = 0;
  std::int64_t end = 0;
  lane_id lane = 0;
  string_id name = no_string;
  range_kind kind = range_kind::user_annotation;
  std::uint8_t reserved0[3] = {0, 0, 0};
  std::uint32_t correlation = 0;
  friend bool operator==(const range_event&, const range_event&) = default;
};

/// An instant marker on a lane (NVTX mark, "snapshot" taken, sync point).
struct marker_event {
  std::int64_t time = 0;
  lane_id lane = 0;
  string_id name = no_string;
  string_id category = no_string;
  std::uint32_t reserved0 = 0;
  friend bool operator==(const marker_event&, const marker_event&) = default;
};

enum class memory_action : std::uint8_t {
  alloc = 0,          ///< block handed out (caching allocator) or driver allocation
  free_requested = 1, ///< freed by the user, not reusable yet (stream uses pending)
  free_completed = 2, ///< actually reusable; a plain free (CUPTI release) is this
  segment_alloc = 3,  ///< cudaMalloc of a whole segment
  segment_free = 4,   ///< cudaFree of a whole segment
  segment_map = 5,    ///< expandable segment: pages mapped
  segment_unmap = 6,  ///< expandable segment: pages unmapped
  pool_create = 7,
  pool_trim = 8,
  pool_destroy = 9,
  oom = 10,      ///< failed request: size = requested bytes, device_free set
  snapshot = 11, ///< marker: snapshot taken
};

/// What few memory events carry: an oom's free bytes, a pool, the totals Kineto [memory] and
/// CUPTI pools report, a correlation id, user metadata. A side table of the trace
/// (trace::memory_details), so that the record every allocation and free makes stays small.
struct memory_detail {
  std::uint64_t pool = 0;        ///< pool id / handle; 0 = default pool
  std::uint64_t device_free = 0; ///< oom only: free bytes the driver reported
  /// Totals after the event when the source reports them (Kineto [memory]); -1 = unknown.
  std::int64_t total_allocated = -1;
  std::int64_t total_reserved = -1;
  std::uint32_t correlation = 0;
  string_id user_metadata = no_string;
  friend bool operator==(const memory_detail&, const memory_detail&) = default;
};

/// One allocator event. For the PyTorch caching allocator `address`/`size` are a block's (alloc,
/// free_*) or a segment's (segment_*); for CUPTI MEMORY2 the driver allocation. What only some
/// events carry is in trace::memory_details (trace::detail_of()); memory_record is the event
/// with its detail, flat.
struct memory_event {
  std::int64_t time = 0;
  lane_id lane = 0; ///< a device_memory lane
  memory_action action = memory_action::alloc;
  std::uint8_t reserved0 = 0;
  std::uint16_t reserved1 = 0;
  std::int32_t device = 0; ///< -1 = host
  stack_id stack = no_stack;
  /// 1 + the index of the event's entry in trace::memory_details; 0 = none (every field at its
  /// default).
  std::uint32_t detail = 0;
  std::uint32_t reserved2 = 0;
  std::uint64_t address = 0;
  std::uint64_t size = 0; ///< bytes; for oom the requested size
  std::uint64_t stream = 0;
  friend bool operator==(const memory_event&, const memory_event&) = default;
};

/// A memory event and its detail in one record: the columns a .tdtrace chunk stores (and
/// Python shows) for a memory event, in the layout memory_event had before the detail table.
struct memory_record {
  std::int64_t time = 0;
  lane_id lane = 0;
  memory_action action = memory_action::alloc;
  std::uint8_t reserved0 = 0;
  std::uint16_t reserved1 = 0;
  std::int32_t device = 0;
  stack_id stack = no_stack;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t stream = 0;
  std::uint64_t pool = 0;
  std::uint64_t device_free = 0;
  std::int64_t total_allocated = -1;
  std::int64_t total_reserved = -1;
  std::uint32_t correlation = 0;
  string_id user_metadata = no_string;
  friend bool operator==(const memory_record&, const memory_record&) = default;

  [[nodiscard]] memory_detail detail() const noexcept {
    return {pool, device_free, total_allocated, total_reserved, correlation, user_metadata};
  }
};

/// A failed device assertion recorded by the tensordiag assertion runtime.
struct assertion_event {
  std::int64_t time = 0;
  lane_id lane = 0;              ///< the kernel's gpu_stream lane when known, else a device lane
  string_id site = no_string;    ///< "file.cu:42: index < n"
  string_id message = no_string; ///< formatted message; may be no_string
  std::int32_t device = 0;
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t thread[3] = {0, 0, 0};
  std::uint64_t launch_id = 0;
  friend bool operator==(const assertion_event&, const assertion_event&) = default;
};

enum class flow_kind : std::uint8_t {
  launch = 0, ///< runtime/driver call -> kernel or copy (Kineto ac2g)
  other = 1,
};

/// An arrow from one lane point to another (launch -> kernel). Stored sorted by source time.
struct flow_event {
  std::int64_t time = 0; ///< source time (the launch)
  std::int64_t target_time = 0;
  lane_id lane = 0; ///< source lane
  lane_id target_lane = 0;
  std::uint32_t correlation = 0; ///< the flow id
  flow_kind kind = flow_kind::launch;
  std::uint8_t reserved0[3] = {0, 0, 0};
  friend bool operator==(const flow_event&, const flow_event&) = default;
};

/// A sampled counter value (e.g. "allocated bytes"), constant until the next sample.
struct counter_event {
  std::int64_t time = 0;
  lane_id lane = 0;
  string_id name = no_string;
  double value = 0.0;
  friend bool operator==(const counter_event&, const counter_event&) = default;
};

// The .tdtrace writer copies these as bytes: keep them trivially copyable and padding-free.
static_assert(std::is_trivially_copyable_v<kernel_event> && sizeof(kernel_event) == 88);
static_assert(std::is_trivially_copyable_v<copy_event> && sizeof(copy_event) == 64);
static_assert(std::is_trivially_copyable_v<api_event> && sizeof(api_event) == 56);
static_assert(std::is_trivially_copyable_v<range_event> && sizeof(range_event) == 32);
static_assert(std::is_trivially_copyable_v<marker_event> && sizeof(marker_event) == 24);
static_assert(std::is_trivially_copyable_v<memory_event> && sizeof(memory_event) == 56);
static_assert(std::is_trivially_copyable_v<memory_record> && sizeof(memory_record) == 88);
static_assert(std::is_trivially_copyable_v<memory_detail> && sizeof(memory_detail) == 40);
static_assert(std::is_trivially_copyable_v<assertion_event> && sizeof(assertion_event) == 56);
static_assert(std::is_trivially_copyable_v<flow_event> && sizeof(flow_event) == 32);
static_assert(std::is_trivially_copyable_v<counter_event> && sizeof(counter_event) == 24);

/// The process group and sequence number a communication kernel ran in, as Kineto writes them
/// on its args (PyTorch's record_param_comms: "Process Group Name", "Process Group Ranks",
/// "Group size", "Seq", "Collective name"). A side table of the trace (trace::collectives),
/// keyed by the kernel's correlation id, so that kernel_event keeps its layout.
struct collective_info {
  std::uint32_t correlation = 0;     ///< the kernel's correlation id
  string_id group = no_string;       ///< "Process Group Name" ("0", "1", ...)
  string_id group_ranks = no_string; ///< "Process Group Ranks" as written: "[0, 1]"
  string_id collective = no_string;  ///< "Collective name" ("allreduce")
  std::int64_t group_size = -1;      ///< "Group size"; -1 = not given
  std::int64_t seq = -1;             ///< "Seq": the collective's number in its group; -1 = none
  friend bool operator==(const collective_info&, const collective_info&) = default;
};

/// What a cuda_sync row (range_kind::gpu_sync) waited on, as Kineto names it. A side table of
/// the trace (trace::sync_waits), keyed by the row's index in ranges.all(), so that
/// range_event keeps its layout.
struct sync_wait {
  std::uint32_t range_index = 0;        ///< the gpu_sync row's index in trace::ranges.all()
  std::uint32_t record_correlation = 0; ///< wait_on_cuda_event_record_corr_id; 0 = none
  std::int64_t stream = -1; ///< wait_on_stream: the stream the event was recorded on; -1 = none
  friend bool operator==(const sync_wait&, const sync_wait&) = default;
};
static_assert(std::is_trivially_copyable_v<sync_wait> && sizeof(sync_wait) == 16);

} // namespace tdiag::trace
