"""`noisefloor runs` rendered: the stored runs, newest first, with the ids `diff`, `show` and
`baseline set` take, as the aligned table of the rows `noisefloor.operations.runs` lists, fitted
to the screen's width (the JSON form keeps every column whole).
"""

from __future__ import annotations

from typing import Any

from noisefloor.report._console import Screen

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


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[str]:
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
    return out


def render_runs(rows: list[dict[str, Any]], screen: Screen | None = None) -> str:
    """The rows as an aligned table; `*` marks each suite's baseline, and a last column names
    the run each re-scoring was made from, when there is one. A table wider than the screen
    drops, in turn, the suite when every run is of one, the labels when there are none, the
    target version and the start time (a run id is that time); then its lines are cut."""
    width = (screen or Screen()).width
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
    droppable = []
    if len({r["suite"] for r in rows}) <= 1:
        droppable.append("suite")
    if not any(r["label"] for r in rows):
        droppable.append("label")
    droppable += ["target_key", "started_at"]  # (a run id is the time it started)
    out = _table(rows, columns)
    for key in droppable:
        if max(map(len, out)) <= width:
            break
        columns = [c for c in columns if c[0] != key]
        out = _table(rows, columns)
    out = [line if len(line) <= width else line[: width - 1] + "…" for line in out]
    if any(r["baseline"] for r in rows):
        out.append("(* the suite's baseline)")
    return "\n".join(out) + "\n"
