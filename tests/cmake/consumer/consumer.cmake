# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# The consumer program shared by the three packaging tests (build tree, install,
# add_subdirectory): it links every component it is given and calls one function of each.
# TDIAG_COMPONENTS is the list of exported components of the build under test; a component this
# file does not know fails the configure, so a new exported library cannot go untested.
set(tdiag_consumer_known core assertions dtensor_checks dtensor_gpu trace trace_fr capture)
if(NOT TDIAG_COMPONENTS)
  message(FATAL_ERROR "TDIAG_COMPONENTS is empty: pass the exported components to test")
endif()
add_executable(consumer "${CMAKE_CURRENT_LIST_DIR}/consumer.cpp")
foreach(component IN LISTS TDIAG_COMPONENTS)
  if(NOT component IN_LIST tdiag_consumer_known)
    message(FATAL_ERROR "tests/cmake/consumer does not exercise component '${component}': add it")
  endif()
  string(TOUPPER "${component}" upper)
  target_link_libraries(consumer PRIVATE tensordiag::${component})
  target_compile_definitions(consumer PRIVATE TDIAG_CONSUMER_HAS_${upper}=1)
endforeach()
