#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes a synthetic but realistic PyTorch CUDA memory snapshot (the dict that
torch.cuda.memory._dump_snapshot pickles: segments, blocks, device_traces with frames,
allocator_settings, external_annotations), from a small model of the caching allocator.

The simulated program is a training loop (train.py): weights are made at setup, optimizer state
at the first step, activations come and go every iteration, and with --leak the line
`kept.append(out * 1.0)` at train.py:42 keeps one tensor per iteration alive forever.

  make_snapshot.py OUT.pickle [--iterations N] [--events N] [--leak] [--no-annotations]
                              [--cpp-frames] [--seed S]

--events N keeps iterating until at least N trace entries exist (the benchmark uses 1,000,000).
Only the standard library is used; the output loads with pickle.load and with tensordiag.
"""
import argparse
import pickle
import random

MiB = 1 << 20
SMALL = 1 << 20            # requests up to 1 MiB go to 2 MiB small segments
SMALL_SEGMENT = 2 * MiB
LARGE_SEGMENT = 20 * MiB
TORCH = "/opt/venv/lib/python3.12/site-packages/torch"


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


class Stacks:
    """Interned tracebacks, shared like PyTorch's (one list object per unique stack)."""

    def __init__(self, cpp):
        self.cpp = cpp
        self.cache = {}

    def get(self, *frames):
        key = tuple(frames)
        if key not in self.cache:
            stack = []
            if self.cpp:
                stack += [frame("torch::unwind::unwind()", "??", 0),
                          frame("torch::CapturedTraceback::gather(bool, bool, bool)", "??", 0),
                          frame("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)",
                                "CUDACachingAllocator.cpp", 0)]
            stack += [frame(n, f, l) for (n, f, l) in frames]
            if self.cpp:
                stack += [frame("_PyEval_EvalFrameDefault", "??", 0), frame("Py_BytesMain", "??", 0)]
            self.cache[key] = stack
        return self.cache[key]


class Allocator:
    """First-fit caching allocator: segments split into blocks, adjacent free blocks merged."""

    def __init__(self, trace, clock):
        self.segments = []  # dicts with 'address', 'total_size', 'blocks': [[addr, size, state, req, frames]]
        self.trace = trace
        self.clock = clock
        self.next_address = 0x7F0000000000

    def _event(self, action, addr, size, frames):
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                           "time_us": self.clock(), "compile_context": "N/A", "user_metadata": "",
                           "frames": frames})

    def alloc(self, size, frames):
        small = size <= SMALL
        size = (size + 511) // 512 * 512
        for seg in self.segments:
            if (seg["segment_type"] == "small") != small:
                continue
            for i, b in enumerate(seg["blocks"]):
                if b[2] == "inactive" and b[1] >= size:
                    rest = b[1] - size
                    take = size if (rest >= 512 if small else rest > SMALL) else b[1]
                    seg["blocks"][i:i + 1] = [[b[0], take, "active_allocated", size, frames]] + \
                        ([[b[0] + take, b[1] - take, "inactive", 0, []]] if b[1] > take else [])
                    self._event("alloc", b[0], size, frames)
                    return b[0]
        total = SMALL_SEGMENT if small else max(LARGE_SEGMENT, (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB)
        addr = self.next_address
        self.next_address += total + 64 * MiB
        self.segments.append({"address": addr, "total_size": total, "segment_type": "small" if small else "large",
                              "frames": frames, "blocks": [[addr, total, "inactive", 0, []]]})
        self._event("segment_alloc", addr, total, frames)
        return self.alloc(size, frames)

    def free(self, addr, frames):
        for seg in self.segments:
            for i, b in enumerate(seg["blocks"]):
                if b[0] == addr and b[2] == "active_allocated":
                    self._event("free_requested", addr, b[3], frames)
                    self._event("free_completed", addr, b[3], frames)
                    b[2], b[3], b[4] = "inactive", 0, []
                    blocks = seg["blocks"]
                    if i + 1 < len(blocks) and blocks[i + 1][2] == "inactive":
                        b[1] += blocks[i + 1][1]
                        del blocks[i + 1]
                    if i > 0 and blocks[i - 1][2] == "inactive":
                        blocks[i - 1][1] += b[1]
                        del blocks[i]
                    return
        raise ValueError("double free")

    def dump(self):
        out = []
        for seg in sorted(self.segments, key=lambda s: s["address"]):
            blocks = [{"address": a, "size": s, "requested_size": r, "state": st, "frames": f}
                      for (a, s, st, r, f) in seg["blocks"]]
            allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            out.append({"device": 0, "address": seg["address"], "total_size": seg["total_size"],
                        "allocated_size": allocated, "active_size": allocated,
                        "requested_size": sum(b["requested_size"] for b in blocks), "stream": 0,
                        "segment_type": seg["segment_type"], "segment_pool_id": (0, 0),
                        "is_expandable": False, "frames": seg["frames"], "blocks": blocks})
        return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--events", type=int, default=0)
    p.add_argument("--leak", action="store_true")
    p.add_argument("--no-annotations", action="store_true")
    p.add_argument("--cpp-frames", action="store_true")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = random.Random(a.seed)
    now = [1796200892000000]

    def clock():
        now[0] += rng.randint(2, 40)
        return now[0]

    trace, annotations = [], []
    alloc = Allocator(trace, clock)
    st = Stacks(a.cpp_frames)
    mod = TORCH + "/nn/modules/module.py"
    setup = st.get(("convert", mod, 1370), ("_apply", mod, 965), ("cuda", mod, 1084), ("<module>", "train.py", 12))
    weights = [alloc.alloc(s, setup) for s in [4 * MiB, 4096, 4 * MiB, 4096, 8 * MiB, 16384, 512 * 1024]]
    layers = [st.get(("forward", TORCH + "/nn/modules/linear.py", 125), ("_call_impl", mod, 1784),
                     ("forward", "model.py", 20 + i), ("train_step", "train.py", 37), ("<module>", "train.py", 55))
              for i in range(3)]
    grad_stack = st.get(("backward", TORCH + "/autograd/__init__.py", 353), ("backward", TORCH + "/_tensor.py", 648),
                        ("train_step", "train.py", 39), ("<module>", "train.py", 55))
    opt_stack = st.get(("_init_group", TORCH + "/optim/adamw.py", 110), ("step", TORCH + "/optim/adamw.py", 210),
                       ("train_step", "train.py", 40), ("<module>", "train.py", 55))
    tmp_stack = st.get(("_multi_tensor_adamw", TORCH + "/optim/adamw.py", 501), ("step", TORCH + "/optim/adamw.py", 230),
                       ("train_step", "train.py", 40), ("<module>", "train.py", 55))
    leak_stack = st.get(("train_step", "train.py", 42), ("<module>", "train.py", 55))
    free_stack = st.get(("_free", TORCH + "/_tensor.py", 1), ("<module>", "train.py", 55))
    grads, optimizer_state, kept = [], [], []
    iteration = 0
    while iteration < a.iterations or len(trace) < a.events:
        acts = [alloc.alloc(s, layers[i % 3]) for i, s in enumerate([2 * MiB, 2 * MiB, 6 * MiB, 256 * 1024, 512, 3 * MiB])]
        if a.leak:
            kept.append(alloc.alloc(2 * MiB, leak_stack))  # train.py:42  kept.append(out * 1.0)
        if not grads:
            grads = [alloc.alloc(s, grad_stack) for s in [4 * MiB, 4096, 4 * MiB, 4096, 8 * MiB, 16384, 512 * 1024]]
        for x in reversed(acts):
            alloc.free(x, free_stack)
        start = now[0] + 1
        if not optimizer_state:
            optimizer_state = [alloc.alloc(s, opt_stack) for s in [4 * MiB, 4 * MiB, 8 * MiB, 8 * MiB]]
        temps = [alloc.alloc(s, tmp_stack) for s in [1024, 8 * MiB]]
        for x in temps:
            alloc.free(x, free_stack)
        annotations.append({"stage": "START", "name": "Optimizer.step#AdamW.step", "device": 0, "time_us": start})
        annotations.append({"stage": "END", "name": "Optimizer.step#AdamW.step", "device": 0, "time_us": clock()})
        iteration += 1
    snapshot = {
        "segments": alloc.dump(),
        "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.0, "expandable_segments": False,
                               "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}},
        "external_annotations": [] if a.no_annotations else annotations,
    }
    with open(a.out, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)
    print(f"{a.out}: {len(trace)} trace entries, {iteration} iterations, {len(alloc.segments)} segments")


if __name__ == "__main__":
    main()
