# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.torch on PyTorch's own DTensor (>= 2.4): recorder, explained errors, runtime
checks. An 8-rank [2, 4] mesh runs in this process on the `fake` process group; LocalTensorMode
simulates per-rank values. Real ranks over gloo: test_torch_gloo.py; OOM: test_torch_cuda.py."""

import json

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 4):
    pytest.skip(f"tensordiag.torch needs PyTorch >= 2.4; this is {torch.__version__}",
                allow_module_level=True)

import torch.distributed as dist  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import (DTensor, Partial, Replicate, Shard,  # noqa: E402
                                      distribute_tensor)

import tensordiag  # noqa: E402
import tensordiag.torch as tt  # noqa: E402
from tensordiag import dtensor as td  # noqa: E402


@pytest.fixture(scope="module")
def mesh():
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    return init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))


def test_records_ops_placements_redistributions_and_lines(mesh, tmp_path):
    path = tmp_path / "run.jsonl"
    x = distribute_tensor(torch.randn(64, 128), mesh, [Shard(0), Shard(1)])
    w = distribute_tensor(torch.randn(128, 256), mesh, [Replicate(), Replicate()])
    with tt.record_dtensor(path) as rec:
        for _ in range(3):
            y = x @ w  # the recorded line
            z = y.relu()
    line = [n for n, text in enumerate(open(__file__), 1) if "# the recorded line" in text][0]
    records = [json.loads(r) for r in path.read_text().splitlines()]
    assert records == rec.records
    mm = [r for r in records if r["op"] == "aten.mm.default"]
    assert len(mm) == 1 and mm[0]["calls"] == 3
    assert mm[0]["source"]["file"].endswith("test_torch.py") and mm[0]["source"]["line"] == line
    assert mm[0]["mesh"] == [2, 4] and mm[0]["mesh_dim_names"] == ["dp", "tp"]
    assert mm[0]["args"][0]["tensor"] == {"shape": [64, 128], "dtype": "float32",
                                           "placements": ["S(0)", "S(1)"]}
    # PyTorch's own choice for x [S(0), S(1)] @ w [R, R]: chunk w by rows on tp (a local step,
    # no collective), leaving a pending sum on tp that relu then all-reduces.
    assert y.placements == (Shard(0), Partial())
    assert mm[0]["expect"]["outputs"] == [{"shape": [64, 256], "placements": ["S(0)", "P(sum)"]}]
    assert mm[0]["redistributions"] == [
        {"arg": 1, "mesh_dim": 1, "from": "R", "to": "S(0)", "collective": "none",
         "bytes_per_rank": 128 * 256 * 4}]
    assert mm[0]["expect"]["comms"] == {}
    (relu,) = [r for r in records if r["op"] == "aten.relu.default"]
    assert relu["calls"] == 3 and relu["source"]["line"] == line + 1
    # 64/2 rows x 256 columns of float32 on each rank.
    assert relu["redistributions"] == [
        {"arg": 0, "mesh_dim": 1, "from": "P(sum)", "to": "R", "collective": "all_reduce",
         "bytes_per_rank": 32 * 256 * 4}]
    assert relu["expect"]["comms"] == {"all_reduce": 1}
    assert z.placements == (Shard(0), Replicate())


def p_str(p):
    return "R" if p.is_replicate() else f"S({p.dim})" if p.is_shard() else f"P({p.reduce_op})"


def test_backward_ops_are_recorded_at_the_forward_line(mesh):
    x = distribute_tensor(torch.randn(16, 32), mesh, [Shard(0), Replicate()])
    w = torch.nn.Parameter(distribute_tensor(torch.randn(32, 8), mesh, [Replicate(), Shard(1)]))
    with tt.record_dtensor(None) as rec:
        y = x @ w  # the forward line
        y.sum().backward()
    line = [n for n, text in enumerate(open(__file__), 1) if "# the forward line" in text][0]
    backward = [r for r in rec.records
                if r.get("source", {}).get("function", "").startswith("MmBackward0 (backward of ")]
    assert backward, [r["source"] for r in rec.records]
    assert all(r["source"]["line"] == line for r in backward)
    assert any(r["op"] == "aten.mm.default" for r in backward)
    assert w.grad is not None


def test_recording_is_a_case_file_our_checker_reads(mesh, tmp_path):
    path = tmp_path / "run.jsonl"
    a = distribute_tensor(torch.randn(16, 32), mesh, [Shard(0), Replicate()])
    b = distribute_tensor(torch.randn(32, 8), mesh, [Replicate(), Shard(1)])
    with tt.record_dtensor(path):
        c = a @ b
        (c + c).sum()
    check = td.check_cases(path)
    answers = {a.id: a for a in check.answers}
    assert len(answers) == len(path.read_text().splitlines())
    assert all(a.ok for a in answers.values()), [a.error for a in answers.values() if not a.ok]


def test_explicit_redistribute_is_recorded(mesh, tmp_path):
    x = distribute_tensor(torch.randn(8, 8), mesh, [Shard(0), Shard(1)])
    with tt.record_dtensor(None) as rec:
        x.redistribute(mesh, [Replicate(), Replicate()])
    (entry,) = [r for r in rec.records if r["op"] == "redistribute"]
    assert sorted(r["collective"] for r in entry["redistributions"]) == ["all_gather"] * 2
    assert entry["source"]["code"].startswith("x.redistribute(")


FAILURES = [
    ("inplace_needs_reshard", lambda m: _dt(m, (8, 8), [Replicate(), Replicate()]).add_(
        _partial(m))),
    ("relu_inplace_on_partial", lambda m: _partial(m).relu_()),
    ("mm_shape_mismatch", lambda m: _dt(m, (8, 4), [Replicate(), Replicate()]) @
     _dt(m, (8, 4), [Replicate(), Replicate()])),
    ("add_broadcast_mismatch", lambda m: _dt(m, (8, 4), [Shard(0), Replicate()]) +
     _dt(m, (8, 3), [Shard(0), Replicate()])),
    ("mixed_tensor_and_dtensor", lambda m: _dt(m, (8, 8), [Shard(0), Replicate()]) +
     torch.ones(8, 8)),
    ("view_across_uneven_shards", lambda m: _dt(m, (6, 4), [Shard(0), Shard(0)]).view(24)),
    ("cat_shape_mismatch", lambda m: torch.cat([_dt(m, (4, 4), [Replicate(), Replicate()]),
                                                _dt(m, (4, 5), [Replicate(), Replicate()])])),
    ("bmm_needs_3d", lambda m: torch.bmm(_dt(m, (8, 8), [Replicate(), Replicate()]),
                                         _dt(m, (8, 8), [Replicate(), Replicate()]))),
    ("different_meshes", lambda m: _dt(m, (8, 8), [Shard(0), Replicate()]) +
     distribute_tensor(torch.randn(8, 8), init_device_mesh("cpu", (8,)), [Shard(0)])),
    ("embedding_float_indices", lambda m: torch.nn.functional.embedding(
        _dt(m, (4,), [Replicate(), Replicate()]), _dt(m, (10, 4), [Replicate(), Shard(1)]))),
    ("addmm_shape_mismatch", lambda m: torch.addmm(
        _dt(m, (8,), [Replicate(), Replicate()]), _dt(m, (8, 4), [Shard(0), Replicate()]),
        _dt(m, (5, 8), [Replicate(), Replicate()]))),
    ("sum_dim_out_of_range", lambda m: _dt(m, (8, 8), [Shard(0), Replicate()]).sum(dim=5)),
    ("copy_into_different_placement", lambda m: _dt(m, (8, 8), [Shard(0), Replicate()]).copy_(
        _partial(m))),
]


def _dt(m, shape, placements):
    return distribute_tensor(torch.randn(*shape), m, placements)


def _partial(m):
    a = _dt(m, (8, 8), [Replicate(), Shard(1)])
    b = _dt(m, (8, 8), [Replicate(), Shard(0)])
    return a @ b  # Partial(sum) on tp: no tensordiag mode may be active here


@pytest.mark.parametrize("name,failure", FAILURES, ids=[f[0] for f in FAILURES])
def test_pytorch_failures_are_explained(mesh, name, failure):
    try:
        failure(mesh)
    except Exception as plain:
        pytorch_type, pytorch_text = type(plain), str(plain)
    else:
        pytest.skip(f"{name}: PyTorch {torch.__version__} accepts this call")
    with pytest.raises(pytorch_type) as info:
        with tt.explain_errors():
            failure(mesh)
    error = info.value
    assert isinstance(error, tensordiag.ShardingError), type(error)
    assert error.__cause__ is not None and str(error.__cause__) == pytorch_text
    text = str(error)
    assert "PyTorch raised" in text and "tensordiag" in text
    print(f"--- {name}\n{text}\n")


def test_explained_errors_name_the_code(mesh):
    a = _dt(mesh, (8, 4), [Replicate(), Replicate()])
    with pytest.raises(tensordiag.ShardingError) as info:
        with tt.explain_errors():
            a @ a
    assert info.value.code and info.value.code.startswith("TDIAG-DT-")
    assert info.value.report is not None


def test_check_replicas_under_local_tensor_mode_names_the_divergent_ranks(mesh):
    from torch.distributed._local_tensor import LocalTensorMode
    with LocalTensorMode(8) as mode:
        m = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        good = distribute_tensor(torch.ones(16, 8), m, [Replicate(), Shard(0)])
        local = mode.rank_map(lambda r: torch.ones(4, 8) + (1.0 if r == 6 else 0.0))
        bad = DTensor.from_local(local, m, [Replicate(), Shard(0)])
        clean = tt.check_replicas({"good": good})
        report = tt.check_replicas({"good": good, "w1": bad})
    assert not clean.has_errors, clean.to_text()
    assert report.has_errors
    codes = {d.code for d in report.diagnostics}
    assert codes == {"TDIAG-DT-201"}, report.to_text()
    ranks = sorted(d.fields["rank"] for d in report.diagnostics)
    assert 6 in ranks and all(d.fields["tensor"] == "w1" for d in report.diagnostics)
    assert all(d.fields["mesh_dim"] == 0 for d in report.diagnostics)


def test_records_under_local_tensor_mode(mesh):
    from torch.distributed._local_tensor import LocalTensorMode
    with LocalTensorMode(8):
        m = init_device_mesh("cpu", (2, 4))
        a = distribute_tensor(torch.randn(8, 16), m, [Shard(0), Shard(1)])
        b = distribute_tensor(torch.randn(16, 4), m, [Replicate(), Replicate()])
        with tt.record_dtensor(None) as rec:
            (a @ b).relu()
    ops = [r["op"] for r in rec.records]
    assert ops[:2] == ["aten.mm.default", "aten.relu.default"], ops
    assert rec.records[1]["redistributions"][0]["collective"] == "all_reduce"


def test_check_shards_under_local_tensor_mode(mesh):
    from torch.distributed._local_tensor import LocalTensorMode
    with LocalTensorMode(8) as mode:
        m = init_device_mesh("cpu", (2, 4))
        uneven = distribute_tensor(torch.ones(10, 8), m, [Replicate(), Shard(0)])  # 3,3,3,1
        assert not tt.check_shards(uneven).has_errors
        wrong = DTensor.from_local(mode.rank_map(lambda r: torch.ones(3, 8)), m,
                                   [Replicate(), Shard(0)], shape=torch.Size([10, 8]),
                                   stride=(8, 1))
        report = tt.check_shards(wrong)
    assert report.has_errors, report.to_text()
