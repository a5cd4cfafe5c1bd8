# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The PyTorch extension sample on a CUDA GPU (torch 2.11 on the H200 machine):

    TDIAG_PREFIX=<prefix> python3 -m pytest -q samples/torch_extension/test_torch_extension.py

A bad index in the op's kernel raises DeviceAssertionError (a RuntimeError) whose text is the
tensordiag report, launched with <<<>>> and with TDIAG_LAUNCH, and the next torch op on the same
stream succeeds. The last test runs the same bug through PyTorch's own index_select in a child
process and keeps both texts (for docs/assertions.md). Skips without torch, CUDA or the prefix."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
PREFIX = os.environ.get("TDIAG_PREFIX")
if not PREFIX:
    pytest.skip("TDIAG_PREFIX (the installed tensordiag) is not set", allow_module_level=True)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build  # noqa: E402

LOG_DIR = os.environ.get("TDIAG_SAMPLE_LOG", "")


@pytest.fixture(scope="module")
def op():
    return build.build(PREFIX, os.environ.get("TDIAG_SAMPLE_BUILD"))


def keep(name: str, text: str) -> None:
    if LOG_DIR:
        with open(os.path.join(LOG_DIR, name), "w") as f:
            f.write(text)


def data():
    src = torch.arange(16 * 8, dtype=torch.float32, device="cuda").reshape(16, 8)
    return src, torch.tensor([3, 17, 5], dtype=torch.int64, device="cuda")


def next_op_works():
    x = torch.ones(1024, device="cuda")
    assert (x * 2).sum().item() == 2048.0
    torch.cuda.synchronize()


def test_good_indices_gather(op):
    src, _ = data()
    index = torch.tensor([3, 0, 15], dtype=torch.int64, device="cuda")
    for registered in (False, True):
        out = op.gather_rows(src, index, registered)
        assert torch.equal(out, src[index])


@pytest.mark.parametrize("registered", [False, True], ids=["triple_chevron", "tdiag_launch"])
def test_bad_index_raises_the_report_and_the_stream_stays_usable(op, registered):
    src, index = data()
    with pytest.raises(RuntimeError) as caught:
        op.gather_rows(src, index, registered)
    assert isinstance(caught.value, op.DeviceAssertionError)
    text = str(caught.value)
    keep(f"report_{'registered' if registered else 'plain'}.txt", text)
    assert "TDIAG-DSA-001" in text
    assert "index 17 not below 16" in text, text
    assert "gather_rows_kernel" in text, text
    assert "gather_rows.cu:" in text, text
    assert "block (1,0,0)" in text, text
    if registered:
        assert "launched from" in text and "gather_rows.cu" in text, text
        assert "stream" in text, text
    else:
        assert "unregistered launch" in text, text
    next_op_works()
    # The same op on the same stream, good data: runs.
    good = torch.tensor([1, 2], dtype=torch.int64, device="cuda")
    assert torch.equal(op.gather_rows(src, good, registered), src[good])


PYTORCH_BUG = """
import torch
src = torch.arange(16 * 8, dtype=torch.float32, device="cuda").reshape(16, 8)
index = torch.tensor([3, 17, 5], dtype=torch.int64, device="cuda")
out = torch.index_select(src, 0, index)
torch.cuda.synchronize()
print(out.sum().item())
"""


def test_pytorch_reports_the_same_bug_its_own_way():
    r = subprocess.run([sys.executable, "-c", PYTORCH_BUG], capture_output=True, text=True,
                       timeout=120)
    keep("pytorch_index_select.txt", r.stdout + r.stderr)
    assert r.returncode != 0, "PyTorch's own kernel asserts on index 17"
