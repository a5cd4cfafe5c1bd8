# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Tests of the simulated mesh (sim_*), the communicators (comm_*) and the runtime checks
# (runtime_*); included by CMakeLists.txt. GPU tests carry the label `gpu` and skip without one.
file(GLOB tdiag_dtensor_validation_tests CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/sim_*_test.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/comm_*_test.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/runtime_*_test.cpp")
foreach(test_source ${tdiag_dtensor_validation_tests})
  get_filename_component(test_name ${test_source} NAME_WE)
  string(REGEX REPLACE "_test$" "" test_name ${test_name})
  set(test_libs tensordiag::dtensor_checks)
  set(test_labels "")
  # runtime_cuda_* and comm_nccl_* need a GPU at run time (and skip without one).
  if(test_name MATCHES "_(cuda|nccl)_")
    if(NOT TARGET tensordiag::dtensor_gpu OR (test_name MATCHES "_nccl_" AND NOT TDIAG_WITH_NCCL))
      continue()
    endif()
    list(APPEND test_libs tensordiag::dtensor_gpu CUDA::cudart)
    set(test_labels gpu)
  endif()
  tdiag_add_gtest(dtensor_checks ${test_name} SOURCES ${test_source} LIBS ${test_libs} LABELS ${test_labels})
endforeach()
