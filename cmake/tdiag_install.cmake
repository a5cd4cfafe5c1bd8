# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# install() rules and the exported CMake package: find_package(tensordiag CONFIG REQUIRED
# [COMPONENTS assertions dtensor_checks trace capture]).
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(TDIAG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tensordiag")
get_property(tdiag_libraries GLOBAL PROPERTY TDIAG_EXPORTED_LIBRARIES)

install(TARGETS ${tdiag_libraries} tensordiag_build_interface EXPORT tensordiag-targets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The allow-listed public headers (tdiag_install_headers), each at its path under include/.
get_property(tdiag_installed_headers GLOBAL PROPERTY TDIAG_INSTALLED_HEADERS)
foreach(entry IN LISTS tdiag_installed_headers)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 base)
  list(GET parts 1 header)
  get_filename_component(dir "${header}" DIRECTORY)
  install(FILES "${base}/${header}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/${dir}")
endforeach()

install(EXPORT tensordiag-targets NAMESPACE tensordiag:: DESTINATION ${TDIAG_INSTALL_CMAKEDIR})
export(EXPORT tensordiag-targets NAMESPACE tensordiag::
       FILE "${PROJECT_BINARY_DIR}/tensordiag-targets.cmake")

get_property(TDIAG_PACKAGE_COMPONENTS GLOBAL PROPERTY TDIAG_PACKAGE_COMPONENTS)
configure_package_config_file(cmake/tensordiag-config.cmake.in
  "${PROJECT_BINARY_DIR}/tensordiag-config.cmake" INSTALL_DESTINATION ${TDIAG_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tensordiag-config-version.cmake"
  COMPATIBILITY SameMinorVersion)
# The find modules the config includes sit beside it, in the build tree as in an install, so
# find_package(tensordiag) works against either (tests/cmake/ checks both).
set(tdiag_package_modules tdiag_imported.cmake tdiag_find_zstd.cmake tdiag_find_nccl.cmake)
foreach(module IN LISTS tdiag_package_modules)
  configure_file("${PROJECT_SOURCE_DIR}/cmake/${module}" "${PROJECT_BINARY_DIR}/${module}" COPYONLY)
  install(FILES "${PROJECT_SOURCE_DIR}/cmake/${module}" DESTINATION ${TDIAG_INSTALL_CMAKEDIR})
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/tensordiag-config.cmake"
              "${PROJECT_BINARY_DIR}/tensordiag-config-version.cmake"
        DESTINATION ${TDIAG_INSTALL_CMAKEDIR})
