# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# GPU toolchains. enable_language() must run at top-level scope, so this file is include()d from
# the root CMakeLists.txt and never from a subdirectory.
include_guard(GLOBAL)
include(CheckLanguage)

# --- CUDA -------------------------------------------------------------------------------------
set(tdiag_cuda_found FALSE)
string(TOUPPER "${TDIAG_WITH_CUDA}" tdiag_cuda_request)
if(NOT tdiag_cuda_request MATCHES "^(OFF|FALSE|NO|0)$")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # sm_75 is the oldest architecture CUDA 13 supports; sm_90 is the H200.
    set(CMAKE_CUDA_ARCHITECTURES 75 90)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 predates C++20 support in its nvcc tables; nvcc >= 12 has -std=c++20. Host
    # headers (report.hpp, ...) are C++20, so .cu files that include them need it.
    if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0
       AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(tdiag_cuda_found TRUE)
  endif()
endif()
tdiag_resolve_auto(TDIAG_WITH_CUDA ${tdiag_cuda_found} "no CUDA compiler (nvcc) found")
if(TDIAG_WITH_CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  string(REPLACE ";" " " tdiag_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
  tdiag_summary("  CUDA" "${CMAKE_CUDA_COMPILER_VERSION}" "architectures ${tdiag_cuda_archs}")
endif()

# --- HIP (Debian's hipcc, ROCm 5.2: compiled through hipcc in custom commands) -----------------
find_program(TDIAG_HIPCC hipcc)
set(TDIAG_HIP_ARCHITECTURES gfx90a gfx1030 CACHE STRING "AMD GPU targets for HIP objects")
set(tdiag_hip_found FALSE)
if(TDIAG_HIPCC)
  set(tdiag_hip_found TRUE)
endif()
tdiag_resolve_auto(TDIAG_WITH_HIP ${tdiag_hip_found} "no hipcc found")
if(TDIAG_WITH_HIP)
  # hipcc's target flags, shared by every HIP compile of the project.
  set(TDIAG_HIP_ARCH_FLAGS "")
  foreach(arch IN LISTS TDIAG_HIP_ARCHITECTURES)
    list(APPEND TDIAG_HIP_ARCH_FLAGS --offload-arch=${arch})
  endforeach()
  # ROCm 5.2's hipcc leaves an empty folder per compile in TMPDIR: kept in the build tree, not
  # in the machine's /tmp.
  set(tdiag_hip_tmp "${PROJECT_BINARY_DIR}/hip-tmp")
  file(MAKE_DIRECTORY "${tdiag_hip_tmp}")
  set(TDIAG_HIPCC_COMMAND "${CMAKE_COMMAND}" -E env "TMPDIR=${tdiag_hip_tmp}" "${TDIAG_HIPCC}")
  string(REPLACE ";" " " tdiag_hip_archs "${TDIAG_HIP_ARCHITECTURES}")
  tdiag_summary("  HIP" "${TDIAG_HIPCC}" "targets ${tdiag_hip_archs}, compile-only here")
endif()

# --- CUPTI and NCCL (need CUDA) ---------------------------------------------------------------
set(tdiag_cupti_found FALSE)
set(tdiag_nccl_found FALSE)
if(TDIAG_WITH_CUDA)
  if(TARGET CUDA::cupti)
    set(tdiag_cupti_found TRUE)
  endif()
  include(tdiag_find_nccl)
  if(TARGET tdiag::nccl)
    set(tdiag_nccl_found TRUE)
  endif()
endif()
tdiag_resolve_auto(TDIAG_WITH_CUPTI ${tdiag_cupti_found} "needs CUDA and CUPTI")
tdiag_resolve_auto(TDIAG_WITH_NCCL ${tdiag_nccl_found} "needs CUDA and NCCL")

# --- Viewer: GLFW + Dear ImGui (Debian libimgui-dev ships the GLFW and OpenGL3 back-ends) ------
find_package(glfw3 3.3 QUIET)
# OpenGL's headers only: every entry point is loaded through GLFW at run time, so tdiag-view
# links no libGL.
find_path(TDIAG_GL_INCLUDE_DIR GL/glext.h)
find_path(TDIAG_IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui)
find_library(TDIAG_IMGUI_LIBRARY imgui)
set(tdiag_viewer_found FALSE)
if(glfw3_FOUND AND TDIAG_GL_INCLUDE_DIR AND TDIAG_IMGUI_INCLUDE_DIR AND TDIAG_IMGUI_LIBRARY)
  set(tdiag_viewer_found TRUE)
endif()
tdiag_resolve_auto(TDIAG_WITH_VIEWER ${tdiag_viewer_found} "needs GLFW, OpenGL headers and Dear ImGui (libimgui-dev)")
