# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tdiag capture's hook into PyTorch programs.

`tdiag capture` puts this file first on PYTHONPATH (a temporary folder). Nothing happens until
the program initialises CUDA through torch; then the caching allocator's history is switched
on (``torch.cuda.memory._record_memory_history``: every block allocation and free, with Python
stacks, or Python and C++ ones under ``--torch-cpp-stacks``), and at exit it is dumped where
tdiag capture merges it into the trace, on the same clock as the kernels. A ``sitecustomize``
further along the path still runs. Settings come from tdiag capture's environment:
TDIAG_CAPTURE_TORCH_SNAPSHOT (the file, ``{pid}`` replaced), TDIAG_CAPTURE_TORCH_STACKS
(``python`` or ``all``; with ``all``, PyTorch's in-process C++ symbolizer is chosen,
``TORCH_SYMBOLIZE_MODE=fast``, unless set), TDIAG_CAPTURE_TORCH_ENTRIES (the history's capacity).
"""

import os
import sys


def _chain() -> None:
    """Runs the sitecustomize this one hides, if any."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def _dump(torch, path: str) -> None:
    try:
        torch.cuda.memory._dump_snapshot(path)
    except Exception as e:  # say it: the capture would otherwise lack the allocator silently
        print(f"tdiag capture: PyTorch's allocation history was not written to {path}: {e}",
              file=sys.stderr)


def _fast_symbolizer(torch) -> None:
    """C++ frames of the history are symbolized when it is dumped, at exit: by default through
    addr2line children, seconds per large library (most of --stacks' stall after a PyTorch run).
    PyTorch >= 2.5 has an in-process symbolizer; a user's own choice is kept."""
    try:
        version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    except (AttributeError, ValueError):
        return
    if version >= (2, 5):
        os.environ.setdefault("TORCH_SYMBOLIZE_MODE", "fast")


def _start(torch) -> None:
    target = os.environ.get("TDIAG_CAPTURE_TORCH_SNAPSHOT")
    if not target:
        return
    stacks = os.environ.get("TDIAG_CAPTURE_TORCH_STACKS", "python")
    if stacks == "all":
        _fast_symbolizer(torch)
    try:
        torch.cuda.memory._record_memory_history(
            max_entries=int(os.environ.get("TDIAG_CAPTURE_TORCH_ENTRIES", "1000000")),
            stacks=stacks)
    except Exception as e:
        print(f"tdiag capture: PyTorch's allocation history is not recorded: {e}",
              file=sys.stderr)
        return
    import atexit
    atexit.register(_dump, torch, target.replace("{pid}", str(os.getpid())))


def _patch(cuda) -> None:
    """torch.cuda._lazy_init, which every first CUDA use calls, then starts the history once."""
    original = cuda._lazy_init
    started = []

    def _lazy_init():
        original()
        if not started:
            started.append(True)
            _start(sys.modules["torch"])

    cuda._lazy_init = _lazy_init


class _TorchCudaFinder:
    """Waits for `torch.cuda` to be imported, and patches it once it has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.cuda":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("TDIAG_CAPTURE_TORCH_SNAPSHOT"):
    sys.meta_path.insert(0, _TorchCudaFinder())
_chain()
