# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Host dependencies, all from Debian packages (scripts/install-deps installs them).
include_guard(GLOBAL)

# TDIAG_PREFER_STATIC_DEPS (the Python wheel, python/build_backend): zlib, zstd and
# Boost.Stacktrace from their static archives where they exist, so the wheel carries them inside
# its binaries instead of beside them (fmt and simdjson have no static archive in Debian: the
# backend bundles their shared libraries).
option(TDIAG_PREFER_STATIC_DEPS "Link zlib, zstd and Boost.Stacktrace statically when possible" OFF)
if(TDIAG_PREFER_STATIC_DEPS)
  set(tdiag_saved_suffixes ${CMAKE_FIND_LIBRARY_SUFFIXES})
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a ${CMAKE_FIND_LIBRARY_SUFFIXES})
  set(ZLIB_USE_STATIC_LIBS ON)
  set(Boost_USE_STATIC_LIBS ON)
endif()

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
if(TDIAG_PREFER_STATIC_DEPS)
  set(CMAKE_FIND_LIBRARY_SUFFIXES ${tdiag_saved_suffixes})
endif()

if(TDIAG_ENABLE_TESTING)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  find_package(benchmark QUIET)
endif()
