#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The peer of benchmarks/trace/fr_bench.cpp: PyTorch's own Flight Recorder analyzer.

    fr_trace_peer.py make DIR [--ranks N] [--entries K] [--stuck R]
        writes N pickled dumps (_dump_0 ...) of K collectives each (standard library only),
        rank R stopping one all_reduce short: the same job the C++ benchmark times with --dir.
    fr_trace_peer.py run DIR [--timeout S]
        times `python -m torch.distributed.flight_recorder.fr_trace DIR` and prints
        "peer seconds: X" (or why it could not run: no torch, a failure, the timeout).

fr_trace_peer.sh does both and runs the C++ benchmark on the same folder.
"""
import argparse
import os
import pickle
import subprocess
import sys
import time


def make(args):
    if not 0 <= args.stuck < args.ranks:
        args.stuck = args.ranks // 2
    os.makedirs(args.dir, exist_ok=True)
    frames = [
        {"name": "all_reduce", "filename": "torch/distributed/distributed_c10d.py", "line": 2696},
        {"name": "train_step", "filename": "train.py", "line": 42},
    ]
    ranks_text = "[" + ", ".join(str(r) for r in range(args.ranks)) + "]"
    for rank in range(args.ranks):
        count = args.entries - 1 if rank == args.stuck else args.entries
        entries = []
        for i in range(count):
            last = i == args.entries - 1
            entries.append({
                "record_id": i, "pg_id": 0, "process_group": ("0", "default_pg"),
                "collective_seq_id": i + 1, "p2p_seq_id": 0, "op_id": i + 1,
                "profiling_name": "nccl:all_reduce", "time_created_ns": 10**18 + i * 10**6,
                "duration_ms": None if last else 0.5,
                "input_sizes": [[1024, 1024]], "input_dtypes": ["Float"],
                "output_sizes": [[1024, 1024]], "output_dtypes": ["Float"],
                "state": "started" if last else "completed",
                "time_discovered_started_ns": 10**18 + i * 10**6 + 10,
                "time_discovered_completed_ns": None if last else 10**18 + i * 10**6 + 100,
                "retired": not last, "timeout_ms": 600000, "is_p2p": False,
                "frames": frames, "thread_id": "1", "thread_name": "pt_main_thread",
            })
        dump = {"version": "2.10", "comm_lib_version": "2.21.5",
                "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": ranks_text}},
                "pg_status": {"0": {"last_enqueued_collective": count,
                                    "last_started_collective": count,
                                    "last_completed_collective": count - (rank != args.stuck)}},
                "entries": entries}
        with open(os.path.join(args.dir, f"_dump_{rank}"), "wb") as f:
            pickle.dump(dump, f, protocol=4)
    print(f"wrote {args.ranks} dumps of {args.entries} entries to {args.dir} "
          f"(rank {args.stuck} stops one all_reduce short)")


def run(args):
    try:
        import torch  # noqa: F401  (only whether it is there)
    except ImportError:
        print("peer: torch is not installed here; no peer time")
        return 0
    cmd = [sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace", args.dir,
           "--prefix", "_dump_"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"peer: fr_trace ran past {args.timeout} s; no peer time")
        return 0
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        print(f"peer: fr_trace failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
        return 0
    tail = "\n".join(done.stdout.strip().splitlines()[-5:])
    print(f"peer output (last lines):\n{tail}")
    print(f"peer seconds: {seconds:.3f}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--ranks", type=int, default=64)
    m.add_argument("--entries", type=int, default=2000)
    m.add_argument("--stuck", type=int, default=5)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--timeout", type=float, default=1800)
    args = p.parse_args()
    return make(args) if args.what == "make" else run(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
