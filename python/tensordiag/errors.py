# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Exceptions: every error of tensordiag's libraries arrives as one of these.

``str(error)`` is the same one line ``tdiag`` prints (without the ``tdiag:`` prefix), and
``error.report`` the structured :class:`tensordiag.report.Report` behind it. Each also is the
built-in exception a Python user would catch: :class:`InputError` (a missing, unreadable or
malformed file) is an ``OSError``, :class:`ShardingError` (a call with bad placements or
arguments) a ``ValueError``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence


class Error(Exception):
    """A tensordiag error (C++ ``tdiag::error``), with its report and stable code."""

    def __init__(self, message: str, report=None) -> None:
        super().__init__(message)
        #: The structured report (tensordiag.report.Report); None when raised from Python.
        self.report = report

    @property
    def code(self) -> Optional[str]:
        """The stable code of the first diagnostic, e.g. ``TDIAG-TR-002``."""
        if self.report is None or len(self.report) == 0:
            return None
        return self.report.diagnostics[0].code

    @property
    def diagnostic(self):
        """The first diagnostic of the report, or None."""
        if self.report is None or len(self.report) == 0:
            return None
        return self.report.diagnostics[0]


class InputError(Error, OSError):
    """Bad input from outside: a missing, unreadable or malformed file (``tdiag`` exit 2).
    Also an ``OSError``; ``errno`` and ``filename`` are None (``str()`` is the message)."""

    def __new__(cls, message: str = "", *args, **kwargs):
        # OSError's constructor reads two or more arguments as (errno, strerror, ...): give it
        # the message alone.
        return OSError.__new__(cls, message)

    def __init__(self, message: str = "", report=None) -> None:
        Error.__init__(self, message, report)


class ShardingError(Error, ValueError):
    """A call DTensor would reject, or one tensordiag cannot model.

    The message is the explanation (op, argument, mesh dim, why, fix); ``error_class`` is
    ``"user_error"``, ``"limitation"`` or ``"unknown_op"``. Also a ``ValueError``.
    """

    def __init__(self, message: str, report=None, error_class: str = "user_error") -> None:
        super().__init__(message, report)
        self.error_class = error_class


class DeviceAssertionError(Error):
    """Checks inside GPU kernels failed (``TDIAG-DSA-001``): Triton kernels using
    ``tensordiag.triton``, or kernels torch.compile generated under
    ``tensordiag.torch.compile_checks()``. The kernels recorded the failures instead of
    trapping, so the process and its CUDA context stay usable.

    ``str(error)`` is the report's text (one ``file:line: error: assertion failed: ...`` line per
    failing site, then its fields); ``failures`` the decoded records, ``report_json`` the
    ``tensordiag.report/v1`` document, ``report`` the same as a Report when the compiled module
    is there."""

    def __init__(self, message: str, report=None, *, failures: Sequence[Any] = (),
                 report_json: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message, report)
        self.failures = list(failures)
        self.report_json = report_json

    @property
    def code(self) -> Optional[str]:
        return super().code or "TDIAG-DSA-001"


__all__ = ["Error", "InputError", "ShardingError", "DeviceAssertionError"]
