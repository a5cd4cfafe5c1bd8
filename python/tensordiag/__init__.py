# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag: debugging and diagnostics for GPU and distributed tensors, from Python.

Submodules: :mod:`tensordiag.dtensor` (sharding propagation, corpus checks, explanations),
:mod:`tensordiag.trace` (snapshots, Kineto traces, .tdtrace and their analyses),
:mod:`tensordiag.report` (reports in every format). Errors are :class:`tensordiag.Error` and
its subclasses. ``python -m tensordiag ...`` runs the ``tdiag`` command line.
"""

from ._core import core as _core
from .errors import Error, InputError, ShardingError
from . import dtensor, report, trace

__version__ = _core.__version__


def main(args=None) -> int:
    """Runs ``tdiag ARGS`` in this process and returns its exit status."""
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    return _core.run_cli(list(sys.argv[1:] if args is None else args))


__all__ = ["Error", "InputError", "ShardingError", "dtensor", "report", "trace", "main",
           "__version__"]
