# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Host dependencies, all from Debian packages (scripts/install-deps installs them).
include_guard(GLOBAL)

find_package(fmt 9 REQUIRED)
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)

# Boost.Stacktrace: the addr2line back-end symbolizes without extra runtime packages.
find_package(Boost 1.74 REQUIRED COMPONENTS stacktrace_addr2line)
include(tdiag_find_zstd)
if(NOT TARGET tdiag::zstd)
  message(FATAL_ERROR "libzstd not found: install libzstd-dev (scripts/install-deps does it)")
endif()

if(TDIAG_ENABLE_TESTING)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  find_package(benchmark QUIET)
endif()
