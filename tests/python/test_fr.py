# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.fr: the Flight Recorder verdict of `tdiag fr analyze`, on the synthetic scenarios
of tests/data/fr and the dumps PyTorch 2.11 wrote in tests/data/fr_real (each with its
truth.json)."""

import json
import os
import pathlib

import pytest

import tensordiag
from tensordiag import fr

DATA = pathlib.Path(os.environ.get("TDIAG_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])) \
    / "tests" / "data" / "fr"


def scenarios():
    """The synthetic scenarios, then the dumps PyTorch 2.11 wrote (tests/data/fr_real)."""
    found = []
    for data in (DATA, DATA.parent / "fr_real"):
        if data.exists():
            found += sorted(p for p in data.iterdir() if (p / "truth.json").exists())
    return found


@pytest.mark.parametrize("folder", scenarios(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_culprits_are_the_truth(folder):
    truth = json.loads((folder / "truth.json").read_text())
    verdict = fr.load(folder)
    assert verdict["schema"] == "tensordiag.fr/v1"
    got = {str(c["rank"]): c["cause"] for c in verdict.culprits}
    assert got == truth.get("culprits", {}), verdict.text
    assert verdict["stuck"] == truth.get("stuck", False), verdict.text


def test_verdict_shows_itself_and_has_tables():
    folder = DATA / "skipped_collective"
    if not folder.exists():
        pytest.skip(f"no scenario {folder}")
    verdict = fr.load(str(folder))
    assert verdict.culprits, verdict.text
    assert str(verdict).splitlines()[0] == verdict.text.splitlines()[0]
    assert "<table" in verdict._repr_html_()
    assert verdict.rows("culprits")[0]["rank"] == verdict.culprits[0]["rank"]
    assert any(d.code.startswith("TDIAG-FR-") for d in verdict.report.diagnostics)
    with pytest.raises(ValueError):
        verdict.rows("nothing")


def test_bad_input_raises_input_error(tmp_path):
    bad = tmp_path / "_dump_0"
    bad.write_bytes(b"\x80\x05not a pickle")
    with pytest.raises(tensordiag.InputError) as e:
        fr.load(bad)
    assert isinstance(e.value, OSError)
    assert "_dump_0" in str(e.value)
    with pytest.raises(ValueError):
        fr.load(bad, world_size=-1)
    # Past int: named, not pybind11's "incompatible function arguments".
    with pytest.raises(ValueError, match="world_size=1180591620717411303424"):
        fr.load(bad, world_size=2**70)
    # A path given as bytes is one path, not a list of ints.
    with pytest.raises(tensordiag.InputError):
        fr.load(os.fsencode(bad))
