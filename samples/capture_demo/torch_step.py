# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""An unmodified PyTorch training loop for `tdiag capture`:

    tdiag capture -o torch.tdtrace --stacks -- python3 samples/capture_demo/torch_step.py

Nothing here knows about tensordiag; the CUDA driver loads the capture library."""
import sys

import torch


def main(steps: int) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randn(64, 1024, device=device)
    target = torch.randn(64, 1024, device=device)
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(data), target)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(f"loss {loss.item():.4f} after {steps} steps")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
