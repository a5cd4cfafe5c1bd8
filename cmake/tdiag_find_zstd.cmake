# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag::zstd, an imported target for libzstd. Also included by the package config (build tree
# and install), so consumers of the static libraries resolve it the same way.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/tdiag_imported.cmake")
tdiag_find_imported(tdiag::zstd ZSTD HEADER zstd.h LIBRARY zstd)
