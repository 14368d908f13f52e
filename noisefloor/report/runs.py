"""`noisefloor runs` rendered: the stored runs, newest first, with the ids `diff`, `show` and
`baseline set` take, as the aligned table of the rows `noisefloor.operations.runs` lists.
"""

from __future__ import annotations

from typing import Any

__all__ = ["render_runs"]

#: Characters of the target version shown in the table (the JSON keeps all of it).
_SHORT_KEY = 8


def _cell(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if key == "target_key":
        return str(value)[:_SHORT_KEY]
    if key == "started_at":
        return str(value)[:19].replace("T", " ")
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "-" if value is None else str(value)


def render_runs(rows: list[dict[str, Any]]) -> str:
    """The rows as an aligned table; `*` marks each suite's baseline, and a last column names
    the run each re-scoring was made from, when there is one."""
    columns = [
        ("run_id", "run id"),
        ("suite", "suite"),
        ("label", "label"),
        ("started_at", "started (UTC)"),
        ("target_key", "target"),
        ("calls", "calls"),
        ("repeats", "repeats"),
        ("cases", "cases"),
    ]
    if any(r["rescored_from"] for r in rows):
        columns.append(("rescored_from", "rescored from"))
    numeric = {"calls", "repeats", "cases"}
    table = [[title for _, title in columns]] + [
        [_cell(r, key) for key, _ in columns] for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    marks = [" "] + ["*" if r["baseline"] else " " for r in rows]
    out = []
    for mark, line in zip(marks, table, strict=True):
        cells = [
            cell.rjust(width) if key in numeric else cell.ljust(width)
            for (key, _), cell, width in zip(columns, line, widths, strict=True)
        ]
        out.append(f"{mark} {'  '.join(cells)}".rstrip())
    if any(r["baseline"] for r in rows):
        out.append("(* the suite's baseline)")
    return "\n".join(out) + "\n"
