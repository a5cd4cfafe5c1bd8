// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The members of a diagnostic that the JSON report and SARIF's property bag write alike
// (private to core).
#pragma once

#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/report.hpp>

namespace tdiag::detail {

/// `"notes": [...]` and `"hint": "..."`, each only when there is one.
inline void write_notes_and_hint(json_out& out, const diagnostic& d) {
  if (!d.notes.empty()) {
    out.key("notes");
    out.begin_array();
    for (const auto& note : d.notes)
      out.string(note);
    out.end_array();
  }
  if (!d.hint.empty())
    out.member("hint", d.hint);
}

} // namespace tdiag::detail
