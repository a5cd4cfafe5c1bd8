// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Device-side assertions: TDIAG_ASSERT, TDIAG_ASSERT_EQ/NE/LT/LE/GT/GE, TDIAG_CHECK_INDEX.
// Usable from .cu, .hip and plain C++ (CPU back-end); C++17, no dependency beyond the GPU runtime
// header that the including translation unit already uses.
//
// How a site costs nothing but a compare on the hot path and copies no strings:
// each macro expands, inside the failure branch, to a `static constexpr site_descriptor` holding
// pointers to string literals (__FILE__, the expression, the message, __PRETTY_FUNCTION__). It is
// constant-initialized, so nvcc and hip-clang emit it as one device global with no dynamic
// initialization; the failing thread passes its address and the operand values to one cold,
// non-inlined function. The host copies the descriptor and its strings out of the program image
// only when it builds a report.
#pragma once

#include <tensordiag/assertions/failure_buffer.hpp>
#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/config.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tdiag::assertions::detail {

/// FNV-1a over file, line and expression: a site id that is the same in every build of a file.
TDIAG_HOST_DEVICE constexpr std::uint32_t site_hash(const char* file, std::uint32_t line,
                                                    const char* text) {
  std::uint32_t h = 2166136261u;
  for (const char* p = file; *p != 0; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  for (int i = 0; i < 4; ++i)
    h = (h ^ ((line >> (8 * i)) & 0xffu)) * 16777619u;
  for (const char* p = text; *p != 0; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  return h;
}

// Class types that promote to a number under unary + (HIP's blockIdx.x proxies, bit-fields).
template <typename U, typename = void> struct promotes_to_arithmetic : std::false_type {};
template <typename U>
struct promotes_to_arithmetic<U, std::void_t<decltype(+std::declval<const U&>())>>
    : std::is_arithmetic<std::decay_t<decltype(+std::declval<const U&>())>> {};

/// One operand as 8 raw bytes plus a type tag (floats travel as double bits).
template <typename T>
TDIAG_HOST_DEVICE inline void capture(const T& v, std::uint64_t& bits, value_type& type) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<U, bool>) {
    bits = v ? 1u : 0u;
    type = value_type::boolean;
  } else if constexpr (std::is_pointer_v<U> || std::is_null_pointer_v<U>) {
    bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v));
    type = value_type::pointer;
  } else if constexpr (std::is_enum_v<U>) {
    capture(static_cast<std::underlying_type_t<U>>(v), bits, type);
  } else if constexpr (std::is_floating_point_v<U>) {
    const double d = static_cast<double>(v);
    __builtin_memcpy(&bits, &d, sizeof(d));
    type = sizeof(U) == 4 ? value_type::f32 : value_type::f64;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
    bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    type = sizeof(U) == 1   ? value_type::i8
           : sizeof(U) == 2 ? value_type::i16
           : sizeof(U) == 4 ? value_type::i32
                            : value_type::i64;
  } else if constexpr (std::is_integral_v<U>) {
    bits = static_cast<std::uint64_t>(v);
    type = sizeof(U) == 1   ? value_type::u8
           : sizeof(U) == 2 ? value_type::u16
           : sizeof(U) == 4 ? value_type::u32
                            : value_type::u64;
  } else if constexpr (std::is_class_v<U> && promotes_to_arithmetic<U>::value) {
    capture(+v, bits, type);
  } else {
    static_assert(std::is_arithmetic_v<U>,
                  "tensordiag assertions capture integers, floating point, bool, enums and "
                  "pointers; convert other operands (e.g. __half) to float first");
  }
}

/// True when 0 <= i < n, without signed/unsigned surprises.
template <typename I, typename N>
TDIAG_HOST_DEVICE constexpr bool index_in_range(const I& i, const N& n) {
  if constexpr (std::is_signed_v<I>) {
    if (i < 0)
      return false;
  }
  if constexpr (std::is_signed_v<N>) {
    if (n <= 0)
      return false;
  }
  return static_cast<unsigned long long>(i) < static_cast<unsigned long long>(n);
}

// Only for counting macro operands in an unevaluated context.
template <typename... T> TDIAG_HOST_DEVICE char (&count_operands(const T&...))[sizeof...(T) + 1];
template <typename... T> TDIAG_HOST_DEVICE char type_check(const T&...);

#if TDIAG_HAS_CUDA || TDIAG_HAS_HIP
// One buffer pointer per GPU module (internal linkage: one per translation unit in whole-program
// mode); the host runtime finds every module's copy through the registrar below and sets it when
// a device's buffer is bound. Until then a failing thread records into the module's own
// fallback storage, which needs no host allocation and no call before the first launch, so a
// kernel launched any way (<<<>>>, cudaLaunchKernel, a library's launcher, a graph node) is
// caught from the first launch of the process. See docs/assertions.md, "Finding the buffer".
static __device__ buffer_header* device_buffer = nullptr;
static __device__ module_fallback fallback_storage = {
    {buffer_magic,
     layout_version,
     sizeof(buffer_header),
     module_fallback_records,
     module_fallback_sites,
     0,
     -1,
     0,
     0,
     0,
     0,
     sizeof(buffer_header),
     sizeof(buffer_header) + module_fallback_sites * sizeof(site_counter),
     {0, 0, 0}},
    {},
    {}};
#  if TDIAG_DEVICE_COMPILATION()
[[noreturn]] TDIAG_DEVICE void gpu_fail(buffer_header* h, const site_descriptor* site,
                                        const std::uint64_t* values, const value_type* types,
                                        std::uint32_t count);
#  else
extern "C" int tdiag_detail_register_module(const void* buffer_shadow, const void* fallback_shadow,
                                            const char* file);
[[maybe_unused]] static const int module_registered =
    tdiag_detail_register_module(&device_buffer, &fallback_storage, __FILE__);
#  endif
#endif

/// The CPU back-end's failure path (host code): records into the current launch's buffer and
/// stops the calling fiber; never returns.
[[noreturn]] void cpu_fail(const site_descriptor* site, const std::uint64_t* values,
                           const value_type* types, std::uint32_t count);

/// The single cold function a failing thread calls: captures operands, records, stops. It never
/// returns, and saying so keeps the caller's live values out of call-preserved registers
/// (tests/assertions/register_check.cmake measures it).
template <typename... T>
[[noreturn]] TDIAG_DETAIL_NOINLINE TDIAG_HOST_DEVICE void fail(const site_descriptor* site,
                                                               const T&... v) {
  static_assert(sizeof...(T) <= max_operands, "at most 8 operand values per assertion");
  std::uint64_t values[max_operands + 1] = {};
  value_type types[max_operands + 1] = {};
  std::uint32_t n = 0;
  ((capture(v, values[n], types[n]), ++n), ...);
#if TDIAG_DEVICE_COMPILATION()
  gpu_fail(device_buffer, site, values, types, n);
#else
  cpu_fail(site, values, types, n);
#endif
}

} // namespace tdiag::assertions::detail

#if TDIAG_DEVICE_COMPILATION()
#  include <tensordiag/assertions/detail/gpu_fail.h>
#endif

// --- Macros ------------------------------------------------------------------------------------
#define TDIAG_DETAIL_CAT_IMPL(a, b) a##b
#define TDIAG_DETAIL_CAT(a, b) TDIAG_DETAIL_CAT_IMPL(a, b)
// 1, 2 or M (three to ten arguments): picks the TDIAG_ASSERT form.
#define TDIAG_DETAIL_ARITY(...)                                                                    \
  TDIAG_DETAIL_ARITY_IMPL(__VA_ARGS__, M, M, M, M, M, M, M, M, 2, 1, none)
#define TDIAG_DETAIL_ARITY_IMPL(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, n, ...) n
#define TDIAG_DETAIL_NO_VALUES(...)
#define TDIAG_DETAIL_VALUES(...) , __VA_ARGS__

#if defined(__GNUC__) || defined(__clang__) || defined(__CUDACC__)
#  define TDIAG_DETAIL_FUNCTION __PRETTY_FUNCTION__
#else
#  define TDIAG_DETAIL_FUNCTION __func__
#endif

// The site descriptor and the cold call; `values` is a parenthesised operand list and `pre`
// either TDIAG_DETAIL_VALUES (prepends a comma) or TDIAG_DETAIL_NO_VALUES.
#define TDIAG_DETAIL_FAIL(kind, text, msg, pre, values)                                            \
  do {                                                                                             \
    static constexpr ::tdiag::assertions::site_descriptor tdiag_detail_site = {                    \
        ::tdiag::assertions::layout_version,                                                       \
        ::tdiag::assertions::site_kind::kind,                                                      \
        static_cast<std::uint8_t>(sizeof(::tdiag::assertions::detail::count_operands values) - 1), \
        __LINE__,                                                                                  \
        ::tdiag::assertions::detail::site_hash(__FILE__, __LINE__, text),                          \
        0u,                                                                                        \
        __FILE__,                                                                                  \
        text,                                                                                      \
        msg,                                                                                       \
        TDIAG_DETAIL_FUNCTION,                                                                     \
        sizeof(__FILE__) - 1,                                                                      \
        sizeof(text) - 1,                                                                          \
        sizeof(msg) - 1,                                                                           \
        sizeof(TDIAG_DETAIL_FUNCTION) - 1};                                                        \
    ::tdiag::assertions::detail::fail(&tdiag_detail_site pre values);                              \
  } while (false)

#if defined(TDIAG_DISABLE_DEVICE_ASSERTIONS)
// Zero code; the operands are still type-checked, unevaluated.
#  define TDIAG_ASSERT(...) ((void)sizeof(::tdiag::assertions::detail::type_check(__VA_ARGS__)))
#  define TDIAG_DETAIL_COMPARE(kind, op, a, b)                                                     \
    ((void)sizeof(::tdiag::assertions::detail::type_check((a)op(b))))
#  define TDIAG_CHECK_INDEX(i, n)                                                                  \
    ((void)sizeof(::tdiag::assertions::detail::type_check(                                         \
        ::tdiag::assertions::detail::index_in_range((i), (n)))))
#else
/// TDIAG_ASSERT(cond) or TDIAG_ASSERT(cond, "format with {} fields", values...): up to 8 values
/// (integers, floating point, bool, enums, pointers), formatted on the host with fmt.
#  define TDIAG_ASSERT(...)                                                                        \
    TDIAG_DETAIL_CAT(TDIAG_DETAIL_ASSERT_, TDIAG_DETAIL_ARITY(__VA_ARGS__))                        \
    (#__VA_ARGS__, __VA_ARGS__)
#  define TDIAG_DETAIL_ASSERT_1(text, cond)                                                        \
    do {                                                                                           \
      if (TDIAG_DETAIL_UNLIKELY(!(cond)))                                                          \
        TDIAG_DETAIL_FAIL(assertion, text, "", TDIAG_DETAIL_NO_VALUES, ());                        \
    } while (false)
#  define TDIAG_DETAIL_ASSERT_2(text, cond, msg)                                                   \
    do {                                                                                           \
      if (TDIAG_DETAIL_UNLIKELY(!(cond)))                                                          \
        TDIAG_DETAIL_FAIL(assertion, text, msg, TDIAG_DETAIL_NO_VALUES, ());                       \
    } while (false)
#  define TDIAG_DETAIL_ASSERT_M(text, cond, msg, ...)                                              \
    do {                                                                                           \
      if (TDIAG_DETAIL_UNLIKELY(!(cond)))                                                          \
        TDIAG_DETAIL_FAIL(assertion, text, msg, TDIAG_DETAIL_VALUES, (__VA_ARGS__));               \
    } while (false)
// Both sides are evaluated once and both values are reported.
#  define TDIAG_DETAIL_COMPARE(kind, op, a, b)                                                     \
    do {                                                                                           \
      const auto& tdiag_detail_a = (a);                                                            \
      const auto& tdiag_detail_b = (b);                                                            \
      if (TDIAG_DETAIL_UNLIKELY(!(tdiag_detail_a op tdiag_detail_b)))                              \
        TDIAG_DETAIL_FAIL(kind, #a ", " #b, "", TDIAG_DETAIL_VALUES,                               \
                          (tdiag_detail_a, tdiag_detail_b));                                       \
    } while (false)
/// Fails unless 0 <= i < n; reports both values.
#  define TDIAG_CHECK_INDEX(i, n)                                                                  \
    do {                                                                                           \
      const auto& tdiag_detail_i = (i);                                                            \
      const auto& tdiag_detail_n = (n);                                                            \
      if (TDIAG_DETAIL_UNLIKELY(                                                                   \
              !::tdiag::assertions::detail::index_in_range(tdiag_detail_i, tdiag_detail_n)))       \
        TDIAG_DETAIL_FAIL(index, #i ", " #n, "", TDIAG_DETAIL_VALUES,                              \
                          (tdiag_detail_i, tdiag_detail_n));                                       \
    } while (false)
#endif

#define TDIAG_ASSERT_EQ(a, b) TDIAG_DETAIL_COMPARE(eq, ==, a, b)
#define TDIAG_ASSERT_NE(a, b) TDIAG_DETAIL_COMPARE(ne, !=, a, b)
#define TDIAG_ASSERT_LT(a, b) TDIAG_DETAIL_COMPARE(lt, <, a, b)
#define TDIAG_ASSERT_LE(a, b) TDIAG_DETAIL_COMPARE(le, <=, a, b)
#define TDIAG_ASSERT_GT(a, b) TDIAG_DETAIL_COMPARE(gt, >, a, b)
#define TDIAG_ASSERT_GE(a, b) TDIAG_DETAIL_COMPARE(ge, >=, a, b)
