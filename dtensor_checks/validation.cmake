# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Numerical strategy validation on a simulated mesh (src/sim), communicators (src/comm) and
# runtime checks (src/runtime), included by CMakeLists.txt after tensordiag_dtensor_checks exists.
# Host sources join the library; CUDA kernels and the NCCL communicator form tensordiag_dtensor_gpu.
file(GLOB tdiag_dtensor_validation_sources CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/src/sim/*.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/src/comm/*.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/src/runtime/*.cpp")
target_sources(tensordiag_dtensor_checks PRIVATE ${tdiag_dtensor_validation_sources})
find_package(Threads REQUIRED)
target_link_libraries(tensordiag_dtensor_checks PUBLIC Threads::Threads)
