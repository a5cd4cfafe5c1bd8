#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Tiny per-rank Kineto traces of the job whose Flight Recorder dumps are
tests/data/fr/host_stuck (4 ranks; rank 2 never reaches all_reduce #5), for
`tdiag fr analyze DUMPS --traces RUN/` (tests/cli/fr_tests.cmake).

Each rank runs 3 ProfilerSteps of two gemm kernels then an NCCL all-reduce of
the whole job. Rank 2 computes longer before every all-reduce (a straggler by
compute: the others wait on it), and in the last step its host never launches
the all-reduce: its trace ends on `embedding_backward_kernel`, while the other
ranks' last kernel is the all-reduce they wait in.

    python3 tests/data/fr_traces/make_traces.py   # rewrites host_stuck/rank-*.json
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS = 4
STUCK = 2
STEPS = 3
BASE_NS = 1_700_000_000_000_000_000


def rank_trace(rank):
    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    ]
    correlation = 1
    t = 1000.0  # us
    for step in range(1, STEPS + 1):
        start = t
        kernels = [("gemm_fwd_kernel", 40.0), ("gemm_bwd_kernel", 60.0)]
        if rank == STUCK:
            kernels.append(("embedding_backward_kernel", 150.0))
        for name, dur in kernels:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": t, "dur": 4.0,
                           "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                           "ts": t + 5.0, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": correlation}})
            correlation += 1
            t += 5.0 + dur
        arrive = 1000.0 + (step - 1) * 500.0 + 5.0 + 100.0 + 5.0 + 150.0 + 5.0 + 5.0
        last_step_stuck = step == STEPS and rank == STUCK
        if not last_step_stuck:
            # Every rank leaves the all-reduce together once rank 2 arrives; in the last step
            # rank 2 never does and the others' kernels run until the dump (200 us on).
            end = arrive + 50.0 if step < STEPS else arrive + 200.0
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": t, "dur": 4.0,
                           "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel",
                           "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                           "pid": 0, "tid": 20, "ts": t + 5.0, "dur": end - (t + 5.0),
                           "args": {"device": 0, "stream": 20, "correlation": correlation}})
            correlation += 1
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": start, "dur": 490.0, "args": {}})
        t = 1000.0 + step * 500.0
    return {"schemaVersion": 1, "baseTimeNanoseconds": BASE_NS,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": RANKS},
            "traceEvents": events}


def main():
    out = os.path.join(HERE, "host_stuck")
    os.makedirs(out, exist_ok=True)
    for rank in range(RANKS):
        with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
            json.dump(rank_trace(rank), f, indent=None, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
