# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Programs for test_triton_checks.py's GPU tests (imported there only: needs torch and triton).
Each planted bug's line carries a ``# planted:`` comment that the tests look up."""

import torch
import triton
import triton.language as tl

import tensordiag.triton as tdt

ROW = tdt.site()


@tdt.jit
def gather_rows(table, idx, out, n, rows, failures, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    j = tl.load(idx + i, mask=m, other=0)
    ok = tdt.check_index(j, rows, failures, ROW, m)  # planted: triton check_index
    tl.store(out + i, tl.load(table + j, mask=m & ok, other=0.0), mask=m)


def run_gather_rows(table, idx):
    out = torch.empty(idx.shape, dtype=table.dtype, device=table.device)
    n = idx.numel()
    gather_rows[(triton.cdiv(n, 128),)](table, idx, out, n, table.shape[0],
                                        tdt.failures(table.device), BLOCK=128)
    return out


def gather(x, idx):
    return torch.gather(x, 1, idx) * 2  # planted: gather


def embed(table, ids):
    return torch.nn.functional.embedding(ids, table).sum(-1)  # planted: embedding


def scatter(out, idx, src):
    return out.scatter_add(0, idx, src) + 1  # planted: scatter
