// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Writes 1M..100M-event inputs for the scaling benchmarks (trace/synthetic_files.hpp says what
// they hold):
//
//   tdiag_gen_traces snapshot OUT.pickle --events N [--devices D] [--seed S]   (D default 4)
//   tdiag_gen_traces kineto OUT.json --events N [--devices D] [--seed S]       (D default 2)
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace {

int usage() {
  fmt::print(stderr, "usage: tdiag_gen_traces (snapshot|kineto) OUT --events N [--devices D] "
                     "[--seed S]\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3)
    return usage();
  const std::string_view what = argv[1];
  tdiag::trace::synthetic_file_options o;
  o.devices = what == "kineto" ? 2 : 4;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const auto value = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--events")
      o.events = value;
    else if (flag == "--devices")
      o.devices = static_cast<std::uint32_t>(std::clamp<unsigned long long>(value, 1, 64));
    else if (flag == "--seed")
      o.seed = value;
    else
      return usage();
  }
  if (what != "snapshot" && what != "kineto")
    return usage();
  try {
    const auto s = what == "snapshot" ? tdiag::trace::write_synthetic_snapshot(argv[2], o)
                                      : tdiag::trace::write_synthetic_kineto(argv[2], o);
    fmt::print("wrote {} {} on {} device(s), {} bytes, to {}\n", s.events,
               what == "snapshot" ? "trace entries" : "trace events", o.devices, s.bytes, argv[2]);
  } catch (const tdiag::error& e) {
    fmt::print(stderr, "tdiag_gen_traces: {}\n", e.what());
    return 2;
  }
  return 0;
}
