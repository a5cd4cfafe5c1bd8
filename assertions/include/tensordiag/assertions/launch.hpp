// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Launching through tensordiag: `tdiag::launch(kernel, grid, block, smem, stream)(args...)` and
// `TDIAG_LAUNCH(kernel, grid, block, smem, stream, args...)`. The launch is validated against the
// device's limits (an invalid configuration throws tdiag::error with a diagnostic instead of
// failing later), registered with a 64-bit launch id, kernel, configuration, host time and launch
// site stack, and handed to the active back-end, which makes the id visible to device code. The
// kernel's signature does not change. C++17, so .cu and .hip files can include it.
#pragma once

#include <tensordiag/core/backend.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tdiag {
namespace detail {

/// Where a launch was written; every pointer has static storage duration.
struct launch_site_info {
  const char* kernel_name = nullptr; ///< the kernel expression at TDIAG_LAUNCH, else nullptr
  const char* file = nullptr;
  unsigned line = 0;
  const char* function = nullptr;
};

/// Validates, registers and launches (out of line, in the assertions library). Throws
/// tdiag::error for an invalid configuration and tdiag::device_assertion_error when a trapping
/// assertion aborted the launch.
void launch_kernel(launch_request& request, const launch_site_info& site);

template <typename T> extent3 to_extent(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return extent3{static_cast<std::uint32_t>(v), 1, 1};
  } else {
    return extent3{static_cast<std::uint32_t>(v.x), static_cast<std::uint32_t>(v.y),
                   static_cast<std::uint32_t>(v.z)};
  }
}

template <typename... P, std::size_t... I>
void invoke_on_host(const void* kernel, void* const* args, std::index_sequence<I...>) {
  auto* fn = reinterpret_cast<void (*)(P...)>(const_cast<void*>(kernel));
  fn(*static_cast<std::decay_t<P>*>(args[I])...);
}

template <typename... P> void invoke_on_host(const void* kernel, void* const* args) {
  invoke_on_host<P...>(kernel, args, std::index_sequence_for<P...>{});
}

} // namespace detail

/// The launch configuration bound to a kernel; calling it with the kernel's arguments launches.
template <typename... P> class kernel_launcher {
public:
  kernel_launcher(void (*kernel)(P...), launch_request request, detail::launch_site_info site)
      : kernel_(kernel), request_(request), site_(site) {}

  /// Converts the arguments to the kernel's parameter types and launches. Throws as
  /// detail::launch_kernel() does.
  template <typename... A> void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "wrong number of kernel arguments");
    std::tuple<std::decay_t<P>...> converted(std::forward<A>(args)...);
    std::array<void*, sizeof...(P) + 1> pointers{};
    fill(converted, pointers, std::index_sequence_for<P...>{});
    launch_request request = request_;
    request.kernel = reinterpret_cast<const void*>(kernel_);
    request.args = pointers.data();
    request.arg_count = sizeof...(P);
#if defined(__CUDACC__) || defined(__HIPCC__)
    request.host_invoke = nullptr; // a __global__ function cannot be called on the host
#else
    request.host_invoke = &detail::invoke_on_host<P...>;
#endif
    detail::launch_kernel(request, site_);
  }

private:
  template <typename Tuple, std::size_t... I>
  static void fill(Tuple& t, std::array<void*, sizeof...(P) + 1>& out, std::index_sequence<I...>) {
    ((out[I] = static_cast<void*>(&std::get<I>(t))), ...);
  }

  void (*kernel_)(P...);
  launch_request request_;
  detail::launch_site_info site_;
};

#if defined(__GNUC__) || defined(__clang__)
#  define TDIAG_DETAIL_CALLER_FILE __builtin_FILE()
#  define TDIAG_DETAIL_CALLER_LINE __builtin_LINE()
#  define TDIAG_DETAIL_CALLER_FUNCTION __builtin_FUNCTION()
#else
#  define TDIAG_DETAIL_CALLER_FILE nullptr
#  define TDIAG_DETAIL_CALLER_LINE 0
#  define TDIAG_DETAIL_CALLER_FUNCTION nullptr
#endif

/// `tdiag::launch(kernel, grid, block, shared_memory, stream)(args...)`. `grid` and `block` are
/// integers or anything with .x/.y/.z (dim3, tdiag::extent3). The caller's file, line and function
/// are recorded as the launch site.
template <typename... P, typename G, typename B>
kernel_launcher<P...> launch(void (*kernel)(P...), const G& grid, const B& block,
                             std::size_t shared_memory = 0, stream_handle stream = nullptr,
                             const char* file = TDIAG_DETAIL_CALLER_FILE,
                             unsigned line = TDIAG_DETAIL_CALLER_LINE,
                             const char* function = TDIAG_DETAIL_CALLER_FUNCTION) {
  launch_request request;
  request.grid = detail::to_extent(grid);
  request.block = detail::to_extent(block);
  request.shared_memory = shared_memory;
  request.stream = stream;
  return kernel_launcher<P...>(kernel, request, {nullptr, file, line, function});
}

namespace detail {
template <typename... P, typename G, typename B>
kernel_launcher<P...> launch_with_name(void (*kernel)(P...), const char* name, const G& grid,
                                       const B& block, std::size_t shared_memory,
                                       stream_handle stream, const char* file, unsigned line,
                                       const char* function) {
  launch_request request;
  request.grid = to_extent(grid);
  request.block = to_extent(block);
  request.shared_memory = shared_memory;
  request.stream = stream;
  return kernel_launcher<P...>(kernel, request, {name, file, line, function});
}
} // namespace detail

} // namespace tdiag

/// TDIAG_LAUNCH(kernel, grid, block, shared_memory, stream, args...): as tdiag::launch, and the
/// kernel expression is kept as written as the kernel's name. Parenthesise a template kernel with
/// commas: TDIAG_LAUNCH((pair_kernel<float, int>), ...).
#define TDIAG_LAUNCH(kernel, grid, block, shared_memory, stream, ...)                              \
  ::tdiag::detail::launch_with_name(kernel, #kernel, grid, block, shared_memory, stream, __FILE__, \
                                    __LINE__, __func__)(__VA_ARGS__)
