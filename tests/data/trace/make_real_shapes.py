#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes small synthetic reproductions of what real writers put in Kineto traces and memory
snapshots (issue 36), one class per file, into real_shapes/ next to this script.

The real artifacts (public repositories' traces and snapshots) may not be committed; these
files reproduce each shape that made one of them fail, with figures small enough to count by
hand (tests/trace/formats/real_shapes_test.cpp pins them):

Kineto (JSON):
  string_numbers.json     ROCm writes memcpy "bytes" (and some ids) as strings: "128"
  metadata_first.json     a benchmark harness's 16 KiB "metadata" object before traceEvents
  toplevel_array.json     the 2021 layout: the top level is the traceEvents array itself
  compute_properties.json computeProperties where newer Kineto writes deviceProperties
  rank_only.json          distributedInfo holding only "rank"; float-us times with ns digits
  gpu_only.json           kernels, runtime calls and flows, no CPU ops
  kineto_2021.json        Kineto before mid-2021: categories Kernel/Memcpy/Runtime/Operator,
                          launch flows of cat "async", GPU tids "stream 7", "external id"
  skipped_kinds.json      async b/e events, flows without their other end, an X without dur,
                          an X with a negative dur
  triton_compile.json     torch.compile (Inductor): a cpu_op per Triton launch whose "grid" is
                          Python ("grid(100,)"), launched through the driver (cuLaunchKernel)
  hip_launches.json       ROCm: kernels and a copy put on streams by hipLaunchKernel,
                          hipExtModuleLaunchKernel and hipMemcpyAsync
Snapshots (pickle, written by pickle.dumps as torch.cuda.memory._snapshot() returns them):
  pt20_history_blocks_p2.pickle  PyTorch 2.0: blocks with 'history' and no 'address', no
                                 time_us, protocol 2
  pt21_no_time_us_p3.pickle      PyTorch 2.1: blocks with addresses and frames, no time_us, 4
                                 device_traces lists of which only device 0 is used, protocol 3
  multi_device_p5.pickle         segments on two devices and three streams, tuple pool ids,
                                 time_us, protocol 5
  empty_devices_p4.pickle        no segments, device_traces = []
  segment_list_p2.pickle         torch.cuda.memory_snapshot(): the list of segments alone

usage: make_real_shapes.py   (rewrites every file; the output is deterministic)
"""
import json
import os
import pickle

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_shapes")


def write_json(name, value, indent=None):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(value, f, indent=indent)
        f.write("\n")


def write_pickle(name, value, protocol):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(pickle.dumps(value, protocol=protocol))


def kernel(ts, dur, corr, name="gemm_kernel", stream=7, device=0):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": device, "tid": stream, "ts": ts,
            "dur": dur, "args": {"device": device, "stream": stream, "correlation": corr,
                                 "grid": [4, 1, 1], "block": [256, 1, 1]}}


def launch(ts, corr, pid=100, tid=100):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
            "tid": tid, "ts": ts, "dur": 3, "args": {"correlation": corr, "cbid": 211}}


def flow(ph, ts, corr, pid, tid):
    e = {"ph": ph, "id": corr, "pid": pid, "tid": tid, "ts": ts, "cat": "ac2g",
         "name": "ac2g"}
    if ph == "f":
        e["bp"] = "e"
    return e


def step(n=3):
    """n launches and their kernels with paired flows: 4n events."""
    events = []
    for i in range(n):
        corr = 10 + i
        events += [launch(100 + 10 * i, corr), flow("s", 100 + 10 * i, corr, 100, 100),
                   kernel(105 + 10 * i, 4, corr), flow("f", 105 + 10 * i, corr, 0, 7)]
    return events


def kineto():
    props = [{"id": 0, "name": "Synthetic GPU", "totalGlobalMem": 1 << 34}]
    # ROCm: memcpy bytes, correlation and stream as strings of digits (stream also as 0x..).
    events = step(2) + [
        {"ph": "X", "cat": "gpu_memcpy", "name": "CopyHostToDevice", "pid": 0, "tid": 7,
         "ts": 140, "dur": 2, "args": {"device": 0, "stream": "7", "correlation": "31",
                                       "bytes": "128", "memory bandwidth (GB/s)": "0.064"}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "CopyDeviceToHost", "pid": 0, "tid": 7,
         "ts": 150, "dur": "2.5", "args": {"device": 0, "stream": "0x7", "correlation": 32,
                                           "bytes": "4096"}}]
    write_json("string_numbers.json", {"schemaVersion": 1, "deviceProperties": props,
                                       "roctracer_version": 4, "traceEvents": events})
    metadata = {"harness": "synthetic-bench", "config": {f"knob_{i:04}": "x" * 40
                                                         for i in range(300)}}
    write_json("metadata_first.json", {"metadata": metadata, "traceEvents": step(3),
                                       "schemaVersion": 1})
    write_json("toplevel_array.json", step(3), indent=1)
    write_json("compute_properties.json", {"schemaVersion": 1, "computeProperties": props,
                                           "traceEvents": step(2)})
    fractional = step(2)
    for e in fractional:
        e["ts"] = e["ts"] + 0.125  # float us with ns digits
    write_json("rank_only.json", {"schemaVersion": 1, "distributedInfo": {"rank": 3},
                                  "baseTimeNanoseconds": 1700000000000000000,
                                  "traceEvents": fractional})
    gpu = []
    for i in range(3):
        corr = 50 + i
        gpu += [launch(200 + 10 * i, corr, pid=4242, tid=4243),
                flow("s", 200 + 10 * i, corr, 4242, 4243), kernel(204 + 10 * i, 5, corr),
                flow("f", 204 + 10 * i, corr, 0, 7)]
    write_json("gpu_only.json", {"schemaVersion": 1, "deviceProperties": props,
                                 "traceEvents": gpu})
    old = [
        {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 9,
         "dur": 6, "args": {"external id": 3}},
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10,
         "dur": 2, "args": {"correlation": 5, "external id": 3}},
        {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 10, "cat": "async", "name": "launch"},
        {"ph": "X", "cat": "Kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 12,
         "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 5, "external id": 3}},
        {"ph": "f", "id": 5, "pid": 0, "tid": "stream 7", "ts": 12, "cat": "async",
         "name": "launch", "bp": "e"},
        {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
         "tid": "stream 7", "ts": 16, "dur": 1, "args": {"device": 0, "stream": 7,
                                                       "correlation": 6, "bytes": 640}}]
    write_json("kineto_2021.json", {"schemaVersion": 1, "computeProperties": props,
                                    "traceEvents": old})
    skipped = step(2) + [
        {"ph": "b", "cat": "async", "name": "req", "id": 1, "pid": 100, "tid": 100, "ts": 101},
        {"ph": "e", "cat": "async", "name": "req", "id": 1, "pid": 100, "tid": 100, "ts": 131},
        flow("f", 133, 99, 0, 7),       # its 's' was cut off by the profiler's window
        flow("f", 134, 98, 0, 7),
        flow("s", 135, 97, 100, 100),   # its 'f' never came
        {"ph": "X", "cat": "kernel", "name": "no_dur", "pid": 0, "tid": 7, "ts": 140,
         "args": {"device": 0, "stream": 7}},
        kernel(150, -3, 0, name="negative_dur")]
    write_json("skipped_kinds.json", {"schemaVersion": 1, "traceEvents": skipped})
    triton = []
    for i in range(2):
        corr, ext, ts = 60 + i, 7 + i, 300 + 20 * i
        name = f"triton_poi_fused_add_{i}"
        triton += [
            {"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100, "ts": ts,
             "dur": 12, "args": {"External id": ext, "kernel_backend": "triton",
                                 "grid": f"grid({100 * (i + 1)},)", "stream": 0}},
            {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 100, "tid": 100,
             "ts": ts + 2, "dur": 6, "args": {"External id": ext, "correlation": corr}},
            flow("s", ts + 2, corr, 100, 100),
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 10,
             "dur": 3, "args": {"External id": ext, "device": 0, "stream": 7,
                                "correlation": corr, "grid": [i + 1, 1, 1],
                                "block": [128, 1, 1]}},
            flow("f", ts + 10, corr, 0, 7)]
    write_json("triton_compile.json", {"schemaVersion": 1, "deviceProperties": props,
                                       "traceEvents": triton})
    hip = []
    for i, call in enumerate(["hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync"]):
        corr, ts = 70 + i, 400 + 20 * i
        hip += [{"ph": "X", "cat": "cuda_runtime", "name": call, "pid": 100, "tid": 100,
                 "ts": ts, "dur": 4, "args": {"correlation": corr}},
                flow("s", ts, corr, 100, 100)]
        if call == "hipMemcpyAsync":
            hip.append({"ph": "X", "cat": "gpu_memcpy", "name": "CopyHostToDevice", "pid": 0,
                        "tid": 7, "ts": ts + 9, "dur": 2, "args": {
                            "device": 0, "stream": 7, "correlation": corr, "bytes": 4096}})
        else:
            hip.append(kernel(ts + 9, 5, corr, name=f"hip_kernel_{i}"))
        hip.append(flow("f", ts + 9, corr, 0, 7))
    write_json("hip_launches.json", {"schemaVersion": 1, "deviceProperties": props,
                                     "roctracer_version": 4, "traceEvents": hip})


def frames(*names):
    return [{"filename": "train.py", "line": 10 + i, "name": n} for i, n in enumerate(names)]


def snapshots():
    MiB = 1 << 20
    base = 0x7F0000000000
    # PyTorch 2.0: a block is {size, state, history: [{addr, real_size, frames}]}.
    pt20_segments = [{
        "device": 0, "address": base, "total_size": 2 * MiB, "allocated_size": 1536 * 1024,
        "active_size": 1536 * 1024, "stream": 0, "segment_type": "large",
        "blocks": [
            {"size": 1 * MiB, "state": "active_allocated",
             "history": [{"addr": base, "real_size": 1000000, "frames": frames("forward")}]},
            {"size": 512 * 1024, "state": "active_allocated",
             "history": [{"addr": base + MiB, "real_size": 500000, "frames": frames("backward")}]},
            {"size": 512 * 1024, "state": "inactive", "history": []}]}]
    pt20_traces = [[
        {"action": "segment_alloc", "addr": base, "size": 2 * MiB, "stream": 0,
         "frames": frames("forward")},
        {"action": "alloc", "addr": base, "size": MiB, "stream": 0, "frames": frames("forward")},
        {"action": "alloc", "addr": base + MiB, "size": 512 * 1024, "stream": 0,
         "frames": frames("backward")}]]
    write_pickle("pt20_history_blocks_p2.pickle",
                 {"segments": pt20_segments, "device_traces": pt20_traces}, 2)

    pt21_segments = [{
        "device": 0, "address": base, "total_size": 2 * MiB, "allocated_size": MiB,
        "active_size": MiB, "requested_size": 1000000, "stream": 0, "segment_type": "large",
        "segment_pool_id": (0, 0), "is_expandable": False, "frames": frames("forward"),
        "blocks": [{"address": base, "size": MiB, "requested_size": 1000000,
                    "state": "active_allocated", "frames": frames("forward")},
                   {"address": base + MiB, "size": MiB, "requested_size": 0,
                    "state": "inactive", "frames": []}]}]
    pt21_traces = [[
        {"action": "segment_alloc", "addr": base, "size": 2 * MiB, "stream": 0,
         "frames": frames("forward")},
        {"action": "alloc", "addr": base, "size": MiB, "stream": 0, "frames": frames("forward")},
        {"action": "alloc", "addr": base + MiB, "size": MiB, "stream": 0,
         "frames": frames("backward")},
        {"action": "free_requested", "addr": base + MiB, "size": MiB, "stream": 0,
         "frames": frames("backward")},
        {"action": "free_completed", "addr": base + MiB, "size": MiB, "stream": 0,
         "frames": frames("backward")}], [], [], []]
    write_pickle("pt21_no_time_us_p3.pickle",
                 {"segments": pt21_segments, "device_traces": pt21_traces}, 3)

    segments, traces = [], [[], []]
    t = 1700000000000000
    for device in (0, 1):
        for stream in (0, 11 + device, 22):
            if device == 0 and stream == 22:
                continue
            address = base + (device << 36) + (stream << 24)
            segments.append({
                "device": device, "address": address, "total_size": 2 * MiB,
                "allocated_size": MiB, "active_size": MiB, "requested_size": MiB,
                "stream": stream, "segment_type": "large", "segment_pool_id": (device, stream),
                "is_expandable": False, "frames": [],
                "blocks": [{"address": address, "size": MiB, "requested_size": MiB,
                            "state": "active_allocated", "frames": frames("step")},
                           {"address": address + MiB, "size": MiB, "requested_size": 0,
                            "state": "inactive", "frames": []}]})
            traces[device] += [
                {"action": "segment_alloc", "addr": address, "size": 2 * MiB, "stream": stream,
                 "time_us": t, "frames": frames("step")},
                {"action": "alloc", "addr": address, "size": MiB, "stream": stream,
                 "time_us": t + 1, "frames": frames("step")}]
            t += 10
    write_pickle("multi_device_p5.pickle", {"segments": segments, "device_traces": traces,
                                            "allocator_settings": {}}, 5)
    write_pickle("empty_devices_p4.pickle", {"segments": [], "device_traces": []}, 4)
    write_pickle("segment_list_p2.pickle", segments[:2], 2)


def main():
    os.makedirs(OUT, exist_ok=True)
    kineto()
    snapshots()


if __name__ == "__main__":
    main()
