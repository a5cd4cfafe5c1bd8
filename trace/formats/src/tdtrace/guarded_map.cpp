// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// guarded_map (guarded_map.hpp): the mappings live in a fixed table the SIGBUS handler reads
// without locks; the handler maps anonymous zero pages over the rest of a mapping it finds the
// fault in. A fault outside them goes to the handler installed before ours, called directly
// (ours stays installed); where that was the default or SIG_IGN, the default is put back and
// the repeated fault ends the process as it would have without us.
#include "guarded_map.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tdiag::trace::detail {
namespace {

struct slot {
  std::atomic<std::uintptr_t> begin{0}; ///< 0: free
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> changed{false};
};

constexpr std::size_t slot_count = 256;
std::array<slot, slot_count> slots;
std::uintptr_t page_size = 4096;
struct sigaction previous {};
std::once_flag installed;

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (auto& s : slots) {
    const auto begin = s.begin.load(std::memory_order_acquire);
    const auto end = s.end.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= end)
      continue;
    const auto page = address & ~(page_size - 1);
    void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                         MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
    if (zeros != MAP_FAILED) {
      s.changed.store(true, std::memory_order_release);
      return; // the faulting read runs again, on zeros
    }
    break;
  }
  // Not ours (or no zero pages): the handler before ours takes the repeated fault.
  // Ours stays installed, so later mappings stay guarded; only the default (or an ignored
  // SIGBUS, which would fault forever) is put back, for the repeated fault to end the process.
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(signal, info, context);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);
}

void install() {
  page_size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction ours {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  ::sigaction(SIGBUS, &ours, &previous);
}

} // namespace

std::int64_t size_now(int fd) noexcept {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::int64_t>(st.st_size) : -1;
}

std::shared_ptr<const guarded_map> guarded_map::map(int fd, std::size_t size, std::string& why) {
  std::call_once(installed, install);
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) {
    why = fmt::format("its rows cannot be mapped: {}", std::strerror(errno));
    return nullptr;
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  for (std::size_t i = 0; i < slot_count; ++i) {
    std::uintptr_t free = 0;
    if (!slots[i].begin.compare_exchange_strong(free, begin, std::memory_order_acq_rel))
      continue;
    slots[i].changed.store(false, std::memory_order_relaxed);
    slots[i].end.store(begin + size, std::memory_order_release);
    std::shared_ptr<const guarded_map> map(new guarded_map(base, size, i));
    // Truncated before the mapping was registered: refused before a page is touched.
    if (size_now(fd) != static_cast<std::int64_t>(size)) {
      why = "it changed size while being read";
      return nullptr;
    }
    return map;
  }
  ::munmap(base, size);
  why = fmt::format("more than {} row images are mapped at once", slot_count);
  return nullptr;
}

guarded_map::guarded_map(void* base, std::size_t size, std::size_t slot) noexcept
    : base_(base), size_(size), slot_(slot) {}

guarded_map::~guarded_map() {
  auto& s = slots[slot_];
  s.end.store(0, std::memory_order_release);
  ::munmap(base_, size_);
  s.begin.store(0, std::memory_order_release);
}

std::span<const std::byte> guarded_map::bytes() const noexcept {
  return {static_cast<const std::byte*>(base_), size_};
}

bool guarded_map::changed() const noexcept {
  return slots[slot_].changed.load(std::memory_order_acquire);
}

} // namespace tdiag::trace::detail
