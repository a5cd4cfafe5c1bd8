#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Runs the ```console blocks of Markdown files and compares what they claim with what happens.

The convention (CONTRIBUTING.md, "Documentation"): a block that claims an output is a ```console
block. In it, a line `$ tdiag ARGS` (or `$ tdiag-view ARGS`) is a command, run without a shell
(arguments split as a POSIX shell would); the lines up to the next `$` line are its standard
output and standard error, as they appear on a terminal. In the expected text:
  - a line `...` stands for any number of lines (an excerpt), and a line ending in ` ...`
    for any line that starts with the text before it;
  - a last line `[exit status N]` states the exit status (otherwise it must be 0);
  - `../shared/` in a command is the shared test data (--data-dir); other relative paths (with
    a `/`) that exist in the checkout (--root) are taken from it; the command runs in an empty
    directory.
Compared after normalising: trailing spaces, ISO timestamps (`<time>`) and the host of report
footers. Any other block type is not run and claims nothing.

    console_blocks.py --tdiag PATH [--tdiag-view PATH] [--data-dir DIR] [--root DIR] FILE.md...
Exit status 0 when every block holds; 1 naming each block (file:line) that does not.
"""
import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = ("tdiag", "tdiag-view")
EXIT_LINE = re.compile(r"^\[exit status (\d+)\]$")


@dataclass
class Command:
    line: int  # 1-based line of the `$` line in its file
    argv: list
    expected: list = field(default_factory=list)
    status: int = 0


def console_blocks(text):
    """Yields (line of the opening fence, body lines) for each ```console block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            # A block in a list item is indented as its fence is.
            indent = len(lines[i]) - len(lines[i].lstrip())
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                line = lines[i]
                body.append(line[indent:] if line[:indent].strip() == "" else line)
                i += 1
            yield start, body
        i += 1


def commands(start, body):
    """The commands of one block; raises ValueError for text before the first `$` line."""
    out = []
    for offset, line in enumerate(body):
        if line.startswith("$ "):
            out.append(Command(start + offset + 1, shlex.split(line[2:])))
        elif not out:
            if line.strip():
                raise ValueError(f"line {start + offset + 1}: output before any `$ ` command")
        else:
            out[-1].expected.append(line)
    for c in out:
        while c.expected and not c.expected[-1].strip():
            c.expected.pop()
        if c.expected and EXIT_LINE.match(c.expected[-1]):
            c.status = int(EXIT_LINE.match(c.expected.pop()).group(1))
    return out


def normalise(lines):
    out = []
    for line in lines:
        line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "<time>", line.rstrip())
        line = re.sub(r" on \S+ at <time>", " on <host> at <time>", line)
        out.append(line)
    return out


def line_matches(expected, actual):
    if expected.endswith(" ..."):
        return actual.startswith(expected[:-4])
    return expected == actual


def matches(expected, actual):
    """True when `actual` equals `expected`, each `...` line standing for any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and line_matches(expected[0], actual[0]) and \
        matches(expected[1:], actual[1:])


def run(command, programs, data_dir, root):
    if not command.argv or command.argv[0] not in programs:
        return None, f"runs only {', '.join(PROGRAMS)}, not {command.argv[:1]}"
    argv = [programs[command.argv[0]]]
    for arg in command.argv[1:]:
        if data_dir and arg.startswith("../shared/"):
            arg = f"{data_dir}/{arg[len('../shared/'):]}"
        elif root and "/" in arg and not arg.startswith(("-", "/")) and (Path(root) / arg).exists():
            arg = str(Path(root) / arg)
        argv.append(arg)
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              encoding="utf-8", errors="replace", timeout=300, check=False)
    return done, None


def needs_absent_data(block, data_dir):
    """Whether a block reads ../shared/ while the shared data is not there."""
    if data_dir and Path(data_dir).is_dir():
        return False
    return any(arg.startswith("../shared/") for c in block for arg in c.argv)


def check_file(path, programs, data_dir=None, root=None, skipped=None):
    """Returns (blocks checked, list of failure messages) for one Markdown file; blocks that read
    the shared data when it is absent are listed in `skipped` instead."""
    failures, count = [], 0
    for start, body in console_blocks(Path(path).read_text(encoding="utf-8")):
        try:
            block = commands(start, body)
        except ValueError as e:
            count += 1
            failures.append(f"{path}:{e}")
            continue
        if needs_absent_data(block, data_dir):
            if skipped is not None:
                skipped.append(f"{path}:{start}")
            continue
        count += 1
        if not block:
            failures.append(f"{path}:{start}: a console block without a `$ ` command")
        for c in block:
            done, why = run(c, programs, data_dir, root)
            if why:
                failures.append(f"{path}:{c.line}: {why}")
                continue
            actual = normalise(done.stdout.rstrip("\n").splitlines())
            if done.returncode != c.status:
                failures.append(f"{path}:{c.line}: exit status {done.returncode}, the block "
                                f"claims {c.status}\n" + "\n".join(actual))
            elif not matches(normalise(c.expected), actual):
                failures.append(f"{path}:{c.line}: the output differs from the block's\n"
                                "--- claimed\n" + "\n".join(c.expected) +
                                "\n--- actual\n" + "\n".join(actual))
    return count, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tdiag", required=True)
    parser.add_argument("--tdiag-view")
    parser.add_argument("--data-dir")
    parser.add_argument("--root", help="the checkout, for relative paths in commands")
    parser.add_argument("--min-blocks", type=int, default=1,
                        help="fail when fewer blocks are found (a test that checks nothing)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    programs = {"tdiag": str(Path(args.tdiag).resolve())}
    if args.tdiag_view:
        programs["tdiag-view"] = str(Path(args.tdiag_view).resolve())
    total, failures, skipped = 0, [], []
    for f in args.files:
        n, bad = check_file(f, programs, args.data_dir, args.root, skipped)
        total += n
        failures += bad
    for message in failures:
        print(message)
    if skipped:
        print(f"skipped {len(skipped)} block(s) that read ../shared/: shared data not found at "
              f"{args.data_dir} ({', '.join(skipped)})")
    if total < args.min_blocks:
        print(f"only {total} console block(s) found, expected at least {args.min_blocks}")
        return 1
    print(f"{total} console block(s) checked, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
