# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag: debugging and diagnostics for GPU and distributed tensors, from Python.

Submodules: :mod:`tensordiag.dtensor` (sharding propagation, corpus checks, explanations),
:mod:`tensordiag.trace` (snapshots, Kineto traces, .tdtrace and their analyses),
:mod:`tensordiag.report` (reports in every format). Errors are :class:`tensordiag.Error` and
its subclasses. ``python -m tensordiag ...`` and the ``tdiag`` command run the packaged ``tdiag``
program; :func:`get_include` and :func:`get_cmake_dir` locate the C++ headers and CMake package.
"""

from typing import Optional, Sequence

from ._core import core as _core
from .errors import Error, InputError, ShardingError
from . import dtensor, report, trace
from ._programs import get_cmake_dir, get_include, get_library_dir

__version__ = _core.__version__


def main(args: Optional[Sequence[str]] = None) -> int:
    """Runs ``tdiag ARGS`` (the packaged program, stdio inherited) and returns its exit status;
    ``args`` defaults to ``sys.argv[1:]``."""
    import sys

    from ._programs import run

    return run("tdiag", list(sys.argv[1:] if args is None else args))


__all__ = ["Error", "InputError", "ShardingError", "dtensor", "report", "trace", "main",
           "get_include", "get_cmake_dir", "get_library_dir", "__version__"]
