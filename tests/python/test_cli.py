# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""`python -m tensordiag` is the tdiag command line."""

import subprocess
import sys


def run_module(*args):
    return subprocess.run([sys.executable, "-m", "tensordiag", *map(str, args)],
                          capture_output=True, text=True)


def test_same_output_and_status_as_tdiag(shared, tdiag):
    path = shared / "traces/oom_snapshot.pickle"
    ours = run_module("trace", "oom", path, "--color", "never")
    theirs = tdiag("trace", "oom", path, "--color", "never")
    assert ours.returncode == theirs.returncode == 1
    # The last line names the run's time; everything above it is the same text.
    assert ours.stdout.splitlines()[:-1] == theirs.stdout.splitlines()[:-1]
    assert len(ours.stdout.splitlines()) > 5


def test_usage_errors_and_version(tdiag):
    ours = run_module("trace", "summary", "/nonexistent/file")
    assert ours.returncode == 2
    assert "no such file" in ours.stderr
    version = run_module("--version")
    assert version.returncode == 0 and version.stdout == tdiag("--version").stdout


def test_main_in_process(capfd, shared):
    import tensordiag

    status = tensordiag.main(["shard", "explain", "mm", "--mesh", "2", "--arg", "f32[4,4] (R)",
                              "--arg", "f32[4,4] (S(1))"])
    assert status == 0
    assert "chosen:" in capfd.readouterr().out
