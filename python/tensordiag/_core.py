# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The compiled module, imported once with a clear message when it is missing, and the checks
every wrapper makes of its arguments before they reach it."""

import numbers
import os

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


def native_path(path) -> bytes:
    """A path argument (str, bytes or os.PathLike) as the bytes the file system names the file
    by: a str that Python made of a name that is not UTF-8 (os.listdir, pathlib) opens too."""
    try:
        return os.fsencode(path)
    except TypeError:
        raise TypeError(f"expected a path (str, bytes or os.PathLike), got "
                        f"{type(path).__name__}") from None


def int_arg(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi]: a TypeError for what is no integer and a ValueError
    naming the argument for one out of range, never the bindings' conversion errors."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r}: expected an integer")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name}={v}: expected an integer from {lo} to {hi}")
    return v


INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
