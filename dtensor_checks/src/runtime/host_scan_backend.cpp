// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/runtime/element_hash.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <cmath>
#include <cstring>

namespace tdiag::dtensor::runtime {
namespace {

template <typename T> nonfinite_counts scan(const T* p, std::int64_t count) {
  nonfinite_counts c;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto v = p[i];
    if (std::isnan(v)) {
      if (c.nan++ == 0)
        c.first_nan = i;
    } else if (std::isinf(v)) {
      (v > 0 ? c.pos_inf : c.neg_inf)++;
      if (c.first_inf < 0)
        c.first_inf = i;
    }
  }
  return c;
}

class host_scan_backend final : public scan_backend {
  std::uint64_t do_hash(const void* data, std::int64_t bytes) override {
    return host_hash(data, bytes);
  }

  std::vector<std::uint64_t> do_block_hashes(const void* data, std::int64_t bytes,
                                             std::int64_t block_bytes) override {
    std::vector<std::uint64_t> out;
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::int64_t at = 0; at < bytes; at += block_bytes) {
      out.push_back(host_hash(p + at, std::min(block_bytes, bytes - at)));
    }
    return out;
  }

  nonfinite_counts do_scan_nonfinite(const void* data, std::int64_t count, dtype type) override {
    if (type == dtype::float32)
      return scan(static_cast<const float*>(data), count);
    if (type == dtype::float64)
      return scan(static_cast<const double*>(data), count);
    return {};
  }

  void do_read(const void* data, std::int64_t offset, std::int64_t bytes, void* host) override {
    if (bytes > 0)
      std::memcpy(host, static_cast<const char*>(data) + offset, static_cast<std::size_t>(bytes));
  }

  [[nodiscard]] std::string do_name() const override { return "host"; }
};

} // namespace

std::uint64_t host_hash(const void* data, std::int64_t bytes) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto n = static_cast<std::uint64_t>(bytes);
  const std::uint64_t words = n / 4;
  std::uint64_t h = length_hash(n);
  for (std::uint64_t i = 0; i < words; ++i) {
    std::uint32_t w;
    std::memcpy(&w, p + i * 4, 4);
    h += word_hash(w, i);
  }
  if (n % 4 != 0)
    h += word_hash(tail_word(p, words, n), words);
  return h;
}

std::unique_ptr<scan_backend> make_host_scan_backend() {
  return std::make_unique<host_scan_backend>();
}

} // namespace tdiag::dtensor::runtime
