# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# Helpers that give every library, test and fuzz target the same shape.
include_guard(GLOBAL)

set_property(GLOBAL PROPERTY TDIAG_EXPORTED_LIBRARIES "")

# tdiag_add_library(<short-name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...] [PART_OF <lib>])
# Creates tensordiag_<short-name>, aliased tensordiag::<short-name>, with public headers in
# <short-name>/include, sources private and the folder's src/ on its private include path (a
# library's internal headers sit beside its sources). Every such target is exported; one made
# PART_OF another library is a room of it (trace's model, formats, ...), not a package component
# of its own: its library's component (tdiag_add_umbrella) brings it.
function(tdiag_add_library name)
  cmake_parse_arguments(arg "" "PART_OF" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target tensordiag_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(tensordiag::${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/src")
    target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${arg_PUBLIC_DEPS}
                                  PRIVATE ${arg_PRIVATE_DEPS} $<BUILD_INTERFACE:tensordiag_build_interface>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME tdiag_${name})
  set_property(GLOBAL APPEND PROPERTY TDIAG_EXPORTED_LIBRARIES ${target})
  if(NOT arg_PART_OF)
    set_property(GLOBAL APPEND PROPERTY TDIAG_PACKAGE_COMPONENTS ${name})
  endif()
endfunction()

# tdiag_add_umbrella(<short-name> PARTS ...): tensordiag::<short-name>, an interface target that
# links the rooms of a library made with tdiag_add_library(... PART_OF <short-name>), exported as
# one package component.
function(tdiag_add_umbrella name)
  cmake_parse_arguments(arg "" "" "PARTS" ${ARGN})
  set(target tensordiag_${name})
  add_library(${target} INTERFACE)
  add_library(tensordiag::${name} ALIAS ${target})
  list(TRANSFORM arg_PARTS PREPEND tensordiag::)
  target_link_libraries(${target} INTERFACE ${arg_PARTS})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  set_property(GLOBAL APPEND PROPERTY TDIAG_EXPORTED_LIBRARIES ${target})
  set_property(GLOBAL APPEND PROPERTY TDIAG_PACKAGE_COMPONENTS ${name})
endfunction()

# tdiag_install_headers(FILES <path relative to this folder's include/>...): the installed
# headers are an allow-list (the public API), not whatever sits in include/: internal headers
# stay usable in the build tree. tests/headers compiles each listed header alone against a copy
# of the list, so a listed header that needs an unlisted one fails the build.
function(tdiag_install_headers)
  cmake_parse_arguments(arg "" "BASE" "FILES" ${ARGN})
  if(NOT arg_BASE)
    set(arg_BASE "${CMAKE_CURRENT_SOURCE_DIR}/include")
  endif()
  foreach(header IN LISTS arg_FILES)
    if(NOT EXISTS "${arg_BASE}/${header}")
      message(FATAL_ERROR "tdiag_install_headers: ${arg_BASE}/${header} does not exist")
    endif()
    set_property(GLOBAL APPEND PROPERTY TDIAG_INSTALLED_HEADERS "${arg_BASE}|${header}")
  endforeach()
endfunction()

# The shared, read-only test data (traces, golden corpus): ../shared beside the checkout unless
# told otherwise. Tests that read it see it as the TDIAG_SHARED_DIR macro and carry the label
# `data`; without it they skip with a reason (tests/CMakeLists.txt says so at configure time).
set(TDIAG_DATA_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "Shared test data (traces/, golden/): tests labelled data read it")

# tdiag_uses_data(<out-var> <sources...>): TRUE when a source names TDIAG_SHARED_DIR.
function(tdiag_uses_data out)
  set(uses FALSE)
  foreach(source IN LISTS ARGN)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(EXISTS "${path}" AND NOT IS_DIRECTORY "${path}")
      file(STRINGS "${path}" hits REGEX "TDIAG_SHARED_DIR" LIMIT_COUNT 1)
      if(hits)
        set(uses TRUE)
      endif()
    endif()
  endforeach()
  set(${out} ${uses} PARENT_SCOPE)
endfunction()

# tdiag_add_gtest(<lib> <file> SOURCES ... [LIBS ...] [LABELS ...] [PROPERTIES ...])
# One executable per tested source file: tensordiag.test.<lib>.<file>, discovered test by test.
# A test whose sources read TDIAG_SHARED_DIR gets it (TDIAG_DATA_DIR) and the label `data`.
function(tdiag_add_gtest lib file)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  set(target tensordiag.test.${lib}.${file})
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE ${arg_LIBS} GTest::gtest GTest::gtest_main
                                          tensordiag_build_interface)
  target_compile_definitions(${target} PRIVATE
    TDIAG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TDIAG_BINARY_DIR="${PROJECT_BINARY_DIR}")
  tdiag_uses_data(uses_data ${arg_SOURCES})
  if(uses_data)
    target_compile_definitions(${target} PRIVATE TDIAG_SHARED_DIR="${TDIAG_DATA_DIR}")
    list(APPEND arg_LABELS data)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  # PRE_TEST discovery: listing tests at build time would run GPU binaries and sanitized
  # binaries during the build.
  # Tests of code that starts threads are built by tensordiag.test.threads, which scripts/test
  # builds and runs under ThreadSanitizer.
  if("${lib}.${file}" IN_LIST TDIAG_THREADED_TESTS)
    if(NOT TARGET tensordiag.test.threads)
      add_custom_target(tensordiag.test.threads)
    endif()
    add_dependencies(tensordiag.test.threads ${target})
    list(APPEND arg_LABELS threads)
  endif()
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST PROPERTIES TIMEOUT ${arg_TIMEOUT})
  # The labels, by a script CTest runs after discovery over the list it made: passed through
  # gtest_discover_tests' PROPERTIES, "a;b" reached the tests as LABELS a and a property named b
  # (every label but the first was lost: `ctest -L threads` matched nothing).
  set(labels ${lib} ${arg_LABELS})
  set(labels_script "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${labels_script}"
       "if(${target}_TESTS)\n  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_script}")
  if(NOT TARGET tensordiag.test.all)
    add_custom_target(tensordiag.test.all)
  endif()
  add_dependencies(tensordiag.test.all ${target})
endfunction()

# tdiag_add_fuzzer(<name> SOURCES ... LIBS ...): a libFuzzer target when TDIAG_ENABLE_FUZZING is
# on (clang); otherwise the same entry point is built as a replay driver that runs the corpus
# files given on its command line, so the fuzz harness always compiles and its seeds run in CTest.
function(tdiag_add_fuzzer name)
  cmake_parse_arguments(arg "" "CORPUS" "SOURCES;LIBS" ${ARGN})
  set(target tdiag_fuzz_${name})
  if(TDIAG_ENABLE_FUZZING)
    add_executable(${target} ${arg_SOURCES})
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(${target} ${arg_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
  endif()
  target_link_libraries(${target} PRIVATE ${arg_LIBS} tensordiag_build_interface)
  if(arg_CORPUS AND NOT TDIAG_ENABLE_FUZZING)
    add_test(NAME tensordiag.fuzz.${name}.seeds COMMAND ${target} ${arg_CORPUS})
    set_tests_properties(tensordiag.fuzz.${name}.seeds PROPERTIES LABELS "fuzz")
  endif()
endfunction()
