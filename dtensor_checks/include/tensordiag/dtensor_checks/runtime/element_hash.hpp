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

/// The hash of word `w` at position lo + 2^32 * hi, with `hi_mix` = hi * 0x85EBCA77 (constant over
/// 2^32 words, so a kernel computes it once per group of words).
TDIAG_HOST_DEVICE inline std::uint64_t word_hash_parts(std::uint32_t w, std::uint32_t lo,
                                                       std::uint32_t hi, std::uint32_t hi_mix) {
  // a: murmur3's fmix32 of the word keyed by its position; b: a cheaper keyed bijection. Each is
  // a bijection of w for a fixed position.
  std::uint32_t a = w ^ (lo * 0x9E3779B9u) ^ hi_mix;
  a ^= a >> 16;
  a *= 0x85EBCA6Bu;
  a ^= a >> 13;
  a *= 0xC2B2AE35u;
  a ^= a >> 16;
  std::uint32_t b = (w + (lo ^ hi)) * 0x27D4EB2Fu;
  b ^= b >> 15;
  return (static_cast<std::uint64_t>(b) << 32) | a;
}

/// The hash of the 32-bit word `w` at word position `i`.
TDIAG_HOST_DEVICE inline std::uint64_t word_hash(std::uint32_t w, std::uint64_t i) {
  const auto hi = static_cast<std::uint32_t>(i >> 32);
  return word_hash_parts(w, static_cast<std::uint32_t>(i), hi, hi * 0x85EBCA77u);
}

/// What the byte length adds, so buffers of different lengths differ.
TDIAG_HOST_DEVICE inline std::uint64_t length_hash(std::uint64_t bytes) {
  return bytes * 0x9E3779B97F4A7C15ull;
}

/// The word at position `i` of a buffer of `bytes` bytes whose last word may be partial
/// (missing bytes read as zero, little-endian).
TDIAG_HOST_DEVICE inline std::uint32_t tail_word(const unsigned char* p, std::uint64_t i,
                                                 std::uint64_t bytes) {
  std::uint32_t w = 0;
  for (std::uint64_t k = 0; k < 4 && i * 4 + k < bytes; ++k)
    w |= static_cast<std::uint32_t>(p[i * 4 + k]) << (8 * k);
  return w;
}

} // namespace tdiag::dtensor::runtime
