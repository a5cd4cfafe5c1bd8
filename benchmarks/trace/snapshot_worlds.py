#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes memory snapshots laid out as `torch.cuda.memory._snapshot()` lays them out, in shapes
neither tdiag_gen_traces, make_snapshot.py nor snapshot_shapes.py write, so that the importer's
speed and memory can be checked on inputs it was not tuned on. Written independently of those
generators, from the dict layout of the real snapshots in ../shared (docs/trace-formats.md 1.2):

- `segments`: one dict per cudaMalloc'd segment (device, address, total_size, allocated_size,
  active_size, requested_size, stream, segment_type, segment_pool_id, is_expandable, frames,
  blocks), each block {address, size, requested_size, state, frames};
- `device_traces`: one list per device of entries {action, addr, size, stream, time_us,
  compile_context, user_metadata, frames} (`device_free` instead of `addr` for `oom`);
- a traceback is a list of frame dicts {name, filename, line}; as torch symbolizes them, one
  frame dict object is shared by every traceback holding that frame, and one list object by
  every entry with the same traceback, so the pickle memo shares them on disk; C++ frames
  (`??`, line 0) sit innermost when stacks="all".

  snapshot_worlds.py OUT.pickle SHAPE EVENTS [--protocol N] [--seed S]
  snapshot_worlds.py OUT.pickle recorded EVENTS --from SNAPSHOT.pickle

SHAPE:
  fragmented  2 devices, thousands of segments of 20-200 small blocks each, short stacks
  deep        one device, 50-150 frames per traceback (C++ and Python), 100k+ distinct ones
  devices     8 devices, 40 streams each (stream ids as cudaStream_t pointers), big addresses
  notime      PyTorch 2.1 style: no time_us, no compile_context / user_metadata, C++ frames
  mixed       all of the above at once, with oom and snapshot markers, segment_map/unmap
  recorded    a snapshot PyTorch wrote (--from, e.g. ../shared/traces/train_snapshot.pickle) with
              its history repeated, each time later by its span, to EVENTS entries: the
              training loop of a real recording, pickled again by pickle.dump
Standard library only.
"""
import argparse
import pickle
import random

CXX = ["torch::unwind::unwind()", "torch::CapturedTraceback::gather(bool, bool, bool)",
       "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, "
       "unsigned long, CUstream_st*)", "at::native::empty_cuda(c10::ArrayRef<long>, ...)",
       "at::_ops::empty_strided::call(...)", "at::TensorBase::to(...)", "_start", "__libc_start_main",
       "PyObject_Call", "_PyEval_EvalFrameDefault", "PyEval_EvalCode", "Py_RunMain"]


class world:
    def __init__(self, rng, n_py_frames, n_files, n_tracebacks, depth, cxx):
        self.rng = rng
        files = [f"/home/user/.venv/lib/python3.11/site-packages/pkg{i // 40}/sub{i % 7}/m{i}.py"
                 for i in range(n_files)]
        names = [f"{rng.choice(['forward', 'backward', '_call_impl', 'step', 'run'])}_{i}"
                 for i in range(n_py_frames // 2 + 1)]
        # One dict object per distinct frame, shared by every traceback (torch's symbolizer).
        self.py = [{"name": rng.choice(names), "filename": rng.choice(files),
                    "line": rng.randint(1, 4000)} for _ in range(n_py_frames)]
        self.cxx = [{"name": n, "filename": "??", "line": 0} for n in CXX] if cxx else []
        self.tracebacks = [self._traceback(depth) for _ in range(n_tracebacks)]
        self.hot = self.tracebacks[: max(1, n_tracebacks // 50)]

    def _traceback(self, depth):
        lo, hi = depth
        n = self.rng.randint(lo, hi)
        ncxx = min(len(self.cxx), n // 3)
        frames = self.cxx[:ncxx] + [self.rng.choice(self.py) for _ in range(n - ncxx)]
        return frames  # one list object, shared by every entry that uses it

    def pick(self):
        # Skewed: a few hot tracebacks (the training loop), a long tail of others.
        if self.rng.random() < 0.6:
            return self.rng.choice(self.hot)
        return self.rng.choice(self.tracebacks)


SHAPES = {
    #            py frames, files, tracebacks, depth, cxx, devices, streams/dev, time, extras
    "fragmented": dict(py=800, files=60, tb=3000, depth=(3, 12), cxx=False, dev=2, streams=2,
                       time=True, ctx=True, seg_blocks=(20, 200), markers=False),
    "deep": dict(py=20000, files=900, tb=120000, depth=(50, 150), cxx=True, dev=1, streams=1,
                 time=True, ctx=True, seg_blocks=(1, 4), markers=False),
    "devices": dict(py=3000, files=200, tb=8000, depth=(8, 30), cxx=False, dev=8, streams=40,
                    time=True, ctx=True, seg_blocks=(1, 8), markers=False),
    "notime": dict(py=2000, files=150, tb=6000, depth=(20, 70), cxx=True, dev=4, streams=3,
                   time=False, ctx=False, seg_blocks=(1, 6), markers=False),
    "mixed": dict(py=12000, files=500, tb=40000, depth=(2, 130), cxx=True, dev=8, streams=12,
                  time=True, ctx=True, seg_blocks=(5, 120), markers=True),
}


def build(shape, n_events, seed):
    p = SHAPES[shape]
    rng = random.Random(seed)
    w = world(rng, p["py"], p["files"], p["tb"], p["depth"], p["cxx"])
    devices = p["dev"]
    streams = [[0] + [0x55D0_0000_0000 + rng.randrange(1 << 32) * 16 for _ in range(p["streams"] - 1)]
               for _ in range(devices)]
    traces = [[] for _ in range(devices)]
    segments = []
    t0 = 1_733_400_000_000_000 + rng.randrange(10**9)
    time_us = [t0] * devices
    meta = ["", "", "", "step=1", "epoch 3 / step 1200"]

    def entry(dev, action, addr, size, stream, frames):
        e = {"action": action, ("device_free" if action == "oom" else "addr"): addr, "size": size,
             "stream": stream}
        if p["time"]:
            time_us[dev] += rng.randint(0, 40)
            e["time_us"] = time_us[dev]
        if p["ctx"]:
            e["compile_context"] = "N/A"
            e["user_metadata"] = rng.choice(meta) if p["markers"] else ""
        e["frames"] = frames
        traces[dev].append(e)

    # Segments: each a cudaMalloc split into blocks, with live and cached blocks at the end.
    seg_addr = [0x7F00_0000_0000 + d * (1 << 40) for d in range(devices)]
    open_blocks = [[] for _ in range(devices)]  # (addr, size, stream) free to hand out
    live = [[] for _ in range(devices)]
    produced = 0
    while produced < n_events:
        dev = rng.randrange(devices)
        stream = rng.choice(streams[dev])
        r = rng.random()
        if not open_blocks[dev] or r < 0.01:
            lo, hi = p["seg_blocks"]
            nblocks = rng.randint(lo, hi)
            bsize = rng.choice([512, 4096, 65536, 1 << 20]) if nblocks > 8 else rng.choice(
                [1 << 21, 1 << 22, 20 << 20])
            total = nblocks * bsize
            base = seg_addr[dev]
            seg_addr[dev] += total + (1 << 21)
            kind = "segment_map" if p["markers"] and rng.random() < 0.2 else "segment_alloc"
            entry(dev, kind, base, total, stream, w.pick())
            produced += 1
            blocks = [{"address": base + i * bsize, "size": bsize, "requested_size": bsize - 64,
                       "state": "inactive", "frames": []} for i in range(nblocks)]
            segments.append({"device": dev, "address": base, "total_size": total,
                             "allocated_size": 0, "active_size": 0, "requested_size": 0,
                             "stream": stream, "segment_type": "small" if bsize < (1 << 20)
                             else "large", "segment_pool_id": (0, 0), "is_expandable": False,
                             "frames": w.pick(), "blocks": blocks})
            open_blocks[dev].extend((b, stream) for b in blocks)
            continue
        if live[dev] and (r < 0.5 or len(live[dev]) > 20000):
            b, s, frames = live[dev].pop(rng.randrange(len(live[dev])))
            entry(dev, "free_requested", b["address"], b["size"], s, frames)
            entry(dev, "free_completed", b["address"], b["size"], s, frames)
            b["state"], b["frames"] = "inactive", []
            open_blocks[dev].append((b, s))
            produced += 2
        else:
            b, s = open_blocks[dev].pop(rng.randrange(len(open_blocks[dev])))
            frames = w.pick()
            entry(dev, "alloc", b["address"], b["size"], s, frames)
            b["state"], b["frames"] = "active_allocated", frames
            live[dev].append((b, s, frames))
            produced += 1
        if p["markers"] and rng.random() < 0.0005:
            entry(dev, rng.choice(["snapshot", "oom"]), 0, 1 << 30, stream, w.pick())
            produced += 1
    for s in segments:
        s["allocated_size"] = s["active_size"] = sum(
            b["size"] for b in s["blocks"] if b["state"] != "inactive")
        s["requested_size"] = sum(
            b["requested_size"] for b in s["blocks"] if b["state"] != "inactive")
    snap = {"segments": segments, "device_traces": traces}
    if p["ctx"]:
        snap["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                      "garbage_collection_threshold": 0.0,
                                      "expandable_segments": False,
                                      "roundup_power2_divisions": {"1": 1, "2": 1}}
        snap["external_annotations"] = [
            {"stage": st, "name": "Optimizer.step#AdamW.step", "device": 0, "time_us": t0 + i}
            for i, st in enumerate(["START", "END"] * 4)]
    return snap, produced


def recorded(path, events):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    history = next(t for t in snap["device_traces"] if t)
    span = history[-1].get("time_us", 0) - history[0].get("time_us", 0) + 1
    out = []
    while len(out) < events:
        shift = span * (len(out) // len(history))
        out.extend({**e, "time_us": e["time_us"] + shift} if "time_us" in e else dict(e)
                   for e in history[:events - len(out)])
    snap["device_traces"] = [out if t is history else t for t in snap["device_traces"]]
    return snap, len(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("shape", choices=sorted(SHAPES) + ["recorded"])
    ap.add_argument("events", type=int)
    ap.add_argument("--protocol", type=int, default=4)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--from", dest="source", help="the snapshot a recorded shape repeats")
    a = ap.parse_args()
    if a.shape == "recorded" and not a.source:
        ap.error("the recorded shape needs --from SNAPSHOT.pickle")
    snap, produced = (recorded(a.source, a.events) if a.shape == "recorded" else
                      build(a.shape, a.events, a.seed))
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=a.protocol)
    print(f"{a.out}: {a.shape}, {produced} trace entries, {len(snap['segments'])} segments, "
          f"{sum(len(s['blocks']) for s in snap['segments'])} blocks")


if __name__ == "__main__":
    main()
