// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Not built: the program that wrote memory_minor2.rows.tdtrace and memory_minor2.chunks.tdtrace,
// built against the libraries of f6c8205 (memory_event of 88 bytes, row image minor 2), for
// TdtraceImageRead.RowImagesBeforeMemoryDetailsStillRead:
//   g++ -std=c++20 memory_minor2.cpp <f6c8205's trace_formats, trace_model, core> -o gen
//   ./gen tests/data/trace/memory_minor2
#include <tensordiag/trace/tdtrace_writer.hpp>
#include <tensordiag/trace/trace.hpp>
using namespace tdiag::trace;
int main(int, char** argv) {
  trace t;
  t.metadata.format = "synthetic";
  const auto lane = t.lanes.memory(0), host = t.lanes.memory(-1);
  const auto f = t.stacks.intern_frame({t.strings.intern("forward"), t.strings.intern("m.py"), 7});
  const frame_id frames[] = {f};
  const auto stack = t.stacks.intern_stack(frames);
  const auto tag = t.strings.intern("tracing_pool");
  for (int i = 0; i < 40; ++i) {
    memory_event m;
    m.time = 1000 * i;
    m.lane = i % 4 == 3 ? host : lane;
    m.device = i % 4 == 3 ? -1 : 0;
    m.action = i % 2 == 0 ? memory_action::alloc : memory_action::free_completed;
    m.address = 0x7f0000000000ull + 4096 * (i / 2);
    m.size = 512 * (i / 2 + 1);
    m.stream = i % 3;
    m.stack = i % 5 == 0 ? stack : no_stack;
    if (i % 7 == 0)
      m.pool = 0x7000'0000u + i;
    if (i % 3 == 0) {
      m.total_allocated = 100 * i;
      m.total_reserved = 1000 * i;
    }
    if (i % 6 == 1)
      m.correlation = 50 + i;
    if (i % 8 == 2)
      m.user_metadata = tag;
    if (i == 39) {
      m.action = memory_action::oom;
      m.device_free = 123456789;
      m.address = 0;
    }
    t.memory.push_back(m);
  }
  t.finalize();
  tdtrace_writer_options rows, chunks;
  rows.layout = tdtrace_layout::row_image;
  chunks.layout = tdtrace_layout::chunks;
  write_tdtrace(std::string(argv[1]) + ".rows.tdtrace", t, rows);
  write_tdtrace(std::string(argv[1]) + ".chunks.tdtrace", t, chunks);
}
