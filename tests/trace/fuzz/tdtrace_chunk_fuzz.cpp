// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target for the .tdtrace chunk payload decoder, below the checksums: random bytes
// reach the section, table and column parsers directly (the file reader's CRCs stop almost every
// mutation before it gets there). A payload must decode or throw `malformed`, and a decoded
// chunk must re-encode and decode to the same events.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "formats/src/tdtrace/tdtrace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tdiag::trace;
  trace t;
  try {
    detail::decode_chunk(std::as_bytes(std::span(data, size)), t);
  } catch (const detail::malformed&) {
    if (t.event_count() != 0)
      std::abort(); // a failed chunk must add nothing
    return 0;
  }
  t.finalize();
  const std::string payload = detail::encode_chunk(t);
  trace again;
  detail::decode_chunk(std::as_bytes(std::span(payload)), again);
  again.finalize();
  if (again.event_count() != t.event_count() ||
      again.final_allocator_state.has_value() != t.final_allocator_state.has_value())
    std::abort();
  return 0;
}
