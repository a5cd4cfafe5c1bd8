// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the .tdtrace reader. Any input must either be refused with
// tdiag::input_error or load (with warnings for damage), with or without checksum checks; a loaded
// trace must survive a re-encode and decode with the same event count, and the Chrome exporter must
// accept it.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/chrome_export.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "formats/src/tdtrace/tdtrace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tdiag::trace;
  const auto bytes = std::as_bytes(std::span(data, size));
  tdtrace_load loaded;
  // Odd sizes skip the CRCs, so mutations also reach zstd and the payload decoder.
  tdtrace_read_options options;
  options.verify_checksums = size % 2 == 0;
  try {
    loaded = read_tdtrace(bytes, "fuzz.tdtrace", options);
  } catch (const tdiag::input_error&) {
    return 0;
  }
  const trace& t = loaded.loaded.trace;
  const auto& info = loaded.info;
  if (info.chunks_loaded != info.chunk_offsets.size() || info.bytes_lost > size || !t.finalized())
    std::abort();
  const std::string payload = detail::encode_chunk(t);
  trace again;
  detail::decode_chunk(std::as_bytes(std::span(payload)), again); // must not throw
  if (again.event_count() != t.event_count())
    std::abort();
  static std::FILE* sink = std::fopen("/dev/null", "wb");
  if (sink)
    (void)write_chrome_trace(t, sink);
  return 0;
}
