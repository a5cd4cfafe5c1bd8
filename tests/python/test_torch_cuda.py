# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.torch.watch_oom on a real CUDA out-of-memory (PyTorch >= 2.4 with a GPU)."""

import json
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 4):
    pytest.skip(f"tensordiag.torch needs PyTorch >= 2.4; this is {torch.__version__}",
                allow_module_level=True)
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tensordiag.torch as tt  # noqa: E402


def fill(keep):
    while True:
        keep.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))  # the filling line


def test_watch_oom_writes_the_snapshot_and_report_and_prints_the_top_sites(tmp_path, capsys):
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((4 << 30) / total)  # a 4 GiB cap
    watch = tt.watch_oom(tmp_path / "oom", stream=sys.stdout)
    keep = []
    try:
        with pytest.raises(torch.OutOfMemoryError):
            fill(keep)  # caught by the program: the observer has already written the report
    finally:
        watch.stop()
        keep.clear()
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(1.0)
    assert watch.errors == []
    (event,) = watch.events
    for key in ("snapshot", "text", "json"):
        assert os.path.getsize(event[key]) > 0
    finding = event["finding"]
    assert finding["verdict"] == "process_limit", finding
    assert finding["requested"] == 256 << 20
    # What was live: the ~15 filled 256 MiB blocks, at the filling line of this file.
    top = finding["sites"][0]
    line = [n for n, t in enumerate(open(__file__), 1) if "# the filling line" in t][0]
    assert f"test_torch_cuda.py:{line}" in top["site"], finding["sites"]
    assert top["bytes"] >= 12 * (256 << 20) and top["count"] >= 12
    report = json.loads(open(event["json"]).read())
    assert report["diagnostics"][0]["code"] == "TDIAG-TR-220"
    out = capsys.readouterr().out
    assert out.startswith("tensordiag: ") and f"test_torch_cuda.py:{line}" in out
    print(out)
