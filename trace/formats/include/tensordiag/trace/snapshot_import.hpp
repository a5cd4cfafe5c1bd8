// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Importer for PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot`, a pickle):
// the `segments` at dump time become trace::final_allocator_state, every device's
// `device_traces` become memory events on that device's memory lane (with interned stacks),
// `external_annotations` become ranges and `allocator_settings` metadata properties.
// Times: the trace axis starts at the earliest event (time_origin_ns = its Unix-epoch ns).
//
// Diagnostic codes: TDIAG-TR-001 and 101..107 come from the pickle reader, 111..119 from here.
#pragma once

#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace tdiag::trace {

/// True when `head` starts like a binary pickle (PROTO opcode 0x80 with protocol 2..5).
[[nodiscard]] bool sniff_snapshot(std::span<const std::byte> head) noexcept;

/// Builds a trace from snapshot bytes. Throws tdiag::input_error (with the byte offset) for a
/// malformed, unsafe or non-snapshot pickle. Oddities that do not stop the import (unknown
/// actions, a dropped ring-buffer prefix) come back as warnings.
[[nodiscard]] load_result import_snapshot(std::string_view bytes, std::string_view source_name,
                                          const load_options& options = {},
                                          const pickle_limits& limits = {});
[[nodiscard]] load_result import_snapshot_file(const std::filesystem::path& path,
                                               const load_options& options = {});

/// The importer entry for load_trace() ("torch-snapshot").
[[nodiscard]] importer snapshot_importer();

} // namespace tdiag::trace
