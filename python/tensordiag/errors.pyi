# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
from typing import Any, Dict, List, Optional, Sequence

from .report import Diagnostic, Report

class Error(Exception):
    report: Optional[Report]
    def __init__(self, message: str, report: Optional[Report] = ...) -> None: ...
    @property
    def code(self) -> Optional[str]: ...
    @property
    def diagnostic(self) -> Optional[Diagnostic]: ...

class InputError(Error, OSError):
    def __new__(cls, message: str = ..., *args: Any, **kwargs: Any) -> InputError: ...
    def __init__(self, message: str = ..., report: Optional[Report] = ...) -> None: ...

class ShardingError(Error, ValueError):
    error_class: str
    def __init__(self, message: str, report: Optional[Report] = ...,
                 error_class: str = ...) -> None: ...

class DeviceAssertionError(Error):
    failures: List[Any]
    report_json: Optional[Dict[str, Any]]
    def __init__(self, message: str, report: Optional[Report] = ..., *,
                 failures: Sequence[Any] = ...,
                 report_json: Optional[Dict[str, Any]] = ...) -> None: ...
