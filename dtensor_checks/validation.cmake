# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Numerical strategy validation on a simulated mesh (src/sim), communicators (src/comm) and
# runtime checks (src/runtime), included by CMakeLists.txt after tensordiag_dtensor_checks exists.
# Host sources join that library. With CUDA, tensordiag_dtensor_gpu holds the scan kernels, the
# CUDA scan back-end and (with NCCL) the NCCL communicator; with HIP, hipcc compiles the same
# kernel source as part of the default build.
file(GLOB tdiag_dtensor_validation_sources CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/src/sim/*.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/src/comm/*.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/*.cpp")
# cuda_*.cpp and nccl_*.cpp need the GPU toolchain; they go to tensordiag_dtensor_gpu.
list(FILTER tdiag_dtensor_validation_sources EXCLUDE REGEX "/(cuda|nccl)_[^/]*\\.cpp$")
target_sources(tensordiag_dtensor_checks PRIVATE ${tdiag_dtensor_validation_sources})
find_package(Threads REQUIRED)
target_link_libraries(tensordiag_dtensor_checks PUBLIC Threads::Threads)

set(tdiag_dtensor_gpu_kernels "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/gpu_scan_kernels.cu")

if(TDIAG_WITH_CUDA)
  set(tdiag_dtensor_gpu_sources "${tdiag_dtensor_gpu_kernels}"
                                "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/cuda_scan_backend.cpp")
  if(TDIAG_WITH_NCCL)
    list(APPEND tdiag_dtensor_gpu_sources "${CMAKE_CURRENT_SOURCE_DIR}/src/comm/nccl_communicator.cpp")
  endif()
  tdiag_add_library(dtensor_gpu
    SOURCES ${tdiag_dtensor_gpu_sources}
    PUBLIC_DEPS tensordiag::dtensor_checks CUDA::cudart)
  target_include_directories(tensordiag_dtensor_gpu PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime")
  if(TDIAG_WITH_NCCL)
    # Static library: consumers link NCCL too, through the tdiag::nccl the package config recreates.
    target_link_libraries(tensordiag_dtensor_gpu PRIVATE tdiag::nccl)
    target_compile_definitions(tensordiag_dtensor_gpu PUBLIC TDIAG_DTENSOR_WITH_NCCL=1)
  endif()
endif()

if(TDIAG_WITH_HIP)
  set(tdiag_dtensor_hip_object "${CMAKE_CURRENT_BINARY_DIR}/dtensor_gpu_scan_kernels.hip.o")
  add_custom_command(OUTPUT "${tdiag_dtensor_hip_object}"
    COMMAND ${TDIAG_HIPCC_COMMAND} -x hip -std=c++17 ${TDIAG_HIP_ARCH_FLAGS} -Wall
            -I${CMAKE_CURRENT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/core/include
            -I${PROJECT_BINARY_DIR}/generated/include -I${CMAKE_CURRENT_SOURCE_DIR}/src/runtime
            -c "${tdiag_dtensor_gpu_kernels}" -o "${tdiag_dtensor_hip_object}"
    DEPENDS "${tdiag_dtensor_gpu_kernels}"
            "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/gpu_kernels.hpp"
            "${CMAKE_CURRENT_SOURCE_DIR}/include/tensordiag/dtensor_checks/runtime/element_hash.hpp"
    COMMENT "hipcc dtensor scan kernels (${TDIAG_HIP_ARCHITECTURES})"
    VERBATIM)
  add_custom_target(tdiag_dtensor_gpu_hip ALL DEPENDS "${tdiag_dtensor_hip_object}")
endif()
