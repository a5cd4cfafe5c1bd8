# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag_find_imported(<target> <NAME> HEADER h LIBRARY l [INCLUDE_HINTS ...] [LIBRARY_HINTS ...]):
# an imported target for a library found by one header and its name, unless <target> exists;
# nothing when either is missing (the caller decides whether that is an error). The results are
# the cache entries TDIAG_<NAME>_INCLUDE_DIR and TDIAG_<NAME>_LIBRARY. Shipped with the package
# config beside the find modules that use it.
include_guard(GLOBAL)
function(tdiag_find_imported target name)
  cmake_parse_arguments(arg "" "HEADER;LIBRARY" "INCLUDE_HINTS;LIBRARY_HINTS" ${ARGN})
  if(TARGET ${target})
    return()
  endif()
  find_path(TDIAG_${name}_INCLUDE_DIR ${arg_HEADER} HINTS ${arg_INCLUDE_HINTS})
  find_library(TDIAG_${name}_LIBRARY ${arg_LIBRARY} HINTS ${arg_LIBRARY_HINTS})
  if(TDIAG_${name}_INCLUDE_DIR AND TDIAG_${name}_LIBRARY)
    add_library(${target} UNKNOWN IMPORTED)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${TDIAG_${name}_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TDIAG_${name}_INCLUDE_DIR}")
  endif()
endfunction()
