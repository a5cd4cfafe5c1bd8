# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Header check (ctest, no GPU needed): every public assertions header, alone in a translation
# unit, compiles as C++17 with each GPU compiler given (nvcc as a .cu, hipcc as a .hip), the
# dialect that nvcc and PyTorch extensions default to. The CPU back-end's kernel headers
# (cpu_device.hpp, cpu_kernel.hpp) refuse GPU translation units by design; they are compiled as
# C++17 host code instead. detail/ is not API (no header tests). Usage:
#   cmake -DHEADER_DIR=<assertions/include> -DINCLUDES="a|b" -DWORK_DIR=... [-DNVCC=...]
#         [-DHIPCC=... -DHIP_ARCH=gfx90a] -DCXX=... -P header_check.cmake
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(include_flags "")
foreach(dir IN LISTS include_dirs)
  list(APPEND include_flags "-I${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
file(GLOB_RECURSE headers RELATIVE "${HEADER_DIR}" "${HEADER_DIR}/tensordiag/*.h"
     "${HEADER_DIR}/tensordiag/*.hpp" "${HEADER_DIR}/tensordiag/*.cuh")
list(FILTER headers EXCLUDE REGEX "/detail/")
list(SORT headers)
if(NOT headers)
  message(FATAL_ERROR "no public headers under ${HEADER_DIR}")
endif()

# Compilers' scratch files (hipcc leaves an empty folder per compile) stay in the work folder.
set(ENV{TMPDIR} "${WORK_DIR}")
set(failures "")
set(checked 0)
function(compile_alone header compiler suffix)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(source "${WORK_DIR}/${stem}${suffix}")
  file(WRITE "${source}" "#include <${header}>\n")
  execute_process(COMMAND ${compiler} -std=c++17 ${ARGN} ${include_flags} -c "${source}"
                          -o "${WORK_DIR}/${stem}${suffix}.o"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  math(EXPR n "${checked} + 1")
  set(checked ${n} PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    set(failures "${failures}\n--- ${header} as C++17 ${suffix} (${compiler}):\n${out}${err}"
        PARENT_SCOPE)
  endif()
endfunction()

foreach(header IN LISTS headers)
  if(header MATCHES "/cpu_(device|kernel)\\.hpp$")
    compile_alone("${header}" "${CXX}" .cpp -x c++ -Wall -Wextra)
    continue()
  endif()
  if(NVCC)
    compile_alone("${header}" "${NVCC}" .cu -x cu -arch=sm_90)
  endif()
  if(HIPCC)
    compile_alone("${header}" "${HIPCC}" .hip -x hip --offload-arch=${HIP_ARCH} -Wall)
  endif()
endforeach()
list(LENGTH headers header_count)
message(STATUS "${header_count} public headers, ${checked} compilations as C++17")
if(failures)
  message(FATAL_ERROR "headers that do not compile alone as C++17:${failures}")
endif()
