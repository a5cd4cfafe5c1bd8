# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.triton and tensordiag.torch.compile_checks (issue 38).

The pure-Python pieces (site table, kernel scan, decoding, the report) run anywhere, without the
compiled module, torch or triton; the GPU tests need CUDA, PyTorch >= 2.4 with Inductor, and
Triton, and skip saying so. Neither is imported at module import."""

import importlib.util
import math
import pathlib
import struct
import subprocess
import sys
import textwrap

import pytest

import tensordiag
from tensordiag import _compiled_checks as cc

HERE = pathlib.Path(__file__).resolve().parent


def planted(what, path=HERE / "triton_checks_programs.py"):
    lines = path.read_text().splitlines()
    return [n for n, t in enumerate(lines, 1) if f"# planted: {what}" in t][0]


def words(*, count, a, b, program=(0, 0, 0), lane=0, grid=(1, 1, 1)):
    def bits(v):
        return struct.unpack("<q", struct.pack("<d", float(v)))[0]
    def as_int(v):
        return int(v) if math.isfinite(v) else 0
    return [as_int(a), bits(a), as_int(b), bits(b), *program, lane, *grid, 0]


# --- pure Python ---------------------------------------------------------------------------

def test_site_table_gives_stable_ids_and_refuses_unknown_kinds():
    table = cc.SiteTable()
    a = table.register("index", "check_index(j, n)", "k", file="k.py", line=3)
    assert table.register("index", "check_index(j, n)", "k", file="k.py", line=3) is a
    b = table.register("check", "x > 0", "k", file="k.py", line=4)
    assert (a.id, b.id, len(table)) == (0, 1, 2)
    with pytest.raises(ValueError, match="site kind"):
        table.register("bounds", "x", "k")
    assert table[99].kernel == "<unknown kernel>"


def test_decode_and_report_in_the_c_macros_shape():
    table = cc.SiteTable()
    site = table.register("index", "tdt.check_index(j, rows, failures, ROW, m)", "gather_rows",
                          file="samples/triton_checks/gather.py", line=21)
    counts = [0] * cc.MAX_SITES
    counts[site.id] = 1987
    records = [0] * (cc.MAX_SITES * cc.RECORD_WORDS)
    records[:cc.RECORD_WORDS] = words(count=1987, a=16, b=16, program=(3, 0, 0), lane=14,
                                      grid=(132, 1, 1))
    (f,) = cc.decode(counts, records, table, device=0)
    assert (f.a, f.b, f.program, f.lane, f.grid, f.count) == (16, 16, (3, 0, 0), 14, (132, 1, 1),
                                                            1987)
    text = cc.render_text([f])
    first = text.splitlines()[0]
    assert first == ("samples/triton_checks/gather.py:21: error: assertion failed: index 16 not "
                     "below 16 (tdt.check_index(j, rows, failures, ROW, m)) in gather_rows at "
                     "samples/triton_checks/gather.py:21, program (3,0,0) lane 14, grid (132,1,1) "
                     "on device 0, and 1,986 more failures at this site [TDIAG-DSA-001]")
    assert "    index       = 16" in text and "hint: the index must lie in [0, 16)" in text
    doc = cc.report_json([f])
    (d,) = doc["diagnostics"]
    assert doc["schema"] == "tensordiag.report/v1" and d["code"] == "TDIAG-DSA-001"
    assert d["location"] == {"file": "samples/triton_checks/gather.py", "line": 21,
                             "function": "gather_rows"}
    assert {"name": "program", "value": [3, 0, 0]} in d["fields"]


def test_negative_index_float_operands_and_the_compiled_site():
    table = cc.SiteTable()
    idx = table.register("index", "index out of bounds: 0 <= tmp3 < 1000", "<generated kernel>",
                         message="0 <= tmp3 < 1000", user_file="model.py", user_line=12,
                         user_code="return self.emb(ids)",
                         op="aten.embedding.default(float32[1000, 64], int64[4096])")
    chk = table.register("check", "x < y", "k", file="k.py", line=7, message="x must be small")
    assert (idx.id, chk.id) == (0, 1)
    counts = [1, 2] + [0] * (cc.MAX_SITES - 2)
    records = words(count=1, a=-3, b=1000) + words(count=2, a=2.5, b=float("nan"))
    records += [0] * (cc.MAX_SITES * cc.RECORD_WORDS - len(records))
    f_idx, f_chk = cc.decode(counts, records, table)
    assert cc.what_failed(f_idx) == "index -3 is negative"
    assert f_chk.a == 2.5 and math.isnan(f_chk.b)
    text = cc.render_text([f_idx, f_chk])
    assert text.startswith("model.py:12: error: assertion failed: index -3 is negative "
                           "(index out of bounds: 0 <= tmp3 < 1000) in <generated kernel>")
    assert "from aten.embedding.default(float32[1000, 64], int64[4096])" in text
    assert "user code       = return self.emb(ids)" in text
    assert "k.py:7: error: assertion failed: check failed with values 2.5, nan (x < y: x must " \
           "be small)" in text and "and 1 more failure at this site" in text
    assert {"name": "b", "value": {"float": "nan"}} in cc.report_json([f_chk])["diagnostics"][0][
        "fields"]


def test_decode_refuses_a_buffer_of_the_wrong_shape():
    with pytest.raises(ValueError, match="failure buffer"):
        cc.decode([1] * 4, [0] * 3)


def test_the_exception_carries_the_report_and_check_is_quiet_without_triton():
    table = cc.SiteTable()
    s = table.register("index", "check_index(i, n)", "k", file="k.py", line=1)
    f = cc.Failure(s, 1, 5, 4, (0, 0, 0), 0, (1, 1, 1))
    e = cc.make_error([f])
    assert isinstance(e, tensordiag.DeviceAssertionError) and isinstance(e, tensordiag.Error)
    assert e.code == "TDIAG-DSA-001" and e.failures == [f]
    assert str(e).startswith("k.py:1: error: assertion failed: index 5 not below 4")
    assert e.report_json["diagnostics"][0]["code"] == "TDIAG-DSA-001"
    if "tensordiag.triton" not in sys.modules:
        assert tensordiag.check() is None


class _Site:  # what tensordiag.triton.site() returns: a tl.constexpr with .value
    def __init__(self, value):
        self.value = value


def test_kernel_sites_are_read_from_the_kernel_source(tmp_path):
    src = tmp_path / "kernels.py"
    src.write_text(textwrap.dedent("""\
        def kernel(x, n, failures, m):
            ok = tdt.check_index(x, n, failures, ROW, m)
            good = check(x > 0, x, 0, failures, POSITIVE, m)
            return ok
        def twice(x, n, failures, m):
            tdt.check_index(x, n, failures, ROW, m)
            tdt.check_index(x + 1, n, failures, ROW, m)
        def missing(x, n, failures, m):
            tdt.check_index(x, n, failures, NOWHERE, m)
        def computed(x, n, failures, m):
            tdt.check_index(x, n, failures, 1 + 2, m)
        """))
    spec = importlib.util.spec_from_file_location("kernels_under_test", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.ROW, mod.POSITIVE = _Site(5), _Site(6)
    table = cc.SiteTable()
    for _ in range(7):
        table.reserve()
    a, b = cc.register_kernel_sites(mod.kernel, "kernel", table)
    assert (a.id, a.kind, a.line, a.kernel) == (5, "index", 2, "kernel")
    assert a.condition == "tdt.check_index(x, n, failures, ROW, m)"
    assert (b.id, b.kind, b.line) == (6, "check", 3)
    with pytest.raises(ValueError, match="each check needs a site of its own"):
        cc.register_kernel_sites(mod.twice, "twice", table)
    with pytest.raises(ValueError, match="'NOWHERE' is not a global"):
        cc.register_kernel_sites(mod.missing, "missing", table)
    with pytest.raises(ValueError, match="needs its site argument"):
        cc.register_kernel_sites(mod.computed, "computed", table)


def test_user_frames_of_an_fx_stack_trace():
    trace = ('  File "/home/u/model.py", line 30, in forward\n    x = self.emb(ids)\n'
             '  File "/usr/lib/python3/site-packages/torch/nn/modules/sparse.py", line 190, '
             'in forward\n    return F.embedding(\n')
    assert cc.user_frames(trace) == [
        ("/home/u/model.py", 30, "forward", "x = self.emb(ids)"),
        ("/usr/lib/python3/site-packages/torch/nn/modules/sparse.py", 190, "forward",
         "return F.embedding(")]


def test_this_module_imports_neither_torch_nor_triton():
    code = ("import sys; sys.path[:0] = [%r, %r]; import test_triton_checks; "
            "print('torch' in sys.modules, 'triton' in sys.modules)"
            % (str(HERE), str(pathlib.Path(tensordiag.__file__).parent.parent)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE)
    assert out.stdout.split() == ["False", "False"], out.stderr


# --- GPU ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu():
    try:
        import torch
        import triton  # noqa: F401
        from torch._inductor.codegen import common  # noqa: F401
    except ImportError:
        pytest.skip("needs CUDA and Triton")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA and Triton")
    import triton_checks_programs as programs
    return torch, programs


def _next_op_runs(torch):
    assert torch.ones(1024, device="cuda").sum().item() == 1024.0


def test_triton_check_index_reports_the_kernel_line_and_keeps_the_stream(gpu):
    torch, p = gpu
    import tensordiag.triton as tdt
    table = torch.arange(16, dtype=torch.float32, device="cuda")
    idx = torch.arange(300, dtype=torch.int32, device="cuda") % 16
    idx[141] = 16                                    # the bad value, in program 1 lane 13
    out = p.run_gather_rows(table, idx)
    with pytest.raises(tensordiag.DeviceAssertionError) as e:
        tensordiag.check()
    text = str(e.value)
    print(text)
    line = planted("triton check_index")
    assert (f"triton_checks_programs.py:{line}: error: assertion failed: index 16 not below 16"
            in text)
    assert "in gather_rows" in text and "program (1,0,0) lane 13, grid (3,1,1)" in text
    assert out[141].item() == 0.0 and out[140].item() == 140 % 16
    _next_op_runs(torch)
    tensordiag.check()                                   # cleared: nothing more to report
    assert tdt.take_failures() == []


def _compiled_failure(torch, fn, args, what, value, size):
    import tensordiag.torch as ttorch
    torch._dynamo.reset()
    with ttorch.compile_checks(raise_at_exit=False):
        compiled = torch.compile(fn)
        compiled(*args)
    with pytest.raises(tensordiag.DeviceAssertionError) as e:
        tensordiag.check()
    text = str(e.value)
    print(text)
    line = planted(what)
    assert f"triton_checks_programs.py:{line}: error: assertion failed: index {value} not below " \
           f"{size}" in text, text
    _next_op_runs(torch)
    return text


def test_compiled_gather_names_the_users_line(gpu):
    torch, p = gpu
    x = torch.randn(64, 32, device="cuda")
    idx = torch.randint(0, 32, (64, 8), device="cuda")
    idx[5, 3] = 40
    text = _compiled_failure(torch, p.gather, (x, idx), "gather", 40, 32)
    assert "gather" in text


def test_compiled_embedding_names_the_users_line(gpu):
    torch, p = gpu
    table = torch.randn(1000, 64, device="cuda")
    ids = torch.randint(0, 1000, (4096,), device="cuda")
    ids[777] = 1003
    text = _compiled_failure(torch, p.embed, (table, ids), "embedding", 1003, 1000)
    assert "embedding" in text


def test_compiled_scatter_names_the_users_line(gpu):
    torch, p = gpu
    out = torch.zeros(100, device="cuda")
    idx = torch.randint(0, 100, (1000,), device="cuda")
    idx[999] = 130
    src = torch.ones(1000, device="cuda")
    text = _compiled_failure(torch, p.scatter, (out, idx, src), "scatter", 130, 100)
    assert "scatter" in text


def test_registration_is_restored(gpu):
    torch, _ = gpu
    from torch._inductor.codegen import common
    import tensordiag.torch as ttorch
    common.init_backend_registration()
    before = common.device_codegens["cuda"]
    with ttorch.compile_checks(raise_at_exit=False):
        assert common.device_codegens["cuda"] is not before
    assert common.device_codegens["cuda"] is before
