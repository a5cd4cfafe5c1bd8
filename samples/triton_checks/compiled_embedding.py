# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A torch.compile'd model fed an out-of-range token id, with tensordiag's checks (default) or
without (--plain: what PyTorch does on its own). See README.md."""

import sys

import torch

import tensordiag
import tensordiag.torch as ttorch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(1000, 64)

    def forward(self, ids):
        return self.tok(ids).relu().sum(-1)  # the embedding lookup of the bad id


def main():
    model = Model().cuda()
    ids = torch.randint(0, 1000, (4096,), device="cuda")
    ids[777] = 1003                                      # the bug: an id past the vocabulary
    if "--plain" in sys.argv:
        out = torch.compile(model)(ids)
        print(out.sum().item())                          # PyTorch: device-side assert, context dead
        return
    with ttorch.compile_checks(raise_at_exit=False):
        out = torch.compile(model)(ids)
    try:
        tensordiag.check()
    except tensordiag.DeviceAssertionError as e:
        print(e)
    print("next op on the same stream:", torch.ones(8, device="cuda").sum().item())


if __name__ == "__main__":
    main()
