# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The compiled module, imported once with a clear message when it is missing."""

from ._frames import require

try:
    from . import _tensordiag as core  # type: ignore[attr-defined]  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "tensordiag's compiled module _tensordiag is missing or does not load "
        f"({e}); install the package with the command in README.md"
    ) from e


def require_numpy(what: str):
    return require("numpy", what, "pip install numpy")
