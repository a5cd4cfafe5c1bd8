# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# One place that records every option's outcome, so the configure summary says what is on and,
# when something is off, why.
include_guard(GLOBAL)

set_property(GLOBAL PROPERTY TDIAG_SUMMARY_LINES "")

function(tdiag_option name doc default)
  option(${name} "${doc}" ${default})
  tdiag_summary("${name}" "${${name}}" "")
endfunction()

# tdiag_summary(NAME VALUE REASON): one line of the configure-time summary.
function(tdiag_summary name value reason)
  if(reason)
    set(line "  ${name} = ${value} (${reason})")
  else()
    set(line "  ${name} = ${value}")
  endif()
  set_property(GLOBAL APPEND PROPERTY TDIAG_SUMMARY_LINES "${line}")
endfunction()

# tdiag_resolve_auto(VAR FOUND REASON_IF_MISSING): turn the AUTO|ON|OFF request held in the
# cache into an effective ON/OFF normal variable (which shadows the cache entry for the rest of
# the configure). The request stays in the cache, so a later configure on a better-equipped
# machine turns AUTO on. ON with the dependency missing is an error: the user asked for it.
function(tdiag_resolve_auto var found missing_reason)
  string(TOUPPER "${${var}}" request)
  if(request MATCHES "^(OFF|FALSE|NO|0)$")
    set(effective OFF)
    tdiag_summary(${var} OFF "disabled by the user")
  elseif(found)
    set(effective ON)
    tdiag_summary(${var} ON "")
  elseif(request MATCHES "^(ON|TRUE|YES|1)$")
    message(FATAL_ERROR "${var}=ON but ${missing_reason}")
  else()
    set(effective OFF)
    tdiag_summary(${var} OFF "${missing_reason}")
  endif()
  set(${var} ${effective} PARENT_SCOPE)
endfunction()

function(tdiag_print_summary)
  get_property(lines GLOBAL PROPERTY TDIAG_SUMMARY_LINES)
  message(STATUS "tensordiag ${PROJECT_VERSION} configuration:")
  foreach(line IN LISTS lines)
    message(STATUS "${line}")
  endforeach()
endfunction()
