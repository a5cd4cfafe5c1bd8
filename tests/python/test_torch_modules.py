# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The module ranking of a recording (tensordiag/torch/_modules.py) from records alone: plain
Python, no PyTorch, so it runs wherever the suite does."""

import importlib.util
import json
import pathlib

SOURCE = (pathlib.Path(__file__).resolve().parents[2] / "python" / "tensordiag" / "torch"
          / "_modules.py")
spec = importlib.util.spec_from_file_location("tensordiag_torch_modules", SOURCE)
modules = importlib.util.module_from_spec(spec)
spec.loader.exec_module(modules)

SOURCE_LINE = {"file": "train.py", "line": 12, "function": "step"}
RECORDS = [
    # FSDP2's all-gather before blocks.0's forward, 3 steps.
    {"id": "r000001", "op": "c10d._allgather_base_.default", "mesh": [2], "args": [],
     "module": "Model.blocks.0", "phase": "forward", "calls": 3, "source": SOURCE_LINE,
     "collective": {"op": "c10d._allgather_base_.default", "kind": "all_gather",
                    "group": "1", "group_size": 2, "bytes_per_rank": 4096}},
    # Its gradients' reduce-scatter in the backward.
    {"id": "r000002", "op": "c10d._reduce_scatter_base_.default", "mesh": [2], "args": [],
     "module": "Model.blocks.0", "phase": "backward", "calls": 3,
     "collective": {"op": "c10d._reduce_scatter_base_.default", "kind": "reduce_scatter",
                    "group": "1", "group_size": 2, "bytes_per_rank": 8192}},
    # A DTensor op whose redistribution issued a functional all-reduce on tp.
    {"id": "r000003", "op": "aten.relu.default", "mesh": [2, 4], "args": [],
     "module": "Model.blocks.1.down", "phase": "forward", "calls": 2, "source": SOURCE_LINE,
     "redistributions": [{"arg": 0, "mesh_dim": 1, "from": "P(sum)", "to": "R",
                          "collective": "all_reduce", "bytes_per_rank": 999}],
     "collectives": [{"op": "_c10d_functional.all_reduce.default", "kind": "all_reduce",
                      "bytes_per_rank": 1000}]},
    # An op that moved nothing, and one recorded before collectives were seen.
    {"id": "r000004", "op": "aten.mm.default", "mesh": [2, 4], "args": [], "calls": 5,
     "redistributions": [{"arg": 1, "mesh_dim": 1, "from": "R", "to": "S(0)",
                          "collective": "none", "bytes_per_rank": 64}]},
    {"id": "r000005", "op": "aten.add.Tensor", "mesh": [2, 4], "args": [], "calls": 1,
     "redistributions": [{"arg": 1, "mesh_dim": 0, "from": "S(0)", "to": "R",
                          "collective": "all_gather", "bytes_per_rank": 10}]},
]


def test_modules_are_ranked_by_bytes_with_phases_apart():
    rows = modules.rank_modules(RECORDS)
    assert [(r["module"], r["phase"]) for r in rows] == [
        ("Model.blocks.0", "backward"), ("Model.blocks.0", "forward"),
        ("Model.blocks.1.down", "forward"), (modules.TOP_LEVEL, "")]
    first = rows[0]
    assert first["bytes_per_rank"] == 3 * 8192 and first["count"] == 3
    assert first["collectives"] == {"reduce_scatter": 3}
    # The issued collective counts, not the planned redistribution.
    assert rows[2]["bytes_per_rank"] == 2000 and rows[2]["lines"] == {"train.py:12": 2000}
    assert rows[3]["bytes_per_rank"] == 10 and rows[3]["ops"] == {"aten.add.Tensor": 1}


def test_modules_text_and_reading_a_file(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS) + "\n")
    records = modules.read_records(path)
    assert records == RECORDS
    text = modules.modules_text(records)
    lines = text.splitlines()
    assert lines[0] == "4 module phases moved 37.96 KiB per rank in 9 collectives"
    assert "reduce_scatter×3" in lines[3] and lines[3].endswith("Model.blocks.0")
    assert "backward" in lines[3] and "24.00 KiB" in lines[3]
    assert len(modules.modules_text(records, top=1).splitlines()) == 4


def test_main_prints_the_table_and_refuses_bad_input(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert modules.main([str(path), "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 module phases") and len(out.splitlines()) == 5
    assert modules.main([str(tmp_path / "missing.jsonl")]) == 2
    assert modules.main([]) == 2
