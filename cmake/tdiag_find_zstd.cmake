# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag::zstd, an imported target for libzstd. Also included by the installed package config, so
# consumers of the static libraries resolve it the same way.
include_guard(GLOBAL)
if(NOT TARGET tdiag::zstd)
  find_path(TDIAG_ZSTD_INCLUDE_DIR zstd.h)
  find_library(TDIAG_ZSTD_LIBRARY zstd)
  if(TDIAG_ZSTD_INCLUDE_DIR AND TDIAG_ZSTD_LIBRARY)
    add_library(tdiag::zstd UNKNOWN IMPORTED)
    set_target_properties(tdiag::zstd PROPERTIES IMPORTED_LOCATION "${TDIAG_ZSTD_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TDIAG_ZSTD_INCLUDE_DIR}")
  endif()
endif()
