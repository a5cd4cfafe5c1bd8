# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Errors are also the built-in exceptions a Python user catches, and carry their report."""

import pytest

import tensordiag
from tensordiag import trace
from tensordiag.dtensor import DeviceMesh, Replicate, TensorSpec, propagate


def test_unreadable_file_is_an_oserror():
    with pytest.raises(OSError) as info:
        trace.load("/nonexistent/trace.json")
    assert isinstance(info.value, tensordiag.InputError)
    assert info.value.code == "TDIAG-CORE-004"
    assert "/nonexistent/trace.json" in str(info.value)


def test_rejected_call_is_a_valueerror():
    with pytest.raises(ValueError) as info:
        propagate("aten.mm.default", [TensorSpec([12, 3], [Replicate()]),
                                      TensorSpec([4, 8], [Replicate()])], DeviceMesh([2]))
    assert isinstance(info.value, tensordiag.ShardingError)
    assert info.value.report is not None and info.value.error_class == "user_error"


def test_bad_window_is_a_valueerror(shared):
    with pytest.raises(ValueError):
        trace.load(shared / "traces/oom_snapshot.pickle", window="nonsense")


def test_stub_only_names_exist():
    from tensordiag import dtensor

    assert trace.Columns is not None and dtensor.PlacementLike is not None
