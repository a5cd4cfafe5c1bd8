# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
import logging
from typing import Any, Sequence

logger: logging.Logger

class LoadWarning(UserWarning): ...

def report_load_warnings(source: str, diagnostics: Sequence[Any]) -> None: ...
