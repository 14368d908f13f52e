"""The drift each case is allowed, learned from what the store holds of the baseline's version:
its deep pool split into the sessions that took it (runs, controls), and fresh checks of it.

Each pass-rate scorer of each case gets the sessions its repeats came from; their spread between
sessions is estimated, shrunk across the suite and towards the prior (`stats.drift`). Read from
the score files the check's looks wrote (a score file missing is a session skipped): no call,
no scoring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import orjson

from noisefloor.errors import NoisefloorError
from noisefloor.model.records import CaseRecord, RunRecord, ScorerUse
from noisefloor.pipeline.engine import compared_score_file
from noisefloor.settings import DRIFT_PRIOR, DRIFT_PRIOR_REPEATS, DRIFT_PRIOR_SESSIONS
from noisefloor.stats.drift import Dispersion, Spread, dispersion, learned_spread, prior_weight
from noisefloor.store.store import Store

__all__ = ["Allowance", "learned_drift"]

#: The newest runs of a suite whose record says which sessions took the baseline's repeats.
RUNS_READ = 200
#: Repeats no run record claims (taken by a run since removed): one session of their own.
_UNCLAIMED = -1


@dataclass(frozen=True)
class Allowance:
    """The drift each case's pass rates are allowed, and how its deep pool is spread over
    sessions; both by case id, then scorer key."""

    spreads: dict[str, dict[str, Spread]]
    concentration: dict[str, dict[str, float]]
    """The sum of the squared shares of the pool's repeats each session took (1: one session)."""
    prior: float = DRIFT_PRIOR


def learned_drift(
    store: Store, base: RunRecord, pool: RunRecord, uses: Mapping[str, list[ScorerUse]]
) -> Allowance:
    """Each case's allowed drift: the sessions of the baseline's version in its deep `pool`'s
    sample directory (the repeats each run of the suite, and each control, took there, the
    oldest run holding a repeat having taken it; inside the pool's window or before it) and
    behind fresh checks of that version (other sample sets of its input), each pass rate scored
    by the candidate's scorers `uses` as the looks scored them."""
    runs = _runs(store, base.suite)
    windows = _windows(store, runs, pool)
    sessions: dict[tuple[str, str], list[tuple[int, int]]] = {}
    shares: dict[str, dict[str, float]] = {}
    for case in pool.cases:
        taken = windows.get(case.case_id, [])
        owners: dict[int, int] = {}
        for owner, _, end, first in taken:
            for repeat in range(first, end):
                owners.setdefault(repeat, owner)
        for use in uses.get(case.case_id, []):
            pooled = _graded(store, base.suite, case, use)
            if pooled is None:
                continue
            graded = dict(pooled)
            for _, start, end, _ in taken:
                window = case.model_copy(update={"start": start, "repeats": end})
                for repeat, passed in (_graded(store, base.suite, window, use) or {}).items():
                    graded.setdefault(repeat, passed)
            sessions[case.case_id, use.label] = _by_owner(
                (owners.get(r, _UNCLAIMED), passed) for r, passed in graded.items()
            )
            inside = _by_owner((owners.get(r, _UNCLAIMED), passed) for r, passed in pooled.items())
            total = sum(n for _, n in inside)
            shares.setdefault(case.case_id, {})[use.label] = sum(
                (n / total) ** 2 for _, n in inside
            )
    for run in runs:
        if run.target.key != base.target.key:
            continue
        for other in _fresh_sets(run, pool):
            for use in uses.get(other.case_id, []):
                fresh = _graded(store, base.suite, other, use)
                key = (other.case_id, use.label)
                if fresh and key in sessions:
                    sessions[key].append((sum(fresh.values()), len(fresh)))
    found: dict[str, Dispersion | None] = {
        f"{cid}\0{label}": dispersion(held) for (cid, label), held in sessions.items()
    }
    weight = prior_weight(DRIFT_PRIOR_SESSIONS, DRIFT_PRIOR_REPEATS)
    learned = learned_spread(found, DRIFT_PRIOR, weight)
    spreads: dict[str, dict[str, Spread]] = {}
    for joined, spread in learned.items():
        cid, label = joined.split("\0")
        spreads.setdefault(cid, {})[label] = spread
    return Allowance(spreads, shares)


def _by_owner(graded: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Passes and repeats of each session, from each repeat's (owner, passed)."""
    counts: dict[int, list[int]] = {}
    for owner, passed in graded:
        counts.setdefault(owner, []).append(passed)
    return [(sum(v), len(v)) for v in counts.values()]


def _runs(store: Store, suite: str) -> list[RunRecord]:
    """The suite's newest runs, oldest first; a record that does not read is skipped (the
    check's own evidence does not rest on it)."""
    runs = []
    for _, run_id in store.runs(suite)[-RUNS_READ:]:
        try:
            runs.append(store.load_run(suite, run_id))
        except NoisefloorError:
            continue
    return runs


def _windows(
    store: Store, runs: list[RunRecord], pool: RunRecord
) -> dict[str, list[tuple[int, int, int, int]]]:
    """Per case, the windows of the pool's sample directory that runs were judged on, oldest run
    first: (the run's index, start, end, the first repeat it took), a run's own cases' and its
    controls' (a later run naming a repeat reused it)."""
    dirs = {c.case_id: c.sample_dir for c in pool.cases}
    controlled_dirs: dict[str, dict[str, str]] = {}
    found: dict[str, list[tuple[int, int, int, int]]] = {}
    for index, run in enumerate(runs):
        for c in run.cases:
            if dirs.get(c.case_id) == c.sample_dir:
                found.setdefault(c.case_id, []).append((index, c.start, c.repeats, c.first_repeat))
        record = run.sequential
        if record is None or not record.controls:
            continue
        if record.baseline not in controlled_dirs:
            controlled_dirs[record.baseline] = _dirs_of(store, runs, pool.suite, record.baseline)
        held = controlled_dirs[record.baseline]
        for cid, (_, _, b_start, b_end) in record.controls.items():
            if cid in dirs and held.get(cid) == dirs[cid]:
                found.setdefault(cid, []).append((index, b_start, b_end, b_start))
    return found


def _dirs_of(store: Store, runs: list[RunRecord], suite: str, run_id: str) -> dict[str, str]:
    """The sample directory of each case of a run (a control's baseline)."""
    for run in runs:
        if run.run_id == run_id:
            return {c.case_id: c.sample_dir for c in run.cases}
    try:
        return {c.case_id: c.sample_dir for c in store.load_run(suite, run_id).cases}
    except NoisefloorError:
        return {}


def _fresh_sets(run: RunRecord, pool: RunRecord) -> list[CaseRecord]:
    """A run's cases of the baseline's version and input in another sample set than the pool's
    (a fresh check of that version): each a session of its own."""
    held = {c.case_id: c for c in pool.cases}
    return [
        c
        for c in run.cases
        if (same := held.get(c.case_id)) is not None
        and c.case_key == same.case_key
        and c.sample_dir != same.sample_dir
        and c.repeats > c.start
    ]


def _graded(store: Store, suite: str, case: CaseRecord, use: ScorerUse) -> dict[int, int] | None:
    """Each scored repeat of a pass-rate scorer in the case's window, 1 passed and 0 failed (an
    error of the program fails; one of the infrastructure or the scorer counts for nothing);
    None when the window was never scored so, or the scorer is not a pass rate."""
    path = compared_score_file(store, suite, case, use)
    try:
        data = orjson.loads(path.read_bytes())
        if data.get("kind") != "binary":
            return None
        graded = {}
        for score in data["repeats"]:
            status = score["status"]
            if status in ("pass", "fail", "target_error"):
                graded[int(score["repeat"])] = int(status == "pass")
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return graded
