# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""PyTorch Flight Recorder forensics: which rank hung the job, and why (``tdiag fr analyze``).

``load(paths)`` reads one dump per rank (files, folders or globs; pickles or the JSON form) and
returns the verdict the C++ library computes: ``culprits`` (each with ``rank``, ``cause``,
``pg``, ``seq``, ``op`` and ``frames``), ``groups`` and ``mismatches``, as the
``tensordiag.fr/v1`` JSON holds them (docs/flight-recorder.md)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Union

from . import _arrow, _display, _frames
from ._core import INT32_MAX, core, int_arg, native_path

PathArg = Union[str, bytes, "os.PathLike[str]"]


class Verdict(dict):
    """The ``tensordiag.fr/v1`` document: ``verdict["culprits"][0]["rank"]``, ... ``text`` is
    what ``tdiag fr analyze`` prints, ``report`` the findings as a tensordiag Report (for
    ``--format sarif`` and friends)."""

    def __init__(self, data: Dict[str, Any], text: str, report: Any) -> None:
        super().__init__(data)
        self.text = text
        self.report = report

    @property
    def culprits(self) -> List[Dict[str, Any]]:
        return list(self.get("culprits") or [])

    @property
    def groups(self) -> List[Dict[str, Any]]:
        return list(self.get("groups") or [])

    @property
    def mismatches(self) -> List[Dict[str, Any]]:
        return list(self.get("mismatches") or [])

    def to_text(self) -> str:
        return self.text

    def rows(self, table: str = "culprits") -> List[Dict[str, Any]]:
        """One of ``culprits``, ``groups``, ``mismatches``, ``ranks`` as flat dicts."""
        value = self.get(table)
        if not isinstance(value, list):
            raise ValueError(f"{table!r} is not a table of the verdict (tables: culprits, "
                             "groups, mismatches, ranks)")
        return _frames.normalize(value, keep_lists=False)

    def to_pandas(self, table: str = "culprits"):
        """One table (see ``rows``) as a pandas DataFrame."""
        pandas = _frames.require_pandas("Verdict.to_pandas()")
        return pandas.DataFrame(self.rows(table))

    def to_arrow(self, table: str = "culprits"):
        """One table (see ``rows``) as a pyarrow Table."""
        return _arrow.table_of_rows(self.rows(table), "Verdict.to_arrow()")

    def to_polars(self, table: str = "culprits"):
        """One table (see ``rows``) as a polars DataFrame, from ``to_arrow``."""
        return _arrow.to_polars(lambda: self.to_arrow(table), "Verdict.to_polars()")

    def __str__(self) -> str:
        return _display.top_lines(self.text)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        lines = self.text.splitlines()
        rows = self.rows("culprits")
        columns = [c for c in ("rank", "cause", "pg", "seq", "op", "detail") if rows and c in rows[0]]
        return _display.html_block("Flight Recorder verdict", lines[0] if lines else "", {},
                                   [("culprits", rows, columns)])


def load(paths: Union[PathArg, Iterable[PathArg]], world_size: int = 0) -> Verdict:
    """Reads the dumps at ``paths`` and names the ranks that hold the job, with their causes.
    ``world_size`` counts ranks that left no file and appear in no group (0: only what the dumps
    show). A dump cut short or corrupt whose file name states its rank stands as that rank's lost
    evidence (``ranks[i]["dump"] == "unreadable"``, with the reader's ``problem``). Raises
    InputError (also an OSError) when no file matches, when no dump reads, for a file that is no
    dump, cannot be opened, states no rank or is over a limit or the memory budget, for an
    unsupported version and for two dumps of one rank; ValueError for a bad argument. Releases
    the GIL while it works."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    text, people, report = core.fr_analyze([native_path(p) for p in paths],
                                           int_arg("world_size", world_size, 0, INT32_MAX))
    return Verdict(json.loads(text), people, report)


__all__ = ["Verdict", "load"]
