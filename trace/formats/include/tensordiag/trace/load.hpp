// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One entry point that opens any trace file tensordiag understands, chosen by content (never by
// file name): .tdtrace, and every importer listed in trace/formats/src/load.cpp (PyTorch snapshot
// pickles, Kineto Chrome JSON). Programs may register more formats at run time.
//
// Diagnostic codes: TDIAG-TR-001..009 are this dispatcher's; the .tdtrace reader uses
// TDIAG-TRACE-1xx; importers use their own ranges.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace tdiag::trace {

struct load_options {
  /// Call trace::finalize() before returning (importers may skip it when false).
  bool finalize = true;
  /// Open only part of the trace (trace_select.hpp): applied once, right after the import, so
  /// every reader of the result sees the same part; the result is then finalized.
  trace_selection select;
};

/// A loaded trace plus what went wrong without stopping the load (lost or corrupted chunks,
/// skipped records): warnings the CLI prints and the viewer shows.
struct load_result {
  tdiag::trace::trace trace;
  std::vector<diagnostic> warnings;
};

/// Bytes load_trace() hands to sniffers: the first min(file size, sniff_bytes) of the file.
inline constexpr std::size_t sniff_bytes = 4096;

struct importer {
  std::string name; ///< short format name, e.g. "tdtrace", "kineto-json"
  /// True when `head` (the start of the raw file, maybe gzip-compressed) is this format.
  std::function<bool(std::span<const std::byte> head)> sniff;
  /// Loads the file; throws tdiag::input_error for input it cannot read. May be empty when
  /// load_bytes is set.
  std::function<load_result(const std::filesystem::path& path, const load_options& options)> load;
  /// Loads the whole input already in memory (a pipe, a FIFO, standard input, or any file when
  /// `load` is empty); `source` names it in messages. Empty: the format reads only regular files.
  std::function<load_result(std::span<const std::byte> bytes, std::string_view source,
                            const load_options& options)>
      load_bytes;
};

/// Adds an importer tried after the built-in ones. Thread-safe.
void register_importer(importer imp);

/// The built-in importers (in the order they are tried) followed by the registered ones.
[[nodiscard]] std::vector<importer> importers();

/// Opens `path` (tdiag::input_file: "-" is standard input; a pipe or FIFO is read once, as a
/// stream, within the memory budget) with the first importer whose sniff accepts its content.
/// Throws tdiag::input_error: TDIAG-CORE-004 when the file cannot be read, TDIAG-CORE-006 when it
/// exceeds the memory budget, TDIAG-TR-002 when no importer recognises it, TDIAG-TR-003 when the
/// format needs a regular file and got a stream; TDIAG-TR-004/005 for a selection the trace
/// cannot give (select_part); and whatever the chosen importer throws.
[[nodiscard]] load_result load_trace(const std::filesystem::path& path,
                                     const load_options& options = {});

} // namespace tdiag::trace
