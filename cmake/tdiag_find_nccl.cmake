# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag::nccl, an imported target for NCCL. Included by tdiag_gpu.cmake and by the package config
# (build tree and install alike), so consumers of the static tensordiag::dtensor_gpu resolve it
# the same way we do. Needs CUDAToolkit found first (its directories are the hints).
include_guard(GLOBAL)
if(NOT TARGET tdiag::nccl)
  find_path(TDIAG_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
  find_library(TDIAG_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
  if(TDIAG_NCCL_INCLUDE_DIR AND TDIAG_NCCL_LIBRARY)
    add_library(tdiag::nccl UNKNOWN IMPORTED)
    set_target_properties(tdiag::nccl PROPERTIES IMPORTED_LOCATION "${TDIAG_NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TDIAG_NCCL_INCLUDE_DIR}")
  endif()
endif()
