"""`noisefloor runs`: the stored runs, newest first, with the ids `diff`, `show` and `baseline set` take.

One row per run: its suite, label, start time, target version, calls, repeats and baseline mark.
"""

from __future__ import annotations

from typing import Any

from noisefloor.errors import StoreError
from noisefloor.model.records import RunRecord
from noisefloor.store.store import Store

__all__ = ["render_runs", "run_rows"]

#: Characters of the target version shown in the table (the JSON keeps all of it).
_SHORT_KEY = 8


def _row(run: RunRecord, baseline: str | None) -> dict[str, Any]:
    reps = sorted({c.repeats for c in run.cases})
    return {
        "run_id": run.run_id,
        "suite": run.suite,
        "label": run.label,
        "started_at": run.started_at,
        "target_key": run.target.key,
        "calls": run.calls,
        "repeats": reps[0] if len(reps) == 1 else reps,
        "cases": len(run.cases),
        "rescored_from": run.rescored_from,
        "baseline": run.run_id == baseline,
    }


def run_rows(store: Store, suite: str | None = None) -> list[dict[str, Any]]:
    """Every completed run (of one suite, or of all), newest first.

    Raises:
        StoreError: If there is no run to list.
    """
    found = store.runs(suite)
    if not found:
        where = f"of suite {suite!r} " if suite else ""
        raise StoreError(
            f"no runs {where}under {store.root}",
            hint="`noisefloor run SUITE` makes one"
            + ("; `noisefloor runs` lists every suite's" if suite else ""),
        )
    baselines = {p.suite: p.run_id for p in store.baselines()}
    rows = [_row(store.load_run(s, r), baselines.get(s)) for s, r in found]
    return sorted(rows, key=lambda row: (row["started_at"], row["run_id"]), reverse=True)


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
