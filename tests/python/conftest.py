# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: the shared data, the built `tdiag` to compare against, and the module."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

try:
    import tensordiag  # noqa: F401
except ImportError as e:  # the suite needs the package; say so once, visibly
    pytest.skip(f"the tensordiag module is not importable: {e}", allow_module_level=True)

HERE = pathlib.Path(__file__).resolve().parent

# Without the compiled module only the tests of the pure-Python parts run (compiled-kernel checks:
# tensordiag.triton and compile_checks); the header says why the others are not collected.
PURE_PYTHON = ["test_triton_checks.py"]
try:
    import tensordiag._core  # noqa: F401
    _missing_core = None
except ImportError as e:
    _missing_core = e
    collect_ignore = [p.name for p in HERE.glob("*.py")
                      if p.name not in PURE_PYTHON and p.name != "conftest.py"]


def pytest_report_header(config):
    if _missing_core is not None:
        return [f"tensordiag: the compiled module is missing ({_missing_core}); only "
                f"{', '.join(PURE_PYTHON)} run, the other tests are skipped"]
    return []
SOURCE_DIR = pathlib.Path(os.environ.get("TDIAG_SOURCE_DIR", HERE.parent.parent))
SHARED = pathlib.Path(os.environ.get("TDIAG_SHARED_DIR", SOURCE_DIR.parent / "shared"))


def pytest_collection_modifyitems(config, items):
    """docs/python.md's examples load the shared traces: without them they skip, visibly."""
    if (SHARED / "traces").is_dir():
        return
    reason = pytest.mark.skip(reason=f"shared data not found at {SHARED} (set TDIAG_SHARED_DIR)")
    for item in items:
        if item.path.suffix == ".md":
            item.add_marker(reason)


@pytest.fixture(scope="session")
def shared():
    if not (SHARED / "traces").is_dir():
        pytest.skip(f"shared data not found at {SHARED} (set TDIAG_SHARED_DIR)")
    return SHARED


@pytest.fixture(scope="session")
def tdiag():
    """Runs the built `tdiag` (TDIAG_CLI): tdiag(*args) -> CompletedProcess (text)."""
    exe = os.environ.get("TDIAG_CLI")
    if exe and not os.path.exists(exe):
        pytest.skip(f"TDIAG_CLI={exe} does not exist")
    # Without a built tdiag (an installed package elsewhere): the CLI through the package.
    command = [exe] if exe else [sys.executable, "-m", "tensordiag"]

    def run(*args, check_status=None):
        result = subprocess.run([*command, *map(str, args)], capture_output=True, text=True)
        if check_status is not None:
            assert result.returncode == check_status, result.stderr
        return result

    return run


def without_metadata(report_json: str):
    """A report's JSON without what differs between two runs (time, pid, tool name)."""
    doc = json.loads(report_json)
    doc.pop("metadata", None)
    return doc
