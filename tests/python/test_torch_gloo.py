# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.torch on 4 real processes over gloo (127.0.0.1): the recorder on a real process
group, check_replicas naming the divergent rank, check_shards. PyTorch >= 2.4."""

import json
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 4):
    pytest.skip(f"tensordiag.torch needs PyTorch >= 2.4; this is {torch.__version__}",
                allow_module_level=True)

WORKER = os.path.join(os.path.dirname(__file__), "torch_gloo_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_four_gloo_ranks(tmp_path):
    port, world = free_port(), 4
    procs = []
    for rank in range(world):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                   WORLD_SIZE=str(world), PYTHONUNBUFFERED="1")
        procs.append(subprocess.Popen([sys.executable, WORKER, str(tmp_path)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            outputs.append(p.communicate()[0])
            pytest.fail("a gloo rank hung:\n" + "\n".join(outputs))
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    result = json.loads((tmp_path / "rank0.json").read_text())
    # Rank 3 (mesh coordinate [1, 1]) corrupted its replica of w on mesh dim 0 (dp).
    replicas = result["replicas"]
    assert {d["code"] for d in replicas} == {"TDIAG-DT-201"}, replicas
    assert {d["fields"]["rank"] for d in replicas} <= {1, 3} and any(
        d["fields"]["rank"] == 3 for d in replicas)
    assert all(d["fields"]["tensor"] == "w" for d in replicas)
    assert result["clean"] == [] and result["shards"] == []
    recorded = [json.loads(line) for line in (tmp_path / "run0.jsonl").read_text().splitlines()]
    # The same choices as on the fake process group (test_torch.py): w chunked locally for mm,
    # the pending sum all-reduced for relu; 4 rows x 4 columns of float32 per rank.
    (relu,) = [r for r in recorded if r["op"] == "aten.relu.default"]
    assert relu["redistributions"] == [
        {"arg": 0, "mesh_dim": 1, "from": "P(sum)", "to": "R", "collective": "all_reduce",
         "bytes_per_rank": 4 * 4 * 4}]
    print("\n".join(outputs))
