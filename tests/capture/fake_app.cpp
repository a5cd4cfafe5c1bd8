// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A stand-in for a CUDA application under `tdiag capture`, for machines without a GPU: it takes
// its options the way the injected library does (options::from_environment(), so the output
// file and the rank tags are the library's own), and writes a trace of `argv[1]` kernels (3).
#include <tensordiag/capture/capture.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
  try {
    const auto o = tdiag::capture::options::from_environment();
    const int kernels = argc > 1 ? std::atoi(argv[1]) : 3;
    tdiag::trace::trace_metadata meta;
    meta.format = "cupti";
    meta.properties = o.properties;
    meta.properties.emplace_back("capture.pid", std::to_string(getpid()));
    tdiag::trace::trace t;
    const auto name = t.strings.intern("fake_kernel");
    for (int i = 0; i < kernels; ++i) {
      tdiag::trace::kernel_event k;
      k.start = 1000 * (i + 1);
      k.end = k.start + 500;
      k.name = name;
      t.kernels.push_back(k);
    }
    tdiag::trace::tdtrace_writer w(o.output, meta);
    w.append(std::move(t));
    w.close();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_app: %s\n", e.what());
    return 1;
  }
}
