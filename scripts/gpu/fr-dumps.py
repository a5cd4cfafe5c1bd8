#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Real PyTorch Flight Recorder dumps with planted faults (issue 37), for `tdiag fr analyze`.

Each scenario starts WORLD gloo processes on 127.0.0.1 (one subprocess per rank, every one
bounded by a deadline), runs a few all_reduces, plants its fault, and has every surviving rank
dump its Flight Recorder ring (pickle in OUT/SCENARIO, JSON in OUT/SCENARIO-json) from a timer
thread while the collective hangs, as a watchdog would. It writes truth.json per scenario, then runs PyTorch's
own analyzer (`python -m torch.distributed.flight_recorder.fr_trace`) on the same dumps and,
when --tdiag is given, `tdiag fr analyze`, and prints a summary.

    python3 scripts/gpu/fr-dumps.py --out fr-real [--world 4] [--tdiag build/bin/tdiag]
                                    [--scenarios skip,size,...] [--hang 12]

Needs PyTorch (2.11 was the target; the dump API is looked up among the names PyTorch used);
no GPU for the gloo scenarios; `nccl_single` runs only where CUDA and NCCL are available.
"""
import argparse
import datetime
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time

SCENARIOS = {
    # name: (truth culprits {rank: cause}, description)
    "matched": ({}, "every rank runs the same all_reduces; nothing is stuck"),
    "skip": ({2: "desync"}, "rank 2 skips all_reduce #7 and issues a broadcast"),
    "size": ({1: "desync"}, "rank 1's all_reduce #7 has twice the elements"),
    # gloo aborts a rank whose message size differs before it can dump: `no_dump` is then
    # the cause the dumps can show (tests/data/fr_real/README.md).
    "dtype": ({3: "desync"}, "rank 3's all_reduce #7 is float16, the others float32"),
    "host_stuck": ({2: "not_reached"}, "rank 2 sleeps (GIL released) instead of all_reduce #7"),
    "gil_held": ({2: "no_dump"}, "rank 2 holds the GIL in a C sleep: its dump thread never runs"),
    "killed": ({3: "no_dump"}, "rank 3 is killed (SIGKILL) right after issuing all_reduce #7"),
    "nccl_single": ({}, "one NCCL rank (needs CUDA): the NCCL recorder's dump format"),
    "collectives": ({}, "every rank runs each gather/scatter family call gloo has; none stuck"),
}
WARMUP = 6  # all_reduces every rank completes before the fault


def dump_api(json_form):
    """The first dump function of this PyTorch that returns a ring, and how to call it."""
    import torch

    c10d = torch._C._distributed_c10d
    names = (["_dump_fr_trace_json", "_dump_nccl_trace_json"] if json_form
             else ["_dump_fr_trace", "_dump_nccl_trace"])
    if json_form:
        calls = [dict(backend="gloo"), {}, dict(includeCollectives=True, onlyActive=False)]
        positional = [(True, False), ()]
    else:
        calls = [dict(backend="gloo"), {},
                 dict(includeCollectives=True, includeStackTraces=True, onlyActive=False)]
        positional = [(True, True, False, "gloo"), (True, True, False), ()]
    tried = []
    for name in names:
        fn = getattr(c10d, name, None)
        if fn is None:
            tried.append(f"{name}: absent")
            continue
        for kw in calls:
            tried.append(f"{name}(**{kw})")
            try:
                yield name, fn(**kw)
            except Exception as e:  # a signature this version lacks: try the next
                tried[-1] += f": {type(e).__name__}: {e}"
        for args in positional:
            tried.append(f"{name}{args}")
            try:
                yield name, fn(*args)
            except Exception as e:  # a signature this version lacks: try the next
                tried[-1] += f": {type(e).__name__}: {e}"
    sys.stderr.write("dump attempts:\n  " + "\n  ".join(tried) + "\n")


def entries_in(payload, json_form):
    try:
        data = json.loads(payload) if json_form else pickle.loads(payload)
        return len(data.get("entries") or [])
    except Exception:  # a payload that does not parse is not the ring we want
        return -1


def write_dump(out_dir, rank):
    """Writes the ring with the most entries, pickle and JSON; returns the API used."""
    used = []
    for json_form, path in ((False, os.path.join(out_dir, f"_dump_{rank}")),
                            (True, os.path.join(out_dir + "-json", f"_dump_{rank}.json"))):
        best = None
        for name, payload in dump_api(json_form):
            if isinstance(payload, str):
                payload = payload.encode()
            n = entries_in(payload, json_form)
            if best is None or n > best[0]:
                best = (n, name, payload)
        if best is None:
            continue
        with open(path + ".tmp", "wb") as f:
            f.write(best[2])
        os.replace(path + ".tmp", path)
        used.append(f"{best[1]} ({best[0]} entries)")
    return used


def worker(args):
    import torch
    import torch.distributed as dist

    rank, world, scenario = args.rank, args.world, args.scenario
    backend = "nccl" if scenario == "nccl_single" else "gloo"
    out = args.out
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{args.port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=args.hang * 4))
    device = "cuda" if backend == "nccl" else "cpu"

    def dump_and_exit():
        used = write_dump(out, rank)
        sys.stderr.write(f"rank {rank}: dumped with {used}\n")
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(args.hang, dump_and_exit)
    timer.daemon = True
    timer.start()
    t = torch.ones(4, 4, device=device)
    for _ in range(WARMUP):
        dist.all_reduce(t)
    try:
        if scenario == "skip" and rank == 2:
            dist.broadcast(t, src=0)
        elif scenario == "size" and rank == 1:
            dist.all_reduce(torch.ones(8, 4, device=device))
        elif scenario == "dtype" and rank == 3:
            dist.all_reduce(torch.ones(4, 4, device=device, dtype=torch.float16))
        elif scenario == "host_stuck" and rank == 2:
            time.sleep(args.hang * 10)
        elif scenario == "gil_held" and rank == 2:
            import ctypes

            # PyDLL keeps the GIL across the call: no other thread of this process runs.
            ctypes.PyDLL(None).sleep(int(args.hang * 10))
        elif scenario == "killed" and rank == 3:
            work = dist.all_reduce(t, async_op=True)
            os.kill(os.getpid(), signal.SIGKILL)
            work.wait()
        elif scenario in ("collectives", "nccl_single"):
            run_collectives(dist, t, world, rank)
        else:
            dist.all_reduce(t)
    except Exception as e:  # gloo may fail a mismatched call; the ring is what we want
        sys.stderr.write(f"rank {rank}: the faulty step raised {type(e).__name__}: {e}\n")
    if scenario in ("matched", "nccl_single", "collectives"):
        if device == "cuda":
            torch.cuda.synchronize()
        timer.cancel()
        dump_and_exit()
    time.sleep(args.hang * 10)  # the timer dumps and exits


def run_collectives(dist, t, world, rank):
    """The gather/scatter family, each as every rank calls it right (list and flat forms): what
    the element-count rules must not call a divergence. A call this backend lacks is skipped."""
    import torch

    calls = [
        ("all_gather", lambda: dist.all_gather([torch.empty_like(t) for _ in range(world)], t)),
        ("all_gather_into_tensor",
         lambda: dist.all_gather_into_tensor(t.new_empty(world * t.shape[0], *t.shape[1:]), t)),
        ("reduce_scatter_tensor",
         lambda: dist.reduce_scatter_tensor(torch.empty_like(t),
                                            t.repeat(world, *([1] * (t.dim() - 1))))),
        ("reduce_scatter",
         lambda: dist.reduce_scatter(torch.empty_like(t), [t.clone() for _ in range(world)])),
        ("all_to_all_single",
         lambda: dist.all_to_all_single(torch.empty(world * 2, device=t.device),
                                        torch.ones(world * 2, device=t.device))),
        ("gather", lambda: dist.gather(t, [torch.empty_like(t) for _ in range(world)]
                                       if rank == 0 else None, dst=0)),
        ("scatter", lambda: dist.scatter(torch.empty_like(t), [t.clone() for _ in range(world)]
                                         if rank == 0 else None, src=0)),
        ("broadcast", lambda: dist.broadcast(t, src=0)),
        ("all_reduce", lambda: dist.all_reduce(t)),
    ]
    for name, call in calls:
        try:
            call()
        except Exception as e:  # not on this backend: every rank skips it alike
            sys.stderr.write(f"rank {rank}: {name} skipped: {type(e).__name__}: {e}\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_bounded(cmd, timeout, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", (e.stderr or "") + "\n[timeout]")


def run_fr_trace(folder):
    return run_bounded([sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace",
                        folder, "--prefix", "_dump_", "--allow-incomplete-ranks"], 600)


def named_copy(folder):
    """The folder's pickled dumps with a nameless pg_config entry named as the entries name it."""
    out = folder.rstrip("/") + "-named"
    os.makedirs(out, exist_ok=True)
    for f in sorted(os.listdir(folder)):
        if not f.startswith("_dump_"):
            continue
        with open(os.path.join(folder, f), "rb") as fh:
            d = pickle.load(fh)
        config = d.get("pg_config") or {}
        names = {tuple(e.get("process_group") or ())[:2] for e in d.get("entries", [])}
        if "" in config and len(names) == 1:
            name, desc = next(iter(names))
            config[name] = dict(config.pop(""), name=name, desc=desc)
        with open(os.path.join(out, f), "wb") as fh:
            pickle.dump(d, fh)
    return out


def run_scenario(name, args):
    culprits, description = SCENARIOS[name]
    world = 1 if name == "nccl_single" else args.world
    folder = os.path.join(args.out, name)
    # The JSON form beside the folder, not in it: fr_trace walks sub-folders and unpickles all.
    os.makedirs(folder, exist_ok=True)
    os.makedirs(folder + "-json", exist_ok=True)
    env = dict(os.environ, TORCH_FR_BUFFER_SIZE="2000", TORCH_NCCL_TRACE_BUFFER_SIZE="2000",
               TORCH_FR_DUMP_TEMP_FILE=os.path.join(folder, "_dump_"),
               TORCH_NCCL_ENABLE_TIMING="1", TORCH_NCCL_DUMP_ON_TIMEOUT="0")
    port = free_port()
    procs = []
    for rank in range(world):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--scenario", name,
               "--rank", str(rank), "--world", str(world), "--port", str(port),
               "--out", folder, "--hang", str(args.hang)]
        log = open(os.path.join(folder, f"rank{rank}.log"), "w")
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    deadline = time.time() + args.hang + 60
    for p, log in procs:
        try:
            p.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()  # a rank past its deadline (the GIL holder) leaves what it wrote
            p.wait()
        log.close()
    truth = {"description": description, "stuck": bool(culprits),
             "culprits": {str(k): v for k, v in culprits.items()},
             "exit_codes": [p.returncode for p, _ in procs]}
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2, sort_keys=True)
        f.write("\n")
    result = {"scenario": name, "truth": truth["culprits"]}
    t0 = time.perf_counter()
    peer = run_fr_trace(folder)
    result["fr_trace_seconds"] = round(time.perf_counter() - t0, 3)
    with open(os.path.join(folder, "fr_trace.txt"), "w") as f:
        f.write(f"exit {peer.returncode}\n{peer.stdout}\n{peer.stderr}")
    result["fr_trace_exit"] = peer.returncode
    if peer.returncode != 0 and "KeyError" in peer.stderr:
        # PyTorch 2.11's fr_trace stops on gloo's nameless pg_config entry; on a copy whose entry
        # carries the entries' group name it runs: its verdict on the same rings.
        fixed = named_copy(folder)
        peer = run_fr_trace(fixed)
        result["fr_trace_named_copy_exit"] = peer.returncode
        result["fr_trace_named_copy"] = (peer.stdout.strip().splitlines() or [""])[-12:]
    if args.tdiag:
        t0 = time.perf_counter()
        mine = run_bounded([args.tdiag, "fr", "analyze", folder, "--world-size", str(world),
                            "--json", "-o", os.path.join(folder, "tdiag.json")], 600)
        result["tdiag_seconds"] = round(time.perf_counter() - t0, 3)
        result["tdiag_exit"] = mine.returncode
        try:
            with open(os.path.join(folder, "tdiag.json")) as f:
                verdict = json.load(f)
            result["tdiag"] = {str(c["rank"]): c["cause"] for c in verdict["culprits"]}
            # The planted rank is the truth; its cause is what the dumps of the run can show
            # (a rank that died before dumping is `no_dump`, whatever was planted in it).
            result["agrees"] = sorted(result["tdiag"]) == sorted(result["truth"])
        except (OSError, ValueError, KeyError) as e:
            result["tdiag_error"] = f"{e}: {mine.stderr.strip()[-300:]}"
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default="fr-real-dumps")
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--hang", type=float, default=12.0,
                   help="seconds after which every rank dumps (and the hang is declared)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--tdiag", help="a tdiag binary to run on each scenario")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--scenario", help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    import torch

    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}; dump functions: "
          f"{sorted(n for n in dir(torch._C._distributed_c10d) if 'dump' in n)}")
    results = []
    for name in args.scenarios.split(","):
        if name == "nccl_single" and not (torch.cuda.is_available()
                                          and torch.distributed.is_nccl_available()):
            print(f"{name}: skipped (no CUDA or no NCCL)")
            continue
        r = run_scenario(name, args)
        results.append(r)
        print(json.dumps(r, sort_keys=True))
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    agree = [r for r in results if r.get("agrees")]
    print(f"{len(agree)} of {len(results)} scenarios: tdiag names the planted ranks, no other"
          if args.tdiag else f"{len(results)} scenarios dumped under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main() or 0)
