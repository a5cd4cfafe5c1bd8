# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""OOM forensics: allocation history on, and at an out-of-memory the snapshot, our OOM report
and the top sites, from PyTorch's out-of-memory observer (so it runs even when the program
catches ``torch.OutOfMemoryError``).

Light by default: the history keeps Python stacks only (``stacks="python"``: no C++ unwinding
or symbolization, which has taken minutes on large programs while other ranks time out), and
the observer only takes the snapshot; writing it, our analysis and the printed sites run on a
worker thread after the handler has returned (``OomWatch.wait()`` joins it; so does exit).
``cpp_stacks=True`` is the heavy mode: C++ frames too (``stacks="all"``)."""

from __future__ import annotations

import atexit
import os
import pickle
import sys
import threading
from typing import Any, List

import torch

from .. import trace as _trace


class OomWatch:
    """What ``watch_oom`` set up; ``events`` lists one dict per out-of-memory seen (paths of
    the snapshot and reports, the request, the OOM verdict)."""

    def __init__(self, directory: str, top: int, stream) -> None:
        self.directory = directory
        self.top = top
        self.stream = stream
        self.events: List[dict] = []
        self.active = True
        self.errors: List[str] = []
        self._lock = threading.Lock()
        self._workers: List[threading.Thread] = []
        self._seen = 0
        atexit.register(self.wait)

    def wait(self, timeout: Any = None) -> None:
        """Waits until the reports of every OOM seen so far are written."""
        for worker in list(self._workers):
            worker.join(timeout)

    def stop(self) -> None:
        """Stops writing reports (PyTorch has no way to detach an observer) and turns the
        allocation history off."""
        self.active = False
        torch.cuda.memory._record_memory_history(enabled=None)
        self.wait()

    def __enter__(self) -> "OomWatch":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _observe(self, device: int, requested: int, limit: int, free: int) -> None:
        """In PyTorch's OOM handler: the snapshot only; the rest on a worker thread."""
        if not self.active:
            return
        try:
            snapshot = torch.cuda.memory._snapshot()
            rank = ""
            if torch.distributed.is_available() and torch.distributed.is_initialized():
                rank = f"_rank{torch.distributed.get_rank()}"
        except Exception as e:  # never turn PyTorch's OOM into a second, different error
            self.errors.append(f"{type(e).__name__}: {e}")
            return
        with self._lock:
            self._seen += 1
            n = self._seen
        worker = threading.Thread(target=self._finish, name="tensordiag-oom-report",
                                  args=(n, rank, snapshot, device, requested, limit, free))
        self._workers.append(worker)
        worker.start()

    def _finish(self, n: int, rank: str, snapshot: Any, device: int, requested: int,
                limit: int, free: int) -> None:
        with self._lock:
            try:
                self._write(n, rank, snapshot, device, requested, limit, free)
            except Exception as e:  # noqa: BLE001 - reported, never raised in the program
                self.errors.append(f"{type(e).__name__}: {e}")
                print(f"tensordiag.torch.watch_oom: could not write the OOM report: {e}",
                      file=self.stream)

    def _write(self, n: int, rank: str, snapshot: Any, device: int, requested: int, limit: int,
               free: int) -> None:
        base = os.path.join(self.directory, f"oom{rank}_{os.getpid()}_{n}")
        os.makedirs(self.directory, exist_ok=True)
        with open(base + ".pickle", "wb") as f:
            pickle.dump(snapshot, f)
        result = _trace.load(base + ".pickle").oom()
        with open(base + ".txt", "w", encoding="utf-8") as f:
            f.write(result.to_text())
        with open(base + ".json", "w", encoding="utf-8") as f:
            f.write(result.to_json())
        finding = result.findings[-1] if result.findings else None
        event = {"device": device, "requested": requested, "limit": limit, "device_free": free,
                 "snapshot": base + ".pickle", "text": base + ".txt", "json": base + ".json",
                 "finding": finding, "report": result.report}
        self.events.append(event)
        # This OOM's verdict (the report's last diagnostic: a snapshot holds the earlier ones too)
        # and its first `top` live sites, as the report words them (the finding's own sites).
        diagnostics = result.report.diagnostics
        if diagnostics:
            last = diagnostics[-1]
            out = [f"tensordiag: {last.message} [{last.code}]"]
            sites = [s["text"] for s in finding["sites"]] if finding else []
            out += [f"  {i}. {site}" for i, site in enumerate(sites[: self.top], 1)]
        else:
            out = [f"tensordiag: CUDA out of memory on device {device}; the snapshot shows no OOM"]
        out.append(f"  report: {event['text']} (JSON {event['json']}, "
                   f"snapshot {event['snapshot']})")
        print("\n".join(out), file=self.stream, flush=True)


def watch_oom(directory: str = "oom", *, top: int = 3, max_entries: int = 100_000,
              stream=None, cpp_stacks: bool = False) -> OomWatch:
    """Turns on allocation history (``torch.cuda.memory._record_memory_history``, Python
    stacks; C++ frames too with ``cpp_stacks``, the heavy mode) and, on every CUDA
    out-of-memory, takes the snapshot and, once PyTorch's OOM handler has returned, writes
    ``DIR/oom_*.pickle`` (the snapshot), ``.txt`` and ``.json`` (tensordiag's OOM report: what
    was live by site, fragmentation, the request that failed) and prints the top ``top``
    sites to ``stream`` (stderr). ``OomWatch.wait()`` waits for the reports."""
    if not torch.cuda.is_available():
        raise RuntimeError("tensordiag.torch.watch_oom: CUDA is not available")
    watch = OomWatch(os.fspath(directory), top, stream if stream is not None else sys.stderr)
    torch.cuda.memory._record_memory_history(max_entries=max_entries,
                                             stacks="all" if cpp_stacks else "python")
    torch._C._cuda_attach_out_of_memory_observer(watch._observe)
    return watch


__all__ = ["OomWatch", "watch_oom"]
