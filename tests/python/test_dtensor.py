# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.dtensor against `tdiag shard check/explain` on the shared corpus."""

import json

import pytest

import tensordiag
from conftest import SOURCE_DIR
from tensordiag.dtensor import (DeviceMesh, Partial, Placement, Replicate, Shard, ShardingError,
                                TensorSpec, check_cases, explain, propagate, report)

CORPUS = "golden/dtensor_cases.jsonl"


def test_transition_collective_is_the_planners_mapping():
    from tensordiag._core import core

    assert core.transition_collective("S(0)", "R") == "all_gather"
    assert core.transition_collective(Partial("avg"), "R") == "all_reduce"
    assert core.transition_collective("P(sum)", Shard(1)) == "reduce_scatter"
    assert core.transition_collective("S(0)", "S(1)") == "all_to_all"
    assert core.transition_collective(Replicate(), "S(0)") == "none"
    assert core.transition_collective("S(0)", "P(sum)") == "none"  # PyTorch refuses it


def test_placements_print_and_compare_like_pytorch():
    assert repr(Shard(0)) == "Shard(dim=0)"
    assert repr(Replicate()) == "Replicate()"
    assert repr(Partial()) == "Partial(sum)"
    assert str(Shard(1)) == "S(1)" and str(Replicate()) == "R" and str(Partial("max")) == "P(max)"
    assert Shard(dim=0) == Shard(0) and Shard(0) != Shard(1) and Shard(0) != Replicate()
    assert Partial("sum") != Partial("max") and Partial() == Partial("sum")
    assert len({Shard(0), Shard(0), Replicate(), Partial()}) == 3
    assert isinstance(Shard(0), Placement) and Shard(0).is_shard(0) and not Shard(0).is_shard(1)
    assert Partial("avg").reduce_op == "avg" and Shard(2).dim == 2
    with pytest.raises(ValueError):
        Partial("prod")


def test_mesh_and_spec():
    mesh = DeviceMesh([2, 4], names=["dp", "tp"])
    assert mesh.ndim == 2 and mesh.num_devices == 8 and mesh.coordinate(5) == [1, 1]
    assert repr(DeviceMesh([2, 4], names=None)) == "DeviceMesh((2, 4), 'cpu', stride=(4, 1))"
    assert mesh.names == ["dp", "tp"] and DeviceMesh([2, 4]) == DeviceMesh.parse("2,4")
    with pytest.raises(tensordiag.InputError):
        DeviceMesh([0])
    spec = TensorSpec([12, 16], [Shard(0), Partial()])
    assert spec.dtype == "float32" and spec.shape == [12, 16] and spec.stride == [16, 1]
    assert spec.placements == [Shard(0), Partial()]
    assert isinstance(spec.placements[0], Shard)
    assert str(spec) == "f32[12, 16] [S(0), P(sum)]"
    assert TensorSpec.parse("f32[12,16] (S(0),P(sum))", 2) == spec
    assert TensorSpec([5], [Shard(0)]).local_shapes(DeviceMesh([2])) == [[3], [2]]
    with pytest.raises(ValueError):
        TensorSpec([4], [Shard(0)], dtype="float7")


def test_propagate_mm_matches_explain(tdiag):
    mesh = DeviceMesh([2, 4])
    args = [TensorSpec([12, 1], [Shard(0), Partial()]),
            TensorSpec([1, 16], [Partial("max"), Shard(1)])]
    result = propagate("aten.mm.default", args, mesh)
    assert result.op == "aten.mm.default"
    assert [o.placements for o in result.outputs] == [[Shard(0), Partial("sum")]]
    assert result.outputs[0].shape == [12, 16]
    assert result.comms == {"all_gather": 1, "all_reduce": 1}
    steps = result.plans[1].steps
    assert [s.collective for s in steps] == ["all_gather", "all_reduce"]
    assert steps[0].bytes_per_rank == 64 and steps[0].src == Shard(1) and steps[0].dst == Replicate()
    cli = tdiag("shard", "explain", "mm", "--mesh", "2,4", "--arg", "f32[12,1] (S(0),P(sum))",
                "--arg", "f32[1,16] (P(max),S(1))", check_status=0)
    assert explain("mm", args, mesh) == cli.stdout
    cli_json = tdiag("shard", "explain", "mm", "--mesh", "2,4", "--arg", "f32[12,1] (S(0),P(sum))",
                     "--arg", "f32[1,16] (P(max),S(1))", "--format", "json", check_status=0)
    assert json.loads(explain("mm", args, [2, 4], format="json")) == json.loads(cli_json.stdout)


def test_rejection_is_a_sharding_error_with_the_cli_message(tdiag):
    args = [TensorSpec([12, 3], [Replicate()]), TensorSpec([4, 8], [Replicate()])]
    with pytest.raises(ShardingError) as info:
        propagate("aten.mm.default", args, DeviceMesh([2]))
    e = info.value
    assert isinstance(e, tensordiag.Error)
    assert e.code == "TDIAG-DT-002" and e.error_class == "user_error"
    assert e.report.diagnostics[0].fields["arg"] == "mat2"
    cli = tdiag("shard", "explain", "mm", "--mesh", "2", "--arg", "f32[12,3] (R)", "--arg",
                "f32[4,8] (R)", check_status=1)
    assert cli.stdout.splitlines()[0] == f"error: {e} [{e.code}]"
    assert e.report.to_text().splitlines()[0] == cli.stdout.splitlines()[0]


def test_unknown_op_and_bad_arguments():
    with pytest.raises(ShardingError) as info:
        propagate("aten.nosuchop.default", [TensorSpec([4], [Replicate()])], [2])
    assert info.value.error_class == "unknown_op" and info.value.code == "TDIAG-DT-010"
    with pytest.raises(TypeError):
        propagate("mm", [object()], [2])


def test_scalar_and_list_arguments():
    spec = TensorSpec([1, 4, 16], [Shard(1), Replicate()])
    result = propagate("aten.mean.dim", [spec, [1], True], DeviceMesh([2, 4]))
    assert result.outputs[0].shape == [1, 1, 16]
    assert result.outputs[0].placements == [Partial("avg"), Replicate()]
    text_args = propagate("aten.mean.dim", ["f32[1,4,16] (S(1),R)", [1], True], [2, 4])
    assert text_args.outputs == result.outputs


def test_check_cases_matches_shard_check(shared, tdiag, tmp_path):
    check = check_cases(shared / CORPUS)
    cli = tdiag("shard", "check", shared / CORPUS)
    assert cli.returncode in (0, 1)
    assert check.to_jsonl() == cli.stdout
    assert len(check.answers) == len(cli.stdout.splitlines())
    assert check.rejected == sum(1 for a in check.answers if not a.ok)
    assert f"{len(check.answers)} cases, {check.rejected} rejected" in cli.stderr
    first = json.loads(cli.stdout.splitlines()[0])
    a = check.answers[0]
    assert a.id == first["id"] and a.ok == first["ok"] and a.comms == first.get("comms", {})
    rejected = next(a for a in check.answers if not a.ok)
    assert rejected.code.startswith("TDIAG-DT-") and rejected.error_class in ("user_error",
                                                                              "limitation")
    sarif = tdiag("shard", "check", shared / CORPUS, "--format", "sarif").stdout
    ours = json.loads(check.report(str(shared / CORPUS)).to_sarif())
    theirs = json.loads(sarif)
    assert len(ours["runs"][0]["results"]) == len(theirs["runs"][0]["results"]) == check.rejected


def test_check_cases_malformed_lines(tmp_path, tdiag):
    corpus = tmp_path / "cases.jsonl"
    corpus.write_text('{"id":"x","op":"aten.mm.default"\n')
    check = check_cases(corpus)
    assert check.malformed and check.malformed[0][0] == 1
    assert check.to_jsonl() == tdiag("shard", "check", corpus, check_status=2).stdout


def test_check_cases_unreadable(tmp_path, tdiag):
    with pytest.raises(tensordiag.InputError) as info:
        check_cases(tmp_path / "none.jsonl")
    cli = tdiag("shard", "check", tmp_path / "none.jsonl", check_status=2)
    assert cli.stderr.strip().splitlines()[-1] == f"tdiag: {info.value}"


RECORDING = "tests/data/dtensor/mlp_recording.jsonl"


def test_report_ranks_lines_names_the_argument_and_the_fix(tdiag):
    path = SOURCE_DIR / RECORDING
    r = report(path)
    assert (r.records, r.calls, r.bytes, r.count) == (15, 600, 3932160, 80)
    assert [(l.file, l.line) for l in r.lines] == [("samples/dtensor_mlp/train.py", 41),
                                                   ("samples/dtensor_mlp/train.py", 52)]
    first = r.lines[0]
    assert (first.bytes, first.count, first.comms) == (65536 * 40, 40, {"all_gather": 40})
    assert first.function == "forward" and first.code == "h = x @ self.w1"
    cause = first.causes[0]
    assert (cause.op, cause.arg, cause.item, cause.arg_name) == ("aten.mm.default", 0, None, "self")
    assert cause.arrived == [Shard(0), Shard(1)]
    step = cause.redistributions[0]
    assert (step.mesh_dim, step.src, step.dst, step.collective, step.bytes_per_rank) == (
        1, Shard(1), Replicate(), "all_gather", 65536)
    assert (cause.bytes_per_call, cause.calls, cause.bytes, cause.ids) == (65536, 40, 2621440,
                                                                           ["r000001"])
    assert cause.fix.placements == [Shard(0), Replicate()] and cause.fix.same_output
    assert "needs no all_gather: saves 64.00 KiB per rank per call × 40 calls" in cause.suggestion
    assert cause.suggestion.endswith("whatever produces it would communicate instead")
    assert cause.fix.moves_communication and cause.fix.other_arg is None
    assert (r.checked, r.agree, r.findings) == (14, 14, [])
    assert r.not_covered == {"aten.addcmul_.default": 1}
    # The same text, JSON and report as the CLI.
    assert r.to_text() == tdiag("shard", "report", path, check_status=0).stdout
    assert r.to_text(1) == tdiag("shard", "report", path, "--top", "1", check_status=0).stdout
    assert json.loads(r.to_json()) == json.loads(
        tdiag("shard", "report", path, "--json", check_status=0).stdout)
    doc = json.loads(r.to_json(1))
    assert doc["schema"] == "tensordiag.shard_report/v1" and len(doc["lines"]) == 1
    assert isinstance(r.report, tensordiag.report.Report)
    codes = [d.code for d in r.report.diagnostics]
    assert codes == ["TDIAG-DT-401", "TDIAG-DT-401"]
    assert r.report.diagnostics[0].hint == cause.suggestion
    sarif = json.loads(tdiag("shard", "report", path, "--to", "sarif", check_status=0).stdout)
    assert len(sarif["runs"][0]["results"]) == len(json.loads(r.report.to_sarif())["runs"][0][
        "results"]) == 2


def test_report_on_the_sample_recorded_on_the_h200_finds_the_bad_w2():
    """samples/dtensor_mlp/run.jsonl: PyTorch 2.11's own recording of the bad placement."""
    from tensordiag.dtensor import report
    r = report(SOURCE_DIR / "samples" / "dtensor_mlp" / "run.jsonl")
    lines = {(line.file, line.line): line for line in r.lines}
    forward = lines[("train.py", 38)]
    assert forward.comms == {"all_gather": 8}  # 4 forward and 4 backward gathers
    (gather,) = [c for c in forward.causes if c.arg == 0]
    assert gather.op == "aten.mm.default" and gather.arrived == [Shard(0), Shard(1)]
    assert gather.fix.other_arg == 1 and gather.fix.other_arg_name == "mat2"
    assert gather.fix.placements == [Replicate(), Shard(0)]  # Megatron's row-parallel w2
    assert gather.fix.output == [Shard(0), Partial("sum")]
    assert gather.fix.output_collective == "reduce_scatter"
    assert gather.fix.output_bytes < gather.bytes_per_call
    assert (r.checked, r.agree, r.findings) == (11, 11, [])


def test_report_findings_and_malformed_recordings(tmp_path, tdiag):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(json.dumps({
        "id": "r1", "op": "aten.mm.default", "mesh": [4],
        "args": [{"tensor": {"shape": [8, 8], "placements": ["S(0)"]}},
                 {"tensor": {"shape": [8, 8], "placements": ["S(0)"]}}],
        "expect": {"ok": True, "outputs": [{"shape": [8, 8], "placements": ["R"]}],
                   "comms": {"all_gather": 1}},
        "source": {"file": "m.py", "line": 7}}) + "\n")
    r = report(rec)
    assert [d.code for d in r.findings] == ["TDIAG-DT-402"]
    assert r.findings[0].message == ("aten.mm.default: PyTorch produced [8, 8] [R], tensordiag's "
                                     "propagation [8, 8] [S(0)]")
    assert r.lines == [] and r.checked == 1 and r.agree == 0
    assert "TDIAG-DT-402 m.py:7: aten.mm.default" in r.to_text()
    rec.write_text('{"id":"r1","op":"aten.relu.default","mesh":[4],"args":[],"calls":0}\n')
    with pytest.raises(tensordiag.InputError) as info:
        report(rec)
    assert str(info.value) == f"{rec}:1: malformed case 'r1': calls must be at least 1, not 0"
    cli = tdiag("shard", "report", rec, check_status=2)
    assert cli.stderr.strip().splitlines()[-1] == f"tdiag: {info.value}"


def test_report_ranks_modules_as_the_cli_does(tdiag):
    """The module ranking (forward and backward apart) is the C++ comm report's, read through
    the bindings: tensordiag.dtensor.report, report_text and `tdiag shard report` agree."""
    from tensordiag.dtensor import CommModule, report_text
    path = SOURCE_DIR / "tests" / "data" / "dtensor" / "modules_recording.jsonl"
    r = report(path)
    assert all(isinstance(m, CommModule) for m in r.modules)
    assert [(m.module, m.phase, m.bytes, m.count) for m in r.modules] == [
        ("Model.blocks.0", "backward", 24576, 3), ("Model.blocks.0", "forward", 12288, 3),
        ("Model.blocks.1.down", "forward", 2000, 2), ("Model.blocks.1", "forward", 500, 1),
        ("Model.blocks.2", "forward", 500, 1), ("<top level>", "backward", 16, 1),
        ("<top level>", "", 10, 1)]
    first, second, tp = r.modules[:3]
    assert first.collectives == {"reduce_scatter": 3} and first.lines == {}
    assert first.ops == {"c10d._reduce_scatter_base_.default": 3}
    assert second.lines == {"train.py:12": 12288}
    assert tp.collectives == {"all_reduce": 2}  # the issued all_reduce, not the plan's bytes
    assert r.modules[3].collectives == {"broadcast": 1}
    table = r.modules_text(2)
    assert table.splitlines()[0] == "7 module phases moved 38.96 KiB per rank in 12 collectives"
    assert "... 5 more module phases (--top 0 lists all)" in table
    assert "\nmodules: " + r.modules_text(10) in r.to_text()
    assert r.to_text(2) == tdiag("shard", "report", path, "--top", "2", check_status=0).stdout
    doc = json.loads(tdiag("shard", "report", path, "--json", check_status=0).stdout)
    assert doc["modules"] == json.loads(r.to_json())["modules"]
    assert [m["module"] for m in json.loads(r.to_json(1))["modules"]] == ["Model.blocks.0"]
    # The same ranking from text (what Recording.modules() passes), named in errors.
    text = path.read_text()
    again = report_text(text, "run.jsonl")
    assert again.source == "run.jsonl"
    assert [(m.module, m.phase, m.bytes) for m in again.modules] == [
        (m.module, m.phase, m.bytes) for m in r.modules]
    with pytest.raises(tensordiag.InputError, match=r"run.jsonl:2: malformed case"):
        report_text(text.splitlines()[0] + '\n{"id": "x", "op": "y", "mesh": [2], "args": [], '
                    '"module": 3}\n', "run.jsonl")
    # A recording without modules has none, and no table.
    mlp = report(SOURCE_DIR / "tests" / "data" / "dtensor" / "mlp_recording.jsonl")
    assert mlp.modules == [] and mlp.modules_text() == "" and "module phases" not in mlp.to_text()
