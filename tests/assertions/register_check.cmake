# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Register-count regression check (ctest, no GPU needed): compiles register_kernel.cu with
# `nvcc -arch=sm_90 -Xptxas -v` without and with TDIAG_CHECK_INDEX and fails when the check costs
# more than MAX_EXTRA registers per thread in the kernel. Usage:
#   cmake -DNVCC=... -DSOURCE=... -DINCLUDES="a|b" -DWORK_DIR=... -DMAX_EXTRA=8 -P register_check.cmake
function(registers_of out define)
  set(include_flags "")
  string(REPLACE "|" ";" include_dirs "${INCLUDES}")
  foreach(dir IN LISTS include_dirs)
    list(APPEND include_flags "-I${dir}")
  endforeach()
  execute_process(
    COMMAND "${NVCC}" -arch=sm_90 -std=c++17 -O3 -Xptxas -v ${define} ${include_flags}
            -c "${SOURCE}" -o "${WORK_DIR}/register_kernel${out}.o"
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc failed (${rc}):\n${stdout}\n${stderr}")
  endif()
  # ptxas prints one "Compiling entry function '<mangled>'" block per kernel, then its usage.
  string(REGEX MATCH "register_gather_kernel[^\n]*\n[^\n]*\n?[^\n]*Used ([0-9]+) registers" found
         "${stdout}${stderr}")
  if(NOT found)
    message(FATAL_ERROR "no register count for register_gather_kernel in:\n${stdout}${stderr}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY "${WORK_DIR}")
registers_of(plain "")
registers_of(checked "-DTDIAG_REGISTER_CHECK_WITH_INDEX")
math(EXPR extra "${checked} - ${plain}")
message(STATUS "registers per thread: ${plain} unchecked, ${checked} with TDIAG_CHECK_INDEX "
               "(+${extra}, limit +${MAX_EXTRA})")
if(extra GREATER MAX_EXTRA)
  message(FATAL_ERROR "TDIAG_CHECK_INDEX costs ${extra} registers (limit ${MAX_EXTRA})")
endif()
