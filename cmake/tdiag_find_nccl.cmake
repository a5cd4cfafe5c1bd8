# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag::nccl, an imported target for NCCL. Included by tdiag_gpu.cmake and by the package config
# (build tree and install alike), so consumers of the static tensordiag::dtensor_gpu resolve it
# the same way we do. Needs CUDAToolkit found first (its directories are the hints).
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/tdiag_imported.cmake")
tdiag_find_imported(tdiag::nccl NCCL HEADER nccl.h LIBRARY nccl
  INCLUDE_HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include
  LIBRARY_HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
