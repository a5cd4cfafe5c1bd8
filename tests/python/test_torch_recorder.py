# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The recorder on FSDP2 + tensor parallelism and plain process-group collectives, and the
device-hash replica check, on the `fake` process group (8 ranks, a [2, 4] mesh) in this process
and on 4 gloo processes. Nothing here needs the compiled module (the report side is tested in
test_torch.py and test_torch_gloo.py). PyTorch >= 2.4."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 4):
    pytest.skip(f"tensordiag.torch needs PyTorch >= 2.4; this is {torch.__version__}",
                allow_module_level=True)

import torch.distributed as dist  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import Replicate, Shard, distribute_tensor  # noqa: E402

import tensordiag.torch as tt  # noqa: E402
from tensordiag.torch import _hashcheck  # noqa: E402

HERE = os.path.dirname(__file__)
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(scope="module")
def fake_world():
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    return 8


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))  # the block's line


class Model(torch.nn.Module):
    def __init__(self, d=16, n=2):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def fsdp_tp(model, mesh):
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    for block in model.blocks:
        parallelize_module(block, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
        fully_shard(block, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    return model


@pytest.mark.parametrize("device", DEVICES)
def test_fsdp2_and_tp_collectives_are_recorded_by_module(fake_world, device, tmp_path):
    mesh = init_device_mesh(device, (2, 4), mesh_dim_names=("dp", "tp"))
    model = fsdp_tp(Model().to(device), mesh)
    x = torch.randn(8, 16, device=device)
    path = tmp_path / "fsdp_tp.jsonl"
    with tt.record_dtensor(path) as rec:
        for _ in range(2):
            model(x).sum().backward()  # the step's line
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records == rec.records
    alone = [r for r in records if "collective" in r]
    kinds = {(r["module"] if "module" in r else None, r["phase"], r["collective"]["kind"])
             for r in alone}
    print("\n".join(sorted(map(str, kinds))))
    print(rec.modules_text(top=0))
    # FSDP2's own collectives: parameters all-gathered for each block's forward (and again for
    # its backward), gradients reduce-scattered in the backward, on the dp dim's group.
    gathers = [r for r in alone if r["collective"]["kind"] == "all_gather"]
    scatters = [r for r in alone if r["collective"]["kind"] == "reduce_scatter"]
    assert gathers and scatters, kinds
    assert {r["collective"].get("mesh_dim_name") for r in gathers + scatters} == {"dp"}
    assert {r["collective"]["group_size"] for r in gathers + scatters} == {2}
    assert any(r.get("module", "").endswith("blocks.0") and r["phase"] == "forward"
               for r in gathers), kinds
    assert any(r["phase"] == "backward" for r in scatters), kinds
    assert all(r["redistributions"][0]["collective"] == r["collective"]["kind"] for r in alone)
    assert all(r["collective"]["op"].startswith(("c10d.", "_c10d_functional."))
               for r in alone)
    # Each step's call counts merge into the same records.
    assert max(r["calls"] for r in gathers) >= 2
    # Tensor parallelism inside the blocks: DTensor's collectives, attached to its op records.
    tp = [c for r in records for c in r.get("collectives", [])]
    assert tp and "tp" in {c.get("mesh_dim_name") for c in tp}, tp[:3]
    ranked = rec.modules()  # the C++ ranking of tdiag shard report, through the bindings
    assert ranked[0].bytes >= ranked[-1].bytes
    assert {r.phase for r in ranked} == {"forward", "backward"}
    assert any(r.module.endswith("blocks.1") for r in ranked)
    assert [(m.module, m.phase, m.bytes) for m in rec.report().modules] == [
        (m.module, m.phase, m.bytes) for m in ranked]


def test_plain_process_group_collectives_are_recorded(fake_world):
    t = torch.ones(1024)
    with tt.record_dtensor(None) as rec:
        for _ in range(3):
            dist.all_reduce(t)  # the all_reduce line
        out = torch.empty(8 * 1024)
        dist.all_gather_into_tensor(out, t)
    line = [n for n, text in enumerate(open(__file__), 1) if "# the all_reduce line" in text][0]
    (ar,) = [r for r in rec.records if r["collective"]["kind"] == "all_reduce"]
    assert ar["calls"] == 3 and ar["source"]["line"] == line
    assert ar["collective"]["bytes_per_rank"] == 4096
    assert ar["collective"]["group_size"] == 8 and ar["mesh"] == [8]
    assert ar["redistributions"] == [{"arg": 0, "mesh_dim": 0, "from": "P(sum)", "to": "R",
                                      "collective": "all_reduce", "bytes_per_rank": 4096}]
    (ag,) = [r for r in rec.records if r["collective"]["kind"] == "all_gather"]
    assert ag["collective"]["bytes_per_rank"] == 8 * 4096
    assert "module" not in ag and ag["phase"] == "forward"


@pytest.mark.parametrize("device", DEVICES)
def test_hashes_are_bit_exact_and_batch_independent(device):
    torch.manual_seed(0)
    ts = [torch.randn(n, device=device) for n in (1, 7, 1000, 300_001)]
    ts.append(torch.arange(10, device=device, dtype=torch.int64))
    ts.append(torch.randn(5, 3, device=device).t())  # not contiguous
    h = _hashcheck.tensor_hashes(ts)
    small = _hashcheck.tensor_hashes(ts, batch_bytes=4096)
    assert torch.equal(h, small)
    assert torch.equal(h, _hashcheck.tensor_hashes([t.clone() for t in ts]))
    changed = [t.clone() for t in ts]
    changed[3][123_456] = torch.nextafter(changed[3][123_456], torch.tensor(1e9, device=device))
    changed[4][[2, 5]] = changed[4][[5, 2]]  # a swap
    h2 = _hashcheck.tensor_hashes(changed)
    assert [bool((h[i] != h2[i]).any()) for i in range(len(ts))] == [False] * 3 + [True, True,
                                                                                   False]
    assert h[:, 2].tolist() == [t.numel() * t.element_size() for t in ts]


def test_check_replicas_of_1200_tensors_is_one_all_gather_per_group(fake_world):
    mesh = init_device_mesh("cuda" if torch.cuda.is_available() else "cpu", (2, 4),
                            mesh_dim_names=("dp", "tp"))
    named = [(f"layer{i}.w", distribute_tensor(torch.randn(64, 64), mesh, [Replicate(), Shard(0)]))
             for i in range(1000)]
    named += [(f"norm{i}", distribute_tensor(torch.randn(64), mesh, [Replicate(), Replicate()]))
              for i in range(200)]
    exchange = _hashcheck.Exchange()
    _hashcheck.compare_replicas(named, locate=0, exchange=exchange)  # warm-up
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    exchange = _hashcheck.Exchange()
    start = time.perf_counter()
    _hashcheck.compare_replicas(named, locate=0, exchange=exchange)  # fake pg: data is noise
    elapsed = time.perf_counter() - start
    # dp holds every tensor's replicas, tp the norms': two groups, two all-gathers.
    assert exchange.collectives == 2, exchange.groups
    assert len(set(exchange.groups)) == 2
    print(f"check_replicas: 1200 tensors ({sum(t.numel() for _, t in named)} elements) on "
          f"{named[0][1].device}: {elapsed * 1e3:.1f} ms, {exchange.collectives} collectives")
    if torch.cuda.is_available():  # the hashing alone, on 1,200 larger tensors (315 MB)
        big = [torch.randn(256, 256, device="cuda") for _ in range(1200)]
        _hashcheck.tensor_hashes(big)
        torch.cuda.synchronize()
        start = time.perf_counter()
        _hashcheck.tensor_hashes(big)
        torch.cuda.synchronize()
        print(f"tensor_hashes: 1200 x 256 x 256 float32 on cuda: "
              f"{(time.perf_counter() - start) * 1e3:.1f} ms")


def test_local_shapes_are_checked_without_collectives(fake_world):
    from torch.distributed.tensor import DTensor
    mesh = init_device_mesh("cpu", (2, 4))
    good = distribute_tensor(torch.ones(10, 8), mesh, [Replicate(), Shard(0)])  # 3,3,3,1
    assert _hashcheck.local_shape_findings([("good", good)]) == []
    bad = DTensor.from_local(torch.ones(2, 8), mesh, [Replicate(), Shard(0)],
                             shape=torch.Size([10, 8]), stride=(8, 1))
    (f,) = _hashcheck.local_shape_findings([("bad", bad)])
    assert f["expected"] == [3, 8] and f["actual"] == [2, 8]
    assert _hashcheck.expected_local_shape([10, 8], [Shard(0), Shard(0)], [2, 4], [1, 3]) == [0, 8]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gloo_ranks_record_fsdp2_and_check_replicas(tmp_path):
    port, world = free_port(), 4
    worker = os.path.join(HERE, "torch_gloo_recorder_worker.py")
    procs = []
    for rank in range(world):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                   WORLD_SIZE=str(world), PYTHONUNBUFFERED="1")
        procs.append(subprocess.Popen([sys.executable, worker, str(tmp_path)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=150)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            outputs.append(p.communicate()[0])
            pytest.fail("a gloo rank hung:\n" + "\n".join(outputs))
    print("\n".join(outputs))
    result = json.loads((tmp_path / "rank0.json").read_text())
    # Rank 3 (mesh coordinate [1, 1]) corrupted one element of its replica of w on dp: every
    # rank gets the finding; ranks 1 and 3 (its dp group) spent one more all-gather to find
    # the element, ranks 0 and 2 only the hashes' one.
    (finding,) = result["replicas"]
    assert finding["tensor"] == "w" and finding["rank"] == 3 and finding["mesh_dim"] == 0
    assert finding["agreeing_ranks"] == [1] and finding["index"] == [1, 2]
    assert finding["value"] == 2.0 and finding["expected"] == 1.0
    assert result["clean"] == []
    counts = [json.loads((tmp_path / f"rank{r}.json").read_text())["collectives"]
              for r in range(world)]
    assert counts == [1, 2, 1, 2]
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)  # FSDP2 + TP over gloo
    modules = result["modules"]
    assert any(m["phase"] == "backward" and "reduce_scatter" in m["collectives"]
               for m in modules), modules
    assert any(m["phase"] == "forward" and "all_gather" in m["collectives"] for m in modules)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_watch_oom_is_light_and_writes_after_the_handler(tmp_path):
    import pickle
    import threading
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((2 << 30) / total)  # a 2 GiB cap
    watch = tt.watch_oom(tmp_path / "oom", stream=sys.stdout)
    keep = []
    in_handler = []
    original = watch._finish

    def finish(*args):  # the report is written on a worker thread, not in PyTorch's handler
        in_handler.append(threading.current_thread() is threading.main_thread())
        original(*args)

    watch._finish = finish
    try:
        with pytest.raises(torch.OutOfMemoryError):
            while True:
                keep.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
    finally:
        watch.stop()  # waits for the report
        keep.clear()
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(1.0)
    assert in_handler == [False]
    (snapshot,) = list((tmp_path / "oom").glob("*.pickle"))
    frames = [f for trace in pickle.loads(snapshot.read_bytes())["device_traces"]
              for event in trace for f in event.get("frames", [])]
    assert frames and all(f["filename"].endswith(".py") or f["filename"].startswith("<")
                          for f in frames), frames[:5]
    # Without the compiled module (a bare GPU machine) the analysis fails, said and not raised.
    assert len(watch.events) == 1 or watch.errors
    print(f"watch_oom: {len(frames)} frames, events {len(watch.events)}, errors {watch.errors}")
