# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# cmake -DSTAGING=<dir> -DMAX_HEADERS=<n> -P check_surface.cmake: the installed headers (staged
# by tests/headers) number at most MAX_HEADERS, and include only each other, fmt, the C and C++
# standard libraries, and the GPU runtimes' own headers.
file(GLOB_RECURSE headers RELATIVE "${STAGING}" "${STAGING}/*")
list(LENGTH headers count)
set(failures 0)
if(count GREATER MAX_HEADERS)
  message(SEND_ERROR "${count} installed headers, more than ${MAX_HEADERS}: trim the allow-lists")
  math(EXPR failures "${failures} + 1")
endif()
foreach(header IN LISTS headers)
  file(STRINGS "${STAGING}/${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*<")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>.*" "\\1" included "${line}")
    if(included MATCHES "^tensordiag/")
      if(NOT EXISTS "${STAGING}/${included}")
        message(SEND_ERROR "${header} includes <${included}>, which is not installed")
        math(EXPR failures "${failures} + 1")
      endif()
    elseif(included MATCHES "^fmt/" OR included MATCHES "^(cuda|hip/)" OR included MATCHES "^[a-z_0-9]+$"
           OR included MATCHES "^(std[a-z]+|assert|limits|string|stdio|stdlib|math)\\.h$")
      # fmt, the GPU runtimes, the C++ standard library, C headers
    else()
      message(SEND_ERROR "${header} includes <${included}>: no third-party header but fmt may reach an installed one")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endforeach()
if(failures EQUAL 0)
  message("installed headers: ${count} (at most ${MAX_HEADERS}), self-contained, no third-party include but fmt: ok")
endif()
