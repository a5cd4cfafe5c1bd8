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
    fr_trace_peer.py agree OUT_DIR [--tdiag PATH] [--ranks N] [--entries K] [--real DIR]
        writes small jobs with one planted fault each (a rank that skips a collective, a size,
        a dtype, a collective type and a state mismatch, a rank without a dump, a clean job) and
        copies the real dumps of tests/data/fr_real (plus a copy adjusted only where fr_trace
        cannot read them), runs fr_trace and `tdiag fr analyze --json` on each and prints one
        table: the planted truth, both verdicts, whether they agree on the mismatch kind and
        rank(s). fr_trace_agree.py says what fr_trace needs and prints.
    fr_trace_peer.py speed DIR [--tdiag PATH] [--repeat 3] [--ranks N] [--entries K]
        times fr_trace and `tdiag fr analyze DIR` (whole processes, interleaved, median of
        --repeat; tdiag also pinned to one core) on DIR (made as `make` does when it holds no
        dump) and prints both and the ratio.

fr_trace runs under --python (default: this interpreter); without torch there, the peer's
columns say so and our side still runs. tdiag is --tdiag, else build/bin/tdiag, else `tdiag` on
PATH. fr_trace_peer.sh runs make, run and the C++ benchmark (and speed where tdiag is built).
"""
import argparse
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import time

import fr_trace_agree


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


def resolve_tdiag(path):
    """--tdiag, else the build tree's, else the one on PATH; exits with a line when none."""
    candidates = [path] if path else [os.path.join(fr_trace_agree.ROOT, "build", "bin", "tdiag"),
                                      "tdiag"]
    for c in candidates:
        found = c if os.path.isfile(c) and os.access(c, os.X_OK) else shutil.which(c)
        if found:
            return os.path.abspath(found)
    sys.exit(f"no tdiag: tried {', '.join(candidates)} (build it, or pass --tdiag PATH)")


def timed(cmd, timeout, cpu=None):
    """(seconds, exit status or None past the timeout, its last words) of one process."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=pin)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, f"ran past {timeout} s"
    seconds = time.perf_counter() - t0
    return seconds, done.returncode, fr_trace_agree.failure(done.stdout + done.stderr)


def speed(args):
    tdiag = resolve_tdiag(args.tdiag)
    if not any(f.startswith("_dump_") for f in
               (os.listdir(args.dir) if os.path.isdir(args.dir) else [])):
        make(argparse.Namespace(dir=args.dir, ranks=args.ranks, entries=args.entries, stuck=5))
    files = [os.path.join(args.dir, f) for f in os.listdir(args.dir) if f.startswith("_dump_")]
    size = sum(os.path.getsize(f) for f in files) / 2**20
    version, why = fr_trace_agree.probe_peer(args.python)
    has_threads = "--threads" in subprocess.run([tdiag, "fr", "analyze", "--help"],
                                                capture_output=True, text=True).stdout
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    ours = [tdiag, "fr", "analyze", args.dir, "--json", "-o", os.devnull]
    kinds = {"tdiag": (ours, None)}
    if has_threads:
        kinds["tdiag --threads 1"] = (ours + ["--threads", "1"], None)
    elif cpus:
        kinds[f"tdiag pinned to cpu {cpus[0]}"] = (ours, cpus[0])
    if version:
        peer = [args.python, "-m", fr_trace_agree.FR_TRACE, args.dir, "--prefix", "_dump_"]
        kinds["fr_trace"] = (peer, None)
        kinds["python + import fr_trace"] = (
            [args.python, "-c", f"import {fr_trace_agree.FR_TRACE}"], None)
    print(f"speed: {args.dir}: {len(files)} dumps, {size:.1f} MiB; {args.repeat} runs of each, "
          f"interleaved; whole-process wall; {os.cpu_count()} cpus here")
    samples = {k: [] for k in kinds}
    for _ in range(args.repeat):
        for k, (cmd, cpu) in kinds.items():
            seconds, rc, last = timed(cmd, args.timeout, cpu)
            if rc is None or (rc != 0 and not (k.startswith("tdiag") and rc == 1)):
                print(f"  {k} failed (exit {rc}): {last[-300:]}")
                return 1
            samples[k].append(seconds)
    median = {k: statistics.median(v) for k, v in samples.items()}
    threads = ("--threads 1 exists" if has_threads else
               f"no --threads option: it runs hardware_concurrency() = {os.cpu_count()} threads")
    for k, v in samples.items():
        runs = ", ".join(f"{x:.3f}" for x in v)
        print(f"  {k:28} median {median[k]:8.3f} s  ({runs})")
    print(f"  tdiag: {threads}")
    if not version:
        print(f"  fr_trace not run: {why}; no ratio")
        return 0
    print(f"  fr_trace: PyTorch {version} under {args.python}")
    for k in median:
        if k.startswith("tdiag"):
            ratio = median["fr_trace"] / median[k]
            print(f"  ratio fr_trace / {k}: {ratio:.1f}x (goal >= 100x: "
                  f"{'met' if ratio >= 100 else 'not met'})")
    print(f"peer seconds: {median['fr_trace']:.3f}")
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
    a = sub.add_parser("agree", help="both analyzers on planted faults and the real dumps")
    a.add_argument("out_dir")
    a.add_argument("--ranks", type=int, default=6)
    a.add_argument("--entries", type=int, default=50)
    a.add_argument("--faulty", type=int, default=-1, help="the planted rank (default: ranks/2)")
    a.add_argument("--real", help="real dumps, one folder per job (default: tests/data/fr_real)")
    s = sub.add_parser("speed", help="fr_trace and tdiag fr analyze timed in one run")
    s.add_argument("dir")
    s.add_argument("--ranks", type=int, default=64)
    s.add_argument("--entries", type=int, default=2000)
    s.add_argument("--repeat", type=int, default=3)
    for x in (a, s):
        x.add_argument("--tdiag", help="the tdiag binary (default: build/bin/tdiag, else PATH)")
        x.add_argument("--python", default=sys.executable, help="the Python that runs fr_trace")
        x.add_argument("--timeout", type=float, default=600, help="seconds per process")
    args = p.parse_args()
    if args.what == "agree":
        return fr_trace_agree.agree(args, resolve_tdiag(args.tdiag))
    return {"make": make, "run": run, "speed": speed}[args.what](args)


if __name__ == "__main__":
    sys.exit(main() or 0)
