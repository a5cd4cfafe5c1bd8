// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// CUPTI activity records -> trace events. The converter sees one record at a time (the session
// walks CUPTI's buffers with cuptiActivityGetNextRecord) and fills a batch: a small trace with
// its own tables that the .tdtrace writer re-interns. It calls no CUPTI function, so it runs and
// is tested without a GPU, a driver or libcupti, on hand-made record structs.
#pragma once

#include <tensordiag/core/stacktrace.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tdiag::capture {

/// Name of a runtime (driver == false) or driver API function from its CUPTI callback id; ""
/// when unknown. The session passes one over cuptiGetCallbackName; tests pass their own.
using api_name_function = std::function<std::string(bool driver, std::uint32_t cbid)>;

/// One symbolized frame of a host stack.
struct symbol {
  std::string function;
  std::string file;
  std::uint32_t line = 0;
  std::string module; ///< the shared object or executable; may be empty
};
/// Resolves addresses to frames (same order, same count). Default: symbolize_in_process, or
/// symbolize_addresses where that has no line tables.
using symbolizer_function = std::function<std::vector<symbol>(const std::vector<std::uintptr_t>&)>;

/// The default symbolizer: in this process, through libbacktrace (function, file and line from
/// each module's DWARF and symbol tables, read once), else the dynamic symbol table; microseconds
/// an address (symbolizer.cpp). An address nothing names becomes "module+0xoffset".
[[nodiscard]] std::vector<symbol>
symbolize_in_process(const std::vector<std::uintptr_t>& addresses);
/// Whether symbolize_in_process gives file and line (it was built with libbacktrace); when not,
/// the converter's default is symbolize_addresses.
[[nodiscard]] bool in_process_symbolizer_has_lines() noexcept;
/// The reference: Boost.Stacktrace + addr2line (core/stacktrace.hpp), in slices; one addr2line
/// child per module and slice (slow: tens of milliseconds a slice).
[[nodiscard]] std::vector<symbol> symbolize_addresses(const std::vector<std::uintptr_t>& addresses);

/// Host-side facts that arrive outside CUPTI's buffers, keyed by CUPTI correlation id: the
/// launch stack (callback API) and the tensordiag launch id (assertion runtime hook).
struct correlation_info {
  std::uint32_t correlation = 0;
  std::uint64_t launch_id = 0; ///< 0 = none
  raw_stack stack;             ///< size 0 = none
};

/// Counters of what the converter saw, by outcome.
struct convert_counts {
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0; ///< memcpy and memset
  std::uint64_t api_calls = 0;
  std::uint64_t memory = 0;  ///< MEMORY2 and MEMORY_POOL records
  std::uint64_t ignored = 0; ///< records of kinds the converter does not translate
};

struct converter_options {
  /// Subtracted from every CUPTI timestamp: trace time 0 (CUPTI timestamps are CLOCK_REALTIME
  /// nanoseconds on Linux, so this is also the trace's time_origin_ns).
  std::uint64_t time_base_ns = 0;
  api_name_function api_name;     ///< may be empty: API events then get "cbid <n>" names
  symbolizer_function symbolizer; ///< may be empty: the default above
};

/// Turns CUPTI records into batches. Not thread-safe: one converter per consumer thread.
class cupti_converter {
public:
  explicit cupti_converter(converter_options options = {});

  /// Translates one record into the current batch. Returns false (and counts it as ignored)
  /// for kinds it does not translate. The record must be a complete record of its kind.
  bool add(const CUpti_Activity& record);

  /// Remembers host facts for a correlation id: applied to the API call, kernel and memory
  /// records that carry it, in this batch or a later one. Kept until an API record with that
  /// id is converted (then forgotten) or until forget_before() drops it.
  void add_correlation(const correlation_info& info);
  /// Drops host facts for correlation ids below `correlation` (bounded memory when API
  /// records are off).
  void forget_before(std::uint32_t correlation);
  [[nodiscard]] std::size_t pending_correlations() const noexcept { return pending_.size(); }

  /// Adds events built on the host (tracing pool, assertion hooks) to the current batch. Their
  /// raw stacks, when `stack` is non-empty, are symbolized into the batch's stack table.
  void add_memory(trace::memory_record event, const raw_stack& stack, std::string_view tag);
  void add_assertion(trace::assertion_event event, std::string_view site, std::string_view message);
  void add_launch_marker(std::int64_t time, std::int64_t process, std::uint64_t thread,
                         std::string_view kernel_name);
  /// Adds `n` to the batch's dropped_records (the writer sums them into the file's metadata).
  void add_dropped(std::uint64_t n) noexcept { batch_.metadata.dropped_records += n; }

  /// The batch built so far (finalized: no, symbolized: yes); a new empty batch starts.
  [[nodiscard]] trace::trace take_batch();
  /// Events in the current batch.
  [[nodiscard]] std::size_t batch_events() const noexcept { return batch_.event_count(); }
  [[nodiscard]] const convert_counts& counts() const noexcept { return counts_; }
  [[nodiscard]] std::int64_t to_trace_time(std::uint64_t cupti_ns) const noexcept {
    return static_cast<std::int64_t>(cupti_ns - options_.time_base_ns);
  }

private:
  void add_kernel(const CUpti_ActivityKernel10& r);
  void add_memcpy(const CUpti_ActivityMemcpy6& r);
  void add_memset(const CUpti_ActivityMemset4& r);
  void add_api(const CUpti_ActivityAPI& r, bool driver);
  void add_memory2(const CUpti_ActivityMemory4& r);
  void add_memory_pool(const CUpti_ActivityMemoryPool3& r);
  trace::string_id api_name(bool driver, std::uint32_t cbid);
  trace::stack_id intern_stack(const raw_stack& stack);

  converter_options options_;
  trace::trace batch_;
  convert_counts counts_;
  std::unordered_map<std::uint32_t, correlation_info> pending_;
  // Per-batch caches (ids are only valid in batch_).
  std::unordered_map<std::uint64_t, trace::string_id> api_names_;
  // Process-wide: an address is symbolized once per capture, whatever the batch.
  std::unordered_map<std::uintptr_t, symbol> symbols_;
  // Process-wide: CUPTI's kernel names are mangled and shared by a kernel's records; demangled
  // once, as a profiler's trace names kernels (Kineto's, which the trace tools compare with).
  std::unordered_map<const char*, std::string> kernel_names_;
};

/// True for frames of CUPTI, the driver or the capture library (dropped from launch stacks).
[[nodiscard]] bool is_tool_frame(const symbol& s) noexcept;
/// CUPTI's copy kind as tensordiag's.
[[nodiscard]] trace::copy_kind to_copy_kind(std::uint8_t cupti_copy_kind) noexcept;
/// CUPTI's memory kind as tensordiag's (the enumerators match; unknown values map to unknown).
[[nodiscard]] trace::memory_kind to_memory_kind(std::uint32_t cupti_memory_kind) noexcept;
/// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)": the names Nsight and Kineto show.
[[nodiscard]] std::string copy_name(trace::copy_kind kind, trace::memory_kind src,
                                    trace::memory_kind dst);

} // namespace tdiag::capture
