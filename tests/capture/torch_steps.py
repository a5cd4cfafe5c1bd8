# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A PyTorch loop that captures only optimizer steps FIRST..LAST-1 of STEPS with
tensordiag.torch.capture, for the GPU check in benchmarks/capture/run_gpu.sh:

    tdiag capture --range cuda-profiler-api -o t.tdtrace -- python3 torch_steps.py 20 10 13

With STEPS alone every step runs under capture. The last line is the wall-clock time the loop
ended, for measuring what capture adds after the application's work (--stacks at exit).

Every steady-state step launches the same kernels, so the trace of steps 10-12 holds exactly three
times the kernels of the trace of step 10 alone. The step logic is loaded from the source tree
(python/tensordiag/torch/_capture.py): it needs no compiled tensordiag module."""
import importlib.util
import pathlib
import sys
import time

import torch

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location(
    "tdiag_capture_steps", HERE.parent.parent / "python" / "tensordiag" / "torch" / "_capture.py")
steps_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(steps_module)


def main(steps: int, first: int, last: int) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 30 * 30, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    data = torch.randn(32, 3, 32, 32, device=device)
    target = torch.randint(0, 10, (32,), device=device)
    handle = steps_module.capture(range(first, last), optimizer) if last >= 0 else None
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
    if handle is not None:
        handle.close()
    torch.cuda.synchronize()
    if handle is not None:
        print(f"torch_steps: {steps} steps, captured {sorted(handle.steps)} in {handle.ranges} "
              "range(s)")
    print(f"torch_steps: end {time.time():.3f}", flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    main(args[0], *(args[1:3] if len(args) == 3 else (0, -1)))
