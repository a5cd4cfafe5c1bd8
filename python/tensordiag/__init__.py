# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag: debugging and diagnostics for GPU and distributed tensors, from Python.

Submodules: :mod:`tensordiag.dtensor` (sharding propagation, corpus checks, explanations),
:mod:`tensordiag.trace` (snapshots, Kineto traces, .tdtrace and their analyses),
:mod:`tensordiag.report` (reports in every format). Errors are :class:`tensordiag.Error` and
its subclasses. ``python -m tensordiag ...`` and the ``tdiag`` command run the packaged ``tdiag``
program; :func:`get_include` and :func:`get_cmake_dir` locate the C++ headers and CMake package.
:mod:`tensordiag.triton` and ``tensordiag.torch.compile_checks()`` check compiled kernels
(Triton, torch.compile); ``check()`` raises what they recorded. Those two work without the
compiled module.
"""

from typing import Optional, Sequence

from ._programs import get_cmake_dir, get_include, get_library_dir
from .errors import DeviceAssertionError, Error, InputError, ShardingError

try:
    from ._core import core as _core
except ImportError as _missing:  # without the compiled module only the pure-Python parts load:
    _core = None                 # tensordiag.triton and tensordiag.torch.compile_checks
    _core_error: "ImportError | None" = _missing
else:
    _core_error = None
    from . import dtensor, fr, report, trace

    __version__ = _core.__version__


def __getattr__(name: str):
    if _core is None and name in ("dtensor", "fr", "report", "trace", "__version__"):
        raise ImportError(f"tensordiag.{name} needs the compiled module: {_core_error}")
    raise AttributeError(f"module 'tensordiag' has no attribute {name!r}")


def check() -> None:
    """Raises :class:`DeviceAssertionError` for the checks that failed in compiled kernels
    (``tensordiag.triton``, ``tensordiag.torch.compile_checks()``) since the last check, after
    synchronising each device that holds a failure buffer; returns when none failed."""
    import sys

    checks = sys.modules.get("tensordiag.triton")
    if checks is not None:
        checks.raise_failures()


def main(args: Optional[Sequence[str]] = None) -> int:
    """Runs ``tdiag ARGS`` (the packaged program, stdio inherited) and returns its exit status;
    ``args`` defaults to ``sys.argv[1:]``."""
    import sys

    from ._programs import run

    return run("tdiag", list(sys.argv[1:] if args is None else args))


__all__ = ["Error", "InputError", "ShardingError", "DeviceAssertionError", "check", "dtensor",
           "fr", "report", "trace", "main", "get_include", "get_cmake_dir", "get_library_dir",
           "__version__"]
