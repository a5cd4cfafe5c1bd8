# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag in a PyTorch program, one line each (PyTorch >= 2.4; docs/pytorch.md).

- ``with record_dtensor("run.jsonl"):`` records every DTensor op of unmodified code (op,
  placements, the output placements and redistributions PyTorch chose, the user's source line)
  and every collective (FSDP2's and ``torch.distributed``'s too), by module, forward and
  backward, in the case format, for ``tdiag shard check`` / ``tdiag shard report``
  (``Recording.modules()`` ranks the modules); it also explains DTensor errors, as
  ``explain_errors()`` alone does.
- ``with explain_errors():`` re-raises a DTensor sharding error with tensordiag's explanation
  (op, argument, mesh dim, placements, why, fix, code), PyTorch's error chained.
- ``watch_oom("oom/")`` writes the snapshot and tensordiag's OOM report at every CUDA
  out-of-memory and prints the top sites.
- ``capture(steps=range(10, 13))`` captures only those optimizer steps of a program run under
  ``tdiag capture --range cuda-profiler-api`` (cudaProfilerStart/Stop around them).
- ``with compile_checks():`` makes the bounds checks of kernels torch.compile generates record
  through tensordiag instead of trapping; ``tensordiag.check()`` raises the report naming the
  user's line, the op, the size and the bad value (``tensordiag.DeviceAssertionError``).
- ``check_replicas(module)`` / ``check_shards(dtensor)``: runtime checks of real ranks (or of
  the ranks ``LocalTensorMode`` simulates), as tensordiag's runtime checks report them.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterable, Iterator, Union

try:
    import torch
except ImportError as e:  # pragma: no cover - only without torch
    raise ImportError(f"tensordiag.torch needs PyTorch >= 2.4, which is not installed ({e})") from e

_version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
if _version < (2, 4):
    raise ImportError(f"tensordiag.torch needs PyTorch >= 2.4 (DTensor in "
                      f"torch.distributed.tensor); this is {torch.__version__}")

from ._capture import StepCapture, capture  # noqa: E402
from ._record import DTensorMode, Recording, recording_modes  # noqa: E402

# These need the compiled module; they load on first use, so that compile_checks() (pure
# Python) works where it is missing.
_LAZY = {"OomWatch": "._oom", "watch_oom": "._oom", "check_replicas": "._runtime",
         "check_shards": "._runtime", "CompileChecks": "._compile", "compile_checks": "._compile"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tensordiag.torch' has no attribute {name!r}")


@contextlib.contextmanager
def record_dtensor(path: Union[str, "os.PathLike[str]", None] = "dtensor_ops.jsonl", *,
                   explain: bool = True, collectives: bool = True,
                   meshes: Iterable[Any] = ()) -> Iterator[Recording]:
    """Records every DTensor op and every collective run inside the block, with the user's
    line and the module (forward or backward); writes ``path`` (JSONL, the case format) when
    the block ends, also when it ends with an exception. ``path=None`` keeps the records in
    memory only (``Recording.records``, ``Recording.save(path)``). ``collectives`` (default)
    also records the collectives issued outside DTensor ops (FSDP2's all-gathers and
    reduce-scatters, ``torch.distributed``'s) and names modules; ``meshes`` names the mesh
    dims of their groups (DTensor arguments' and DTensor parameters' meshes are found alone).
    With ``explain`` (the default), DTensor errors are re-raised with tensordiag's
    explanation."""
    recording = Recording(path)
    try:
        with recording_modes(recording, explain, meshes, collectives):
            yield recording
    finally:
        if recording.path is not None:
            recording.save()


@contextlib.contextmanager
def explain_errors() -> Iterator[None]:
    """Inside the block, a DTensor op that PyTorch rejects raises an exception that is both
    ``tensordiag.ShardingError`` (``.report``, ``.code``, ``.pytorch_error``) and PyTorch's own
    exception type, its message PyTorch's first line followed by tensordiag's explanation."""
    with DTensorMode(None, True):
        yield


__all__ = ["record_dtensor", "explain_errors", "Recording", "watch_oom", "OomWatch",
           "check_replicas", "check_shards", "capture", "StepCapture", "compile_checks",
           "CompileChecks"]
