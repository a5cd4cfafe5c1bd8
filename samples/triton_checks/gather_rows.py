# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A hand-written Triton kernel guarding its gather with tensordiag.triton.check_index."""

import torch
import triton
import triton.language as tl

import tensordiag
import tensordiag.triton as tdt

ROW = tdt.site()


@tdt.jit
def gather_rows(table, idx, out, n, rows, failures, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    j = tl.load(idx + i, mask=m, other=0)
    ok = tdt.check_index(j, rows, failures, ROW, m)
    tl.store(out + i, tl.load(table + j, mask=m & ok, other=0.0), mask=m)


def main():
    table = torch.arange(16, dtype=torch.float32, device="cuda")
    idx = torch.arange(2000, dtype=torch.int32, device="cuda") % 17   # 16 is out of range
    out = torch.empty(2000, device="cuda")
    gather_rows[(triton.cdiv(2000, 256),)](table, idx, out, 2000, 16, tdt.failures(), BLOCK=256)
    try:
        tensordiag.check()
    except tensordiag.DeviceAssertionError as e:
        print(e)
    print("next op on the same stream:", out.sum().item())


if __name__ == "__main__":
    main()
