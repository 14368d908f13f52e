"""The session's `noisefloor` section at the end of pytest's report: each sampled test's verdict,
the family its tests made, and, last, where the samples went.

Read from the tests' reports, so that the controller of pytest-xdist, which collects nothing,
prints what its workers found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from noisefloor.operations.check import shown_path
from noisefloor.pytest_plugin.family import Family
from noisefloor.pytest_plugin.verdict import PROPERTY_PREFIX
from noisefloor.settings import RuleName
from noisefloor.settings.resolved import Resolved

__all__ = ["summary_lines"]


def _rows(stats: Mapping[str, Sequence[Any]]) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for reports in stats.values():
        for report in reports:
            props = dict(getattr(report, "user_properties", ()))
            if getattr(report, "when", None) == "call" and f"{PROPERTY_PREFIX}verdict" in props:
                rows.append((report.nodeid, props))
    return sorted(rows, key=lambda row: row[0])


def _family(rows: list[tuple[str, dict[str, Any]]], family: Family) -> Family:
    """The session's family: its own where it collected, else (the controller of xdist) as a
    worker's tests carry it, their share and size giving the bars' count."""
    if family.tests or not rows:
        return family
    props = rows[0][1]
    tests = int(props[f"{PROPERTY_PREFIX}family"])
    members = round(family.alpha / float(props[f"{PROPERTY_PREFIX}alpha"]))
    return Family(tests=tests, thresholds=max(0, members - tests), alpha=family.alpha)


def _samples(rows: list[tuple[str, dict[str, Any]]], resolved: Resolved) -> str:
    taken = sum(int(props[f"{PROPERTY_PREFIX}calls"]) for _, props in rows)
    root = f"{shown_path(Path(resolved.store.root))}/"
    remote = resolved.store.remote
    if not taken:
        where = f"{root} (the working copy of {remote})" if remote else root
        return f"samples: none taken this session; every verdict rests on those under {where}"
    pushed = f" and pushed to {remote}" if remote else ""
    plural = "s" if taken != 1 else ""
    return f"samples: {taken} repeat{plural} taken this session, stored under {root}{pushed}"


def summary_lines(
    stats: Mapping[str, Sequence[Any]], family: Family, resolved: Resolved
) -> list[str]:
    """The section's lines; none when no sampled test reported a verdict."""
    rows = _rows(stats)
    if not rows:
        return []
    width = max(len(str(p[f"{PROPERTY_PREFIX}verdict"])) for _, p in rows)
    lines = []
    for node_id, props in rows:
        verdict = str(props[f"{PROPERTY_PREFIX}verdict"])
        repeats, calls = props[f"{PROPERTY_PREFIX}repeats"], props[f"{PROPERTY_PREFIX}calls"]
        lines.append(
            f"{verdict:>{width}}  {node_id}  {repeats} repeats ({calls} taken now), "
            f"case {props[f'{PROPERTY_PREFIX}suite']}"
        )
    if resolved.rule.rule is RuleName.EXACT:
        lines.append(_family(rows, family).line())
    else:
        lines.append(
            f"family: none; rule {resolved.rule.rule.value} judges each test alone, and states "
            "no false-alarm rate"
        )
    lines.append(_samples(rows, resolved))
    return lines
