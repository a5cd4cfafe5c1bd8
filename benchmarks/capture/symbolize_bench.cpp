// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Launch-stack symbolization, the work --stacks adds after the run: N distinct return addresses
// in libstdc++'s code (a large C++ module, as libtorch is to a PyTorch run), resolved by the
// capture's in-process symbolizer (libbacktrace, read once) and by the addr2line path it replaced
// (one child per module and 32-address slice), which left 12 s after a 200-step PyTorch run
// (issue 23). Target: the in-process path resolves the run's addresses in well under 1 s.
// Usage: tdiag_bench_capture_symbolize [addresses] (default 2,000; --small = 200).
#include <tensordiag/capture/cupti_convert.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <string>
#include <vector>

namespace {

struct text_segment {
  std::uintptr_t begin = 0, end = 0;
  std::string module;
};

// The executable segment of the first loaded module whose name contains `name`.
text_segment find_text(const char* name) {
  text_segment out;
  struct query {
    const char* name;
    text_segment* out;
  } wanted{name, &out};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& found = *static_cast<query*>(data);
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, found.name) == nullptr)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            found.out->begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            found.out->end = found.out->begin + info->dlpi_phdr[i].p_memsz;
            found.out->module = info->dlpi_name;
            return 1;
          }
        return 0;
      },
      &wanted);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const std::size_t n = small ? 200 : argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  const auto text = find_text("libstdc++");
  if (text.begin == 0 || n == 0) {
    fmt::print("symbolize: libstdc++ is not loaded; skipped\n");
    return 0;
  }
  std::vector<std::uintptr_t> addresses;
  const std::uintptr_t step = (text.end - text.begin) / (n + 1);
  for (std::size_t i = 1; i <= n; ++i)
    addresses.push_back(text.begin + i * step);

  auto t0 = std::chrono::steady_clock::now();
  const auto first = tdiag::capture::symbolize_in_process({addresses.front()});
  const double setup = seconds_since(t0); // libbacktrace reads the modules' tables once
  t0 = std::chrono::steady_clock::now();
  const auto in_process = tdiag::capture::symbolize_in_process(addresses);
  const double in_process_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto reference = tdiag::capture::symbolize_addresses(addresses);
  const double addr2line_s = seconds_since(t0);

  std::size_t same = 0, named = 0, with_line = 0;
  for (std::size_t i = 0; i < n; ++i) {
    named += in_process[i].function.find("+0x") == std::string::npos;
    with_line += in_process[i].line != 0;
    same += in_process[i].function == reference[i].function;
  }
  fmt::print("symbolize {} addresses in {} ({} named, {} with file:line, {} with the same name as "
             "addr2line)\n",
             n, text.module, named, with_line, same);
  fmt::print("  in process (libbacktrace)  {:8.3f} s  {:7.2f} us/address  (+ {:.3f} s once, "
             "reading the modules)\n",
             in_process_s, in_process_s * 1e6 / n, setup);
  fmt::print("  addr2line (the old path)   {:8.3f} s  {:7.2f} us/address  ({:.0f}x slower)\n",
             addr2line_s, addr2line_s * 1e6 / n, addr2line_s / std::max(in_process_s, 1e-9));
  fmt::print("  target: a 200-step PyTorch run's stacks resolved in <= 1 s after it exits\n");
  return first.empty() ? 1 : 0;
}
