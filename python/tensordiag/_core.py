# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The compiled module, imported once with a clear message when it is missing."""

try:
    from . import _tensordiag as core  # type: ignore[attr-defined]  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "tensordiag's compiled module _tensordiag is missing or does not load "
        f"({e}); install the package with the command in README.md"
    ) from e


def require_numpy(what: str):
    """numpy, or an ImportError that names it and what needed it."""
    try:
        import numpy
    except ImportError as e:
        raise ImportError(f"{what} needs numpy, which is not installed ({e})") from e
    return numpy
