# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""How results show themselves: the CLI's top lines as text, HTML tables in Jupyter."""

from __future__ import annotations

import html
from typing import Any, Dict, List, Mapping, Sequence

#: Lines of the report a result prints before "... N more lines".
TEXT_LINES = 12
#: Rows of a table a result renders as HTML before "N more rows".
HTML_ROWS = 20


def format_bytes(n: int) -> str:
    """As tdiag prints sizes (tensordiag/trace/units.hpp, through the compiled module)."""
    from ._core import core

    return str(core.format_bytes(int(n)))


def format_ns(n: float) -> str:
    """As tdiag prints durations (units.hpp's format_duration): 950 ns, 12.5 us, 1.234 s."""
    from ._core import core

    return str(core.format_duration(int(round(float(n)))))


def top_lines(text: str, limit: int = TEXT_LINES) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"... {len(lines) - limit} more lines (to_text() has all)"])


def cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        text = str(value)
    elif isinstance(value, int) and name.endswith("_bytes"):
        return f'<td title="{value} B">{html.escape(format_bytes(value))}</td>'
    elif isinstance(value, (int, float)) and name.endswith("_ns"):
        return f'<td title="{value} ns">{html.escape(format_ns(value))}</td>'
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    if len(text) > 120:
        return f'<td title="{html.escape(text)}">{html.escape(text[:117])}...</td>'
    return f"<td>{html.escape(text)}</td>"


def html_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str],
               limit: int = HTML_ROWS) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell(c, row.get(c)) for c in columns) + "</tr>"
                   for row in rows[:limit])
    more = (f"<p>{len(rows) - limit} more rows (to_pandas() has all)</p>"
            if len(rows) > limit else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def html_fields(fields: Dict[str, Any]) -> str:
    if not fields:
        return ""
    rows = "".join(f"<tr><th>{html.escape(k)}</th>{cell(k, v)}</tr>" for k, v in fields.items())
    return f"<table>{rows}</table>"


def html_block(title: str, headline: str, fields: Dict[str, Any],
               tables: List[tuple]) -> str:
    """A result as HTML: its name, the report's first line, its figures, its tables."""
    parts = [f"<div class=\"tensordiag\"><strong>{html.escape(title)}</strong>",
             f"<pre>{html.escape(headline)}</pre>" if headline else "", html_fields(fields)]
    for caption, rows, columns in tables:
        parts.append(f"<p><em>{html.escape(caption)}</em> ({len(rows)})</p>")
        parts.append(html_table(rows, columns))
    parts.append("</div>")
    return "".join(parts)
