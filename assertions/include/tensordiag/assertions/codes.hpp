// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of the assertions library's stable diagnostic codes, TDIAG-DSA-NNN: 0NN failed
// assertions, 1NN runtime and configuration, 2NN back-ends (formerly TDIAG-BE-NNN, now aliases).
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::assertions::codes {
inline constexpr std::string_view assertion_failed = "TDIAG-DSA-001";
inline constexpr std::string_view failed_runtime_disabled = "TDIAG-DSA-002";
inline constexpr std::string_view unreadable_site = "TDIAG-DSA-003";
inline constexpr std::string_view bad_environment = "TDIAG-DSA-100";
inline constexpr std::string_view bad_launch = "TDIAG-DSA-101";
inline constexpr std::string_view too_many_devices = "TDIAG-DSA-110";
inline constexpr std::string_view binding_unavailable = "TDIAG-DSA-111";
inline constexpr std::string_view fiber_stack = "TDIAG-DSA-120";
inline constexpr std::string_view nested_launch = "TDIAG-DSA-121";
inline constexpr std::string_view bad_device_ordinal = "TDIAG-DSA-200";
inline constexpr std::string_view not_runnable_on_cpu = "TDIAG-DSA-201";
inline constexpr std::string_view cuda_call_failed = "TDIAG-DSA-210";
inline constexpr std::string_view hip_call_failed = "TDIAG-DSA-211";

/// Every code of the assertions library, current codes first.
inline constexpr code_entry table[] = {
    {assertion_failed, "device assertion failed"},
    {failed_runtime_disabled, "device assertion failed (runtime disabled)"},
    {unreadable_site, "unreadable assertion site"},
    {bad_environment, "invalid environment setting"},
    {bad_launch, "invalid launch configuration"},
    {too_many_devices, "too many devices"},
    {binding_unavailable, "plain launches cannot be bound"},
    {fiber_stack, "cannot allocate a CPU fiber stack"},
    {nested_launch, "kernel launched from a kernel"},
    {bad_device_ordinal, "invalid device ordinal"},
    {not_runnable_on_cpu, "kernel not runnable on the CPU"},
    {cuda_call_failed, "CUDA call failed"},
    {hip_call_failed, "HIP call failed"},
    {"TDIAG-BE-003", "invalid device ordinal", bad_device_ordinal},
    {"TDIAG-BE-004", "kernel not runnable on the CPU", not_runnable_on_cpu},
    {"TDIAG-BE-010", "CUDA call failed", cuda_call_failed},
    {"TDIAG-BE-011", "HIP call failed", hip_call_failed},
};
} // namespace tdiag::assertions::codes
