# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Warnings and sanitizers for our own targets only: linked PRIVATE, never exported.
include_guard(GLOBAL)

add_library(tensordiag_build_interface INTERFACE)
target_compile_options(tensordiag_build_interface INTERFACE
  # Aggregates here give every member a default, so a brace-init that names fewer is intended.
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                              -Wno-missing-field-initializers>
  $<$<AND:$<BOOL:${TDIAG_ENABLE_WERROR}>,$<COMPILE_LANGUAGE:CXX,C>>:-Werror>)
# Our internal invariants (TDIAG_DETAIL_ASSERT, core/config.hpp) are checked in Debug and
# sanitizer builds, where a broken one is worth a stop; release builds keep them as no-ops.
# (A flag, not $<BOOL:${TDIAG_SANITIZE}>: "address,undefined" would be two arguments to $<BOOL>.)
if(TDIAG_SANITIZE)
  set(tdiag_sanitized 1)
else()
  set(tdiag_sanitized 0)
endif()
target_compile_definitions(tensordiag_build_interface INTERFACE
  $<$<OR:$<CONFIG:Debug>,$<BOOL:${tdiag_sanitized}>>:TDIAG_ENABLE_INTERNAL_ASSERTIONS=1>)

if(TDIAG_SANITIZE)
  set(tdiag_sanitize_flags -fsanitize=${TDIAG_SANITIZE} -fno-omit-frame-pointer
                           -fno-sanitize-recover=all)
  # Sanitize everything we build, test binaries included, but never device code.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:${tdiag_sanitize_flags}>")
  add_link_options(-fsanitize=${TDIAG_SANITIZE})
  tdiag_summary(TDIAG_SANITIZE "${TDIAG_SANITIZE}" "")
endif()

if(TDIAG_ENABLE_FUZZING)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TDIAG_ENABLE_FUZZING needs clang++ (libFuzzer)")
  endif()
  # Coverage in the libraries too, not only in the harness.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=fuzzer-no-link>)
endif()
