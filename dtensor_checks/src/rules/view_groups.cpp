// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "view_groups.hpp"

#include <limits>

namespace tdiag::dtensor::detail {

dim_map view_groups(const shape_t& from, const shape_t& to) {
  dim_map out;
  std::size_t fi = 0;
  std::size_t ti = 0;
  const auto fn = from.size();
  const auto tn = to.size();
  while (fi < fn || ti < tn) {
    std::vector<std::int64_t> from_group;
    shape_t to_group;
    std::int64_t f = 1;
    std::int64_t t = 1;
    if (fi < fn) {
      f = from[fi];
      from_group.push_back(static_cast<std::int64_t>(fi++));
    }
    if (ti < tn) {
      t = to[ti];
      to_group.push_back(to[ti++]);
    }
    if (f == 1 && t != 1) {
      // A size-1 input dim meets a real output dim: the input dim is dropped.
      --ti;
      to_group.clear();
    } else if (f != 1 && t == 1) {
      // A new size-1 output dim.
      --fi;
      from_group.clear();
    } else {
      while (f != t) {
        if (f < t) {
          if (fi >= fn)
            break; // numel mismatch; the caller checked it
          // Saturating: only a zero-size view reaches here with sizes whose product overflows.
          if (__builtin_mul_overflow(f, from[fi], &f))
            f = std::numeric_limits<std::int64_t>::max();
          from_group.push_back(static_cast<std::int64_t>(fi++));
        } else {
          if (ti >= tn)
            break;
          if (__builtin_mul_overflow(t, to[ti], &t))
            t = std::numeric_limits<std::int64_t>::max();
          to_group.push_back(to[ti++]);
        }
      }
    }
    if (to_group.empty())
      continue;
    // Flatten.new over the input dims of the group (PyTorch keeps size-1 dims here and only
    // leaves out empty ones).
    std::vector<std::int64_t> flat;
    for (auto d : from_group) {
      if (from[static_cast<std::size_t>(d)] >= 1)
        flat.push_back(d);
    }
    if (to_group.size() == 1) {
      dim_source s;
      if (flat.empty())
        s.kind = dim_kind::singleton;
      else if (flat.size() == 1)
        s.kind = dim_kind::input_dim;
      else
        s.kind = dim_kind::flatten;
      s.dims = flat;
      out.push_back(std::move(s));
      continue;
    }
    // Split.new: size-1 pieces are singletons; the rest split the group without them.
    shape_t pieces;
    for (auto g : to_group) {
      if (g != 1)
        pieces.push_back(g);
    }
    std::size_t piece = 0;
    for (auto g : to_group) {
      dim_source s;
      if (g == 1) {
        s.kind = dim_kind::singleton;
      } else {
        s.kind = dim_kind::split;
        s.dims = flat;
        s.group = pieces;
        s.split_id = piece++;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

} // namespace tdiag::dtensor::detail
