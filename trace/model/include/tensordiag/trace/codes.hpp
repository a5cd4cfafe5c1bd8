// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of trace's stable diagnostic codes, TDIAG-TR-NNN: 0NN loading, 1NN importers
// (10N pickle, 11N snapshot, 12N-13N gzip and Kineto), 2NN analyses, 3NN the .tdtrace file and
// exports. The former TDIAG-TRACE-NNN codes are aliases (their numbers collided with TR's).
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::trace::codes {
inline constexpr std::string_view cannot_open = "TDIAG-TR-001";
inline constexpr std::string_view unknown_format = "TDIAG-TR-002";
inline constexpr std::string_view needs_regular_file = "TDIAG-TR-003";
inline constexpr std::string_view no_such_device = "TDIAG-TR-004";
inline constexpr std::string_view bad_window = "TDIAG-TR-005";
inline constexpr std::string_view selection_empty = "TDIAG-TR-006";
inline constexpr std::string_view load_too_large = "TDIAG-TR-007";
inline constexpr std::string_view truncated_pickle = "TDIAG-TR-101";
inline constexpr std::string_view malformed_pickle = "TDIAG-TR-102";
inline constexpr std::string_view bad_memo = "TDIAG-TR-103";
inline constexpr std::string_view pickle_limit = "TDIAG-TR-104";
inline constexpr std::string_view unsupported_pickle = "TDIAG-TR-105";
inline constexpr std::string_view unsafe_pickle = "TDIAG-TR-106";
inline constexpr std::string_view pickle_cycle = "TDIAG-TR-107";
inline constexpr std::string_view not_a_snapshot = "TDIAG-TR-111";
inline constexpr std::string_view malformed_snapshot = "TDIAG-TR-112";
inline constexpr std::string_view snapshot_marker = "TDIAG-TR-113";
inline constexpr std::string_view unknown_block_state = "TDIAG-TR-114";
inline constexpr std::string_view snapshot_too_large = "TDIAG-TR-115";
inline constexpr std::string_view snapshot_out_of_range = "TDIAG-TR-116";
inline constexpr std::string_view snapshot_bad_layout = "TDIAG-TR-117";
inline constexpr std::string_view snapshot_time_order = "TDIAG-TR-118";
inline constexpr std::string_view snapshot_trailing_data = "TDIAG-TR-119";
inline constexpr std::string_view bad_gzip = "TDIAG-TR-120";
inline constexpr std::string_view malformed_kineto = "TDIAG-TR-121";
inline constexpr std::string_view truncated_kineto = "TDIAG-TR-122";
inline constexpr std::string_view no_trace_events = "TDIAG-TR-123";
inline constexpr std::string_view kineto_skipped = "TDIAG-TR-124";
inline constexpr std::string_view kineto_bad_number = "TDIAG-TR-125";
inline constexpr std::string_view kineto_too_large = "TDIAG-TR-126";
inline constexpr std::string_view kineto_text_numbers = "TDIAG-TR-127";
inline constexpr std::string_view kineto_bad_duration = "TDIAG-TR-128";
inline constexpr std::string_view kineto_unread_values = "TDIAG-TR-129";
inline constexpr std::string_view gzip_ratio = "TDIAG-TR-130";
inline constexpr std::string_view summary = "TDIAG-TR-200";
inline constexpr std::string_view memory_peak = "TDIAG-TR-201";
inline constexpr std::string_view kernel_time = "TDIAG-TR-202";
inline constexpr std::string_view stream_activity = "TDIAG-TR-203";
inline constexpr std::string_view lanes_unlisted = "TDIAG-TR-204";
inline constexpr std::string_view growing_site = "TDIAG-TR-210";
inline constexpr std::string_view alive_site = "TDIAG-TR-211";
inline constexpr std::string_view live_at_end = "TDIAG-TR-212";
inline constexpr std::string_view history_disagrees = "TDIAG-TR-213";
inline constexpr std::string_view out_of_memory = "TDIAG-TR-220";
inline constexpr std::string_view no_oom_event = "TDIAG-TR-221";
inline constexpr std::string_view diff = "TDIAG-TR-230";
inline constexpr std::string_view site_grew = "TDIAG-TR-231";
inline constexpr std::string_view site_shrank = "TDIAG-TR-232";
inline constexpr std::string_view kernel_time_changed = "TDIAG-TR-233";
inline constexpr std::string_view op_diff = "TDIAG-TR-234";
inline constexpr std::string_view op_changed = "TDIAG-TR-235";
inline constexpr std::string_view allocator_state = "TDIAG-TR-240";
inline constexpr std::string_view segment = "TDIAG-TR-241";
inline constexpr std::string_view no_trace_file = "TDIAG-TR-260";
inline constexpr std::string_view rank_claimed_twice = "TDIAG-TR-261";
inline constexpr std::string_view no_rank = "TDIAG-TR-262";
inline constexpr std::string_view clocks_disagree = "TDIAG-TR-263";
inline constexpr std::string_view not_tdtrace = "TDIAG-TR-301";
inline constexpr std::string_view unsupported_version = "TDIAG-TR-302";
inline constexpr std::string_view not_closed = "TDIAG-TR-310";
inline constexpr std::string_view corrupted_chunk = "TDIAG-TR-311";
inline constexpr std::string_view chunk_checksum = "TDIAG-TR-312";
inline constexpr std::string_view undecodable_chunk = "TDIAG-TR-313";
inline constexpr std::string_view truncated_chunk = "TDIAG-TR-314";
inline constexpr std::string_view chunks_missing = "TDIAG-TR-315";
inline constexpr std::string_view tdtrace_too_large = "TDIAG-TR-316";
inline constexpr std::string_view cannot_create = "TDIAG-TR-320";
inline constexpr std::string_view cannot_write = "TDIAG-TR-321";
inline constexpr std::string_view cannot_write_chrome = "TDIAG-TR-330";

/// Every code of trace, current codes first.
inline constexpr code_entry table[] = {
    {cannot_open, "cannot open the trace file"},
    {unknown_format, "unknown trace format"},
    {needs_regular_file, "the trace format needs a regular file"},
    {no_such_device, "the trace has no such device (--device)"},
    {bad_window, "bad time window (--window)"},
    {selection_empty, "the selected part of the trace is empty, or its replay inexact"},
    {load_too_large, "the trace needs more memory than is available (an allocation was refused)"},
    {truncated_pickle, "truncated pickle"},
    {malformed_pickle, "malformed pickle"},
    {bad_memo, "malformed pickle: bad memo index"},
    {pickle_limit, "pickle over limit"},
    {unsupported_pickle, "unsupported pickle"},
    {unsafe_pickle, "unsafe pickle: it would import or call code"},
    {pickle_cycle, "unsafe pickle: a reference cycle"},
    {not_a_snapshot, "not a PyTorch memory snapshot"},
    {malformed_snapshot, "malformed memory snapshot"},
    {snapshot_marker, "snapshot action kept as a marker"},
    {unknown_block_state, "unknown block state in a memory snapshot"},
    {snapshot_too_large, "memory snapshot needs more memory than is available"},
    {snapshot_out_of_range, "memory snapshot size or address out of range"},
    {snapshot_bad_layout, "memory snapshot blocks or segments overlap or lie outside"},
    {snapshot_time_order, "memory snapshot times out of order or out of range"},
    {snapshot_trailing_data, "data after the memory snapshot's pickle"},
    {bad_gzip, "bad gzip stream"},
    {malformed_kineto, "malformed Kineto trace"},
    {truncated_kineto, "truncated Kineto trace"},
    {no_trace_events, "not a Chrome/Kineto trace: no traceEvents"},
    {kineto_skipped, "Kineto events skipped"},
    {kineto_bad_number, "Kineto field is not a number"},
    {kineto_too_large, "Kineto trace needs more memory than is available"},
    {kineto_text_numbers, "Kineto numbers written as strings, read as numbers"},
    {kineto_bad_duration, "Kineto complete events with a negative or missing duration"},
    {kineto_unread_values, "Kineto values that are not numbers, left unknown"},
    {gzip_ratio, "gzip inflates past the ratio limit"},
    {summary, "trace summary"},
    {memory_peak, "memory peak"},
    {kernel_time, "kernel time"},
    {stream_activity, "stream activity"},
    {lanes_unlisted, "devices or streams the summary report does not list"},
    {growing_site, "memory grows at this site"},
    {alive_site, "memory alive at the end"},
    {live_at_end, "live allocations at the end"},
    {history_disagrees, "the dumped allocator state and its history disagree"},
    {out_of_memory, "out of memory"},
    {no_oom_event, "no out-of-memory event"},
    {diff, "trace diff"},
    {site_grew, "site grew"},
    {site_shrank, "site shrank"},
    {kernel_time_changed, "kernel time changed"},
    {op_diff, "op diff of two runs"},
    {op_changed, "an op's count or time changed"},
    {allocator_state, "allocator state"},
    {segment, "segment"},
    {no_trace_file, "no trace file matched"},
    {rank_claimed_twice, "two trace files claim one rank"},
    {no_rank, "the rank source gives no rank"},
    {clocks_disagree, "Kineto's base time and the collectives disagree on a rank's clock"},
    {not_tdtrace, "not a .tdtrace file, or a damaged header"},
    {unsupported_version, "unsupported .tdtrace version"},
    {not_closed, "trace file was not closed"},
    {corrupted_chunk, "corrupted chunk skipped"},
    {chunk_checksum, "chunk checksum does not match"},
    {undecodable_chunk, "undecodable chunk"},
    {truncated_chunk, "truncated chunk"},
    {chunks_missing, "chunks missing"},
    {tdtrace_too_large, "trace file needs more memory than is available"},
    {cannot_create, "cannot create trace file"},
    {cannot_write, "cannot write trace file"},
    {cannot_write_chrome, "cannot write Chrome trace"},
    {"TDIAG-TR-100", "cannot read file", cannot_open},
    {"TDIAG-TRACE-001", "cannot open trace file", cannot_open},
    {"TDIAG-TRACE-002", "unknown trace format", unknown_format},
    {"TDIAG-TRACE-101", "not a .tdtrace file", not_tdtrace},
    {"TDIAG-TRACE-102", "unsupported .tdtrace version", unsupported_version},
    {"TDIAG-TRACE-110", "trace file was not closed", not_closed},
    {"TDIAG-TRACE-111", "corrupted chunk", corrupted_chunk},
    {"TDIAG-TRACE-112", "chunk checksum does not match", chunk_checksum},
    {"TDIAG-TRACE-113", "undecodable chunk", undecodable_chunk},
    {"TDIAG-TRACE-114", "truncated chunk", truncated_chunk},
    {"TDIAG-TRACE-115", "chunks missing", chunks_missing},
    {"TDIAG-TRACE-120", "cannot create trace file", cannot_create},
    {"TDIAG-TRACE-121", "cannot write trace file", cannot_write},
    {"TDIAG-TRACE-130", "cannot write Chrome trace", cannot_write_chrome},
};
} // namespace tdiag::trace::codes
