#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Loading a Kineto trace through Python against the CLI, and its kernels into pandas.

Targets (issue 19): load + summary through Python costs at most 5% more than `tdiag trace
summary` on the same file; pandas.DataFrame(trace.kernels) under 0.1 s. json.load of the same
file (gzip + json) is printed beside them as the pure-Python peer.

  PYTHONPATH=build/python python3 benchmarks/python/load_bench.py [FILE] [--tdiag build/bin/tdiag]
      [--repeat N]
Prints each figure as the best of N runs (default 5); with --strict, exits 1 when a target is
missed (CTest runs it without: timings on a shared machine are not test results).
"""

import argparse
import gc
import gzip
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent


def best_of(repeat, fn):
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?",
                        default=str(REPO.parent / "shared/traces/train_trace_large.json.gz"))
    parser.add_argument("--tdiag", default=os.environ.get("TDIAG_CLI",
                                                          str(REPO / "build/bin/tdiag")))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    if not os.path.exists(args.file):
        print(f"load_bench: {args.file} not found; skipped")
        return 0
    from tensordiag import trace

    size = os.path.getsize(args.file) / 2**20
    print(f"load_bench: {args.file} ({size:.1f} MiB), best of {args.repeat}")

    python_load = best_of(args.repeat, lambda: trace.load(args.file))
    python_total = best_of(args.repeat, lambda: trace.load(args.file).summary())
    status = 0
    if os.path.exists(args.tdiag):
        cmd = [args.tdiag, "trace", "summary", args.file, "--format", "json", "-o", os.devnull]
        cli_total = best_of(args.repeat, lambda: subprocess.run(cmd, check=False,
                                                                stderr=subprocess.DEVNULL))
        overhead = python_total / cli_total - 1
        verdict = "ok" if overhead <= 0.05 else "MISSED"
        print(f"  python load + summary  {python_total:.3f} s   (trace.load alone {python_load:.3f} s)")
        print(f"  tdiag trace summary    {cli_total:.3f} s   (whole process)")
        print(f"  python vs CLI          {overhead * 100:+.1f}%  (target <= +5%: {verdict})")
        status |= verdict != "ok"
    else:
        print(f"  python trace.load      {python_load:.3f} s   ({args.tdiag} not found: no CLI peer)")

    try:
        import pandas as pd
    except ImportError:
        print("  pandas not installed: DataFrame figure skipped")
    else:
        t = trace.load(args.file)
        frame = best_of(args.repeat, lambda: pd.DataFrame(t.kernels))
        rows = len(t.kernels["start_ns"])
        verdict = "ok" if frame < 0.1 else "MISSED"
        print(f"  DataFrame(kernels)     {frame * 1000:.2f} ms for {rows} kernels "
              f"(target < 100 ms: {verdict})")
        status |= verdict != "ok"

    def peer():
        with gzip.open(args.file, "rb") as f:
            json.load(f)

    print(f"  json.load (peer)       {best_of(max(1, min(args.repeat, 3)), peer):.3f} s   "
          "(gzip + json, dicts only, no analysis)")
    return status if args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
