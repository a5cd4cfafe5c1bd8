# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.torch.capture's step logic (python/tensordiag/torch/_capture.py, plain Python):
which optimizer steps are bracketed by cudaProfilerStart/Stop. The torch glue runs on the GPU
machine (benchmarks/capture/run_gpu.sh, samples/capture_demo/torch_steps.py)."""

import importlib.util

import pytest

from conftest import SOURCE_DIR


def load_capture_module():
    # Straight from the file: tensordiag.torch itself needs PyTorch, its step logic does not.
    path = SOURCE_DIR / "python" / "tensordiag" / "torch" / "_capture.py"
    spec = importlib.util.spec_from_file_location("tdiag_capture_steps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(steps, total):
    """The events a loop of `total` optimizer steps produces, as 'start'/'stop'/step numbers."""
    events = []
    handle = load_capture_module().StepCapture(steps, lambda: events.append("start"),
                                               lambda: events.append("stop"))
    for step in range(total):
        events.append(step)
        handle.after_step()
    handle.close()
    return events, handle


def test_brackets_the_chosen_steps():
    events, handle = run(range(2, 4), 6)
    assert events == [0, 1, "start", 2, 3, "stop", 4, 5]
    assert handle.ranges == 1 and not handle.capturing


def test_step_zero_starts_at_once_and_gaps_make_separate_ranges():
    events, handle = run([0, 3, 4, 7], 9)
    assert events == ["start", 0, "stop", 1, 2, "start", 3, 4, "stop", 5, 6, "start", 7, "stop", 8]
    assert handle.ranges == 3


def test_close_stops_a_range_still_open():
    events, handle = run(range(4, 100), 6)
    assert events == [0, 1, 2, 3, "start", 4, 5, "stop"]


def test_negative_steps_are_refused():
    with pytest.raises(ValueError, match="count from 0"):
        load_capture_module().StepCapture([-1], lambda: None, lambda: None)
