# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The docs checker itself: it passes true claims and fails false ones."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import console_blocks  # noqa: E402


def fake_tdiag(tmp_path):
    """A stand-in `tdiag` that prints its arguments, or fails with status 3 on `fail`."""
    script = tmp_path / "fake-tdiag"
    script.write_text('#!/bin/sh\n[ "$1" = fail ] && { echo "tdiag: failed"; exit 3; }\n'
                      'for a in "$@"; do echo "$a"; done\necho "report on vm at 2026-01-02T03:04:05Z"\n')
    script.chmod(0o755)
    return {"tdiag": str(script)}


def check(tmp_path, block):
    doc = tmp_path / "doc.md"
    doc.write_text("Intro.\n\n```console\n" + block + "```\n\n```\n$ not run\n```\n")
    return console_blocks.check_file(doc, fake_tdiag(tmp_path), "/data")


def test_true_claim_passes(tmp_path):
    assert check(tmp_path, "$ tdiag a 'b c'\na\nb c\nreport on host at 2000-01-01T00:00:00Z\n") \
        == (1, [])


def test_false_claim_fails_naming_the_line(tmp_path):
    count, failures = check(tmp_path, "$ tdiag a\nb\n...\n")
    assert count == 1 and len(failures) == 1
    assert failures[0].startswith(f"{tmp_path / 'doc.md'}:4: the output differs")


def test_excerpts_and_line_prefixes(tmp_path):
    assert check(tmp_path, "$ tdiag x y z\n...\nz\nreport on ...\n")[1] == []
    assert check(tmp_path, "$ tdiag x y z\nx\n...\n")[1] == []
    assert check(tmp_path, "$ tdiag x y z\ny\n...\n")[1] != []


def test_exit_status_is_part_of_the_claim(tmp_path):
    assert check(tmp_path, "$ tdiag fail\ntdiag: failed\n[exit status 3]\n")[1] == []
    assert "exit status 3, the block claims 0" in check(tmp_path, "$ tdiag fail\ntdiag: failed\n")[1][0]


def test_shared_data_paths_and_other_programs(tmp_path):
    assert check(tmp_path, "$ tdiag ../shared/traces/x\n/data/traces/x\n...\n")[1] == []
    assert "runs only tdiag" in check(tmp_path, "$ rm -rf x\n")[1][0]
    assert "output before any" in check(tmp_path, "stray\n$ tdiag a\na\n...\n")[1][0]


def test_blocks_of_other_types_claim_nothing():
    assert list(console_blocks.console_blocks("```sh\n$ tdiag x\n```\n```text\nout\n```\n")) == []
