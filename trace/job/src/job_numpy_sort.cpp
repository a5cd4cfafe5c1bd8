// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/detail/numpy_sort.hpp>

#include <tuple>
#include <utility>

namespace tdiag::trace::detail {

std::vector<std::size_t> numpy_argsort(std::span<const std::int64_t> v) {
  // NumPy 1.24's aquicksort (npysort/quicksort.cpp): median-of-3 introsort, insertion sort at
  // 16 elements, heapsort past 2*log2(n) levels. Re-written here for its tie order.
  const auto n = static_cast<std::ptrdiff_t>(v.size());
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  if (n < 2)
    return idx;
  auto less = [&](std::size_t a, std::size_t b) { return v[a] < v[b]; };
  // NumPy's aheapsort, 1-based as there: a(k) is first[k - 1].
  auto heapsort = [&](std::size_t* first, std::ptrdiff_t count) {
    auto a = [first](std::ptrdiff_t k) -> std::size_t& { return first[k - 1]; };
    auto sift_down = [&](std::ptrdiff_t i, std::size_t tmp, std::ptrdiff_t size) {
      for (std::ptrdiff_t j = i * 2; j <= size; j += j) {
        if (j < size && less(a(j), a(j + 1)))
          ++j;
        if (!less(tmp, a(j)))
          break;
        a(i) = a(j);
        i = j;
      }
      a(i) = tmp;
    };
    for (std::ptrdiff_t l = count >> 1; l > 0; --l)
      sift_down(l, a(l), count);
    for (; count > 1; --count) {
      const auto tmp = a(count);
      a(count) = a(1);
      sift_down(1, tmp, count - 1);
    }
  };
  int cdepth = 0;
  for (auto m = v.size(); m >>= 1;)
    ++cdepth;
  cdepth *= 2;
  std::size_t* pl = idx.data();
  std::size_t* pr = idx.data() + n - 1;
  std::vector<std::pair<std::size_t*, std::size_t*>> stack;
  std::vector<int> depths;
  for (;;) {
    if (cdepth < 0) {
      heapsort(pl, pr - pl + 1);
    } else {
      while (pr - pl > 15) {
        std::size_t* pm = pl + ((pr - pl) >> 1);
        if (less(*pm, *pl))
          std::swap(*pm, *pl);
        if (less(*pr, *pm))
          std::swap(*pr, *pm);
        if (less(*pm, *pl))
          std::swap(*pm, *pl);
        const auto vp = *pm;
        std::size_t* pi = pl;
        std::size_t* pj = pr - 1;
        std::swap(*pm, *pj);
        for (;;) {
          do
            ++pi;
          while (less(*pi, vp));
          do
            --pj;
          while (less(vp, *pj));
          if (pi >= pj)
            break;
          std::swap(*pi, *pj);
        }
        std::swap(*pi, *(pr - 1));
        if (pi - pl < pr - pi) {
          stack.emplace_back(pi + 1, pr);
          pr = pi - 1;
        } else {
          stack.emplace_back(pl, pi - 1);
          pl = pi + 1;
        }
        depths.push_back(--cdepth);
      }
      for (std::size_t* pi = pl + 1; pi <= pr; ++pi) {
        const auto vi = *pi;
        std::size_t* pj = pi;
        for (std::size_t* pk = pi - 1; pj > pl && less(vi, *pk); --pk)
          *pj-- = *pk;
        *pj = vi;
      }
    }
    if (stack.empty())
      break;
    std::tie(pl, pr) = stack.back();
    stack.pop_back();
    cdepth = depths.back();
    depths.pop_back();
  }
  return idx;
}

} // namespace tdiag::trace::detail
