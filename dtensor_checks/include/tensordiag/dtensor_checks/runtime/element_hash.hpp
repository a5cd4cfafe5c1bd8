// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The replica hash shared by host and device code (C++17, no dependencies): the sum modulo 2^64
// of a per-word hash of every 32-bit word and its position, plus the byte length. A sum can be
// computed in any order and split across threads and blocks. Each 32-bit half of a word's hash is
// a bijection of the word for a fixed position, so two buffers that differ in a single word never
// hash equal.
#pragma once

#include <tensordiag/core/config.hpp>

#include <cstdint>

namespace tdiag::dtensor::runtime {

/// The hash of the 32-bit word `w` at word position `i`.
TDIAG_HOST_DEVICE inline std::uint64_t word_hash(std::uint32_t w, std::uint64_t i) {
  const auto lo = static_cast<std::uint32_t>(i);
  const auto hi = static_cast<std::uint32_t>(i >> 32);
  std::uint32_t a = w ^ (lo * 0x9E3779B9u) ^ (hi * 0x85EBCA77u);
  a ^= a >> 16;
  a *= 0x85EBCA6Bu;
  a ^= a >> 13;
  a *= 0xC2B2AE35u;
  a ^= a >> 16;
  std::uint32_t b = w * 0x27D4EB2Fu + (lo * 0x165667B1u ^ hi);
  b ^= b >> 15;
  b *= 0x2C1B3C6Du;
  b ^= b >> 12;
  return (static_cast<std::uint64_t>(b) << 32) | a;
}

/// What the byte length adds, so buffers of different lengths differ.
TDIAG_HOST_DEVICE inline std::uint64_t length_hash(std::uint64_t bytes) { return bytes * 0x9E3779B97F4A7C15ull; }

/// The word at position `i` of a buffer of `bytes` bytes whose last word may be partial
/// (missing bytes read as zero, little-endian).
TDIAG_HOST_DEVICE inline std::uint32_t tail_word(const unsigned char* p, std::uint64_t i, std::uint64_t bytes) {
  std::uint32_t w = 0;
  for (std::uint64_t k = 0; k < 4 && i * 4 + k < bytes; ++k) w |= static_cast<std::uint32_t>(p[i * 4 + k]) << (8 * k);
  return w;
}

} // namespace tdiag::dtensor::runtime
