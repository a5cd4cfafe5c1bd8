# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""mypy over the package (its stubs and its pure-Python modules) and stubtest (the stubs match
what the package defines at run time), against the package being tested: the build tree's,
an installed wheel or an editable install. Skipped, saying so, where mypy is not installed."""

import os
import pathlib
import subprocess
import sys

import pytest

import tensordiag

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = pathlib.Path(os.environ.get("TDIAG_SOURCE_DIR", HERE.parent.parent)) / "python/pyproject.toml"
# What stubtest cannot see or need not: the compiled module has no stub of its own (the .pyi of
# the modules that re-export it are the stubs); pybind11's classes have their own metaclass and
# an (*args, **kwargs) constructor; PyTorch's modules (and tensordiag.triton) load only with
# torch; the private helper modules have no stubs (mypy checks their sources).
ALLOWLIST = "\n".join([
    r"tensordiag\._tensordiag.*",
    r"tensordiag\.(dtensor|report)\.[A-Z][A-Za-z]*",
    r"tensordiag\.(dtensor|report)\.[A-Z][A-Za-z]*\.__init__",
    r"tensordiag\.torch.*",
    r"tensordiag\.triton.*",
    r"tensordiag\._(core|frames|arrow|display|compiled_checks)\..*",
    r"tensordiag\.__main__",
]) + "\n"


def mypy_or_skip():
    probe = subprocess.run([sys.executable, "-c", "import mypy.api"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"mypy is not installed for {sys.executable} (Debian: apt-get install mypy)")


def mypy_env():
    """MYPYPATH for a package on PYTHONPATH (the build tree, the sources); an installed one
    (site-packages) mypy finds by itself, and refuses on MYPYPATH."""
    package_parent = pathlib.Path(tensordiag.__path__[0]).parent
    if package_parent.name in ("site-packages", "dist-packages"):
        return dict(os.environ)
    return dict(os.environ, MYPYPATH=str(package_parent))


def run(args, tmp_path):
    env = mypy_env()
    config = ["--config-file", str(CONFIG)] if CONFIG.exists() else []
    return subprocess.run([sys.executable, "-m", *args, *config], capture_output=True, text=True,
                          env=env, cwd=tmp_path)


def test_mypy_clean(tmp_path):
    mypy_or_skip()
    result = run(["mypy", "--cache-dir", str(tmp_path / "cache"), "-p", "tensordiag"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_stubtest_clean(tmp_path):
    mypy_or_skip()
    allowlist = tmp_path / "allowlist.txt"
    allowlist.write_text(ALLOWLIST)
    config = ["--mypy-config-file", str(CONFIG)] if CONFIG.exists() else []
    env = mypy_env()
    result = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tensordiag",
                             "--allowlist", str(allowlist), "--ignore-unused-allowlist",
                             "--ignore-missing-stub", *config],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
