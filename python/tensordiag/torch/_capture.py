# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""``tensordiag.torch.capture(steps=range(10, 13))``: capture chosen optimizer steps only.

An optimizer step post-hook counts steps (from 0) and brackets the chosen ones with
``cudaProfilerStart`` / ``cudaProfilerStop`` (``torch.cuda.profiler.start/stop``), which
``tdiag capture --range cuda-profiler-api`` turns into capture on / off: outside the steps CUPTI
records nothing. Before each stop the device is synchronized, so the last kernels of the range are
complete when capture turns off. This module imports torch only in ``capture()``: the step logic
(``StepCapture``) is plain Python.
"""

from __future__ import annotations

import os
import warnings
from typing import Callable, Iterable, Optional


class StepCapture:
    """Turns capture on before the first chosen step and off after the last of each run of
    consecutive chosen steps. ``after_step()`` is called after every optimizer step."""

    def __init__(self, steps: Iterable[int], start: Callable[[], None],
                 stop: Callable[[], None]) -> None:
        self.steps = frozenset(int(s) for s in steps)
        if any(s < 0 for s in self.steps):
            raise ValueError(f"capture steps count from 0; got {sorted(self.steps)}")
        self._start, self._stop = start, stop
        self.step = 0  # the step about to run
        self.capturing = False
        self.ranges = 0  # how many times capture was turned on
        self._remove: Optional[Callable[[], None]] = None
        self._set(0 in self.steps)

    def _set(self, on: bool) -> None:
        if on and not self.capturing:
            self._start()
            self.ranges += 1
        elif not on and self.capturing:
            self._stop()
        self.capturing = on

    def after_step(self) -> None:
        self.step += 1
        self._set(self.step in self.steps)

    def close(self) -> None:
        """Stops capturing (if a chosen step is still running) and removes the hook."""
        self._set(False)
        if self._remove is not None:
            self._remove()
            self._remove = None

    def __enter__(self) -> "StepCapture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def capture(steps: Iterable[int], optimizer=None, *, synchronize: bool = True) -> StepCapture:
    """Captures only the optimizer steps in ``steps`` (counted from 0) of a program run under
    ``tdiag capture --range cuda-profiler-api``. ``optimizer``: count that optimizer's steps
    (default: every optimizer's, through the global step post-hook). Returns the handle
    (also a context manager); ``close()`` ends capture and removes the hook."""
    import torch

    def stop() -> None:
        if synchronize:
            torch.cuda.synchronize()
        torch.cuda.profiler.stop()

    ranges = os.environ.get("TDIAG_CAPTURE_RANGES", "")
    if os.environ.get("CUDA_INJECTION64_PATH") and "cuda-profiler-api" not in ranges.split(";"):
        warnings.warn("tensordiag.torch.capture brackets steps with cudaProfilerStart/Stop, which "
                      "tdiag capture only follows with --range cuda-profiler-api; without it "
                      "every step is captured", stacklevel=2)
    handle = StepCapture(steps, torch.cuda.profiler.start, stop)

    def hook(*_args, **_kwargs) -> None:
        handle.after_step()

    if optimizer is not None:
        registration = optimizer.register_step_post_hook(hook)
    else:
        registration = torch.optim.optimizer.register_optimizer_step_post_hook(hook)
    handle._remove = registration.remove
    return handle
