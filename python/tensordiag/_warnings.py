# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""What a load skipped or repaired reaches Python's ``warnings`` and ``logging``: one
:class:`LoadWarning` per load (the count and the first diagnostic), and per diagnostic code one
record on the logger ``tensordiag.trace`` (level WARNING, with how many diagnostics had it)."""

from __future__ import annotations

import logging
import warnings
from typing import Any, Dict, List, Sequence

logger = logging.getLogger("tensordiag.trace")
# A library's loggers print nothing until the application configures logging.
logging.getLogger("tensordiag").addHandler(logging.NullHandler())


class LoadWarning(UserWarning):
    """A trace load skipped or repaired part of its input (``Trace.warnings`` has them all)."""


def report_load_warnings(source: str, diagnostics: Sequence[Any]) -> None:
    if not diagnostics:
        return
    by_code: Dict[str, List[Any]] = {}
    for d in diagnostics:
        by_code.setdefault(getattr(d, "code", "") or "", []).append(d)
    for code, items in by_code.items():
        more = f" (and {len(items) - 1} more like it)" if len(items) > 1 else ""
        logger.warning("%s: %s%s [%s]", source, getattr(items[0], "message", items[0]), more, code)
    first = diagnostics[0]
    warnings.warn(LoadWarning(
        f"{source}: {len(diagnostics)} load warning(s); first: "
        f"{getattr(first, 'message', first)} [{getattr(first, 'code', '')}] "
        "(Trace.warnings has them all)"), stacklevel=3)
