# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Reports: the findings of any tensordiag analysis, rendered in every format ``tdiag`` writes.

>>> from tensordiag import report
>>> r = report.Report.from_json(open(path).read())      # doctest: +SKIP
>>> print(r.to_sarif())                                  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Iterable

from ._core import core

#: A tensordiag report (``tensordiag.report/v1``): ``diagnostics``, ``to_text()``,
#: ``to_json()``, ``to_sarif()``, ``to_junit()``, ``to_github()``, ``render(format)``.
Report = core.Report
#: One finding: ``code``, ``severity``, ``title``, ``message``, ``fields``, ``hint``.
Diagnostic = core.Diagnostic


def merge(reports: Iterable[Report]) -> Report:
    """One report from many (e.g. one per rank), exactly as ``tdiag report merge``."""
    return core.merge_reports(list(reports))


def load(path) -> Report:
    """Reads a ``tensordiag.report/v1`` JSON file; raises InputError on a bad file."""
    return Report.load(str(path))


def from_json(text: str, source: str = "<string>") -> Report:
    """Parses a ``tensordiag.report/v1`` document; errors name ``source``."""
    return Report.from_json(text, source)


__all__ = ["Report", "Diagnostic", "merge", "load", "from_json"]
