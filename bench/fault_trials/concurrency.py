"""Concurrency trials: eight `check` processes at once on one store, all on one suite or each on
its own; every one ends with a verdict or a clear "store busy", and each sample is taken once."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.fault_trials import Tally, has_traceback
from bench.fault_trials.store_state import count_calls, ledger_disagrees, store_damage, write_suite

__all__ = ["trials"]

PROCESSES = 8
CASES = 3
REPEATS = 3


def _launch(suite: Path, root: Path, lock_timeout: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "noisefloor", "--root", str(root), "check", str(suite)]
        + ["--repeats", str(REPEATS), "--adopt", "--format", "json"]
        + ["--lock-timeout", lock_timeout],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NOISEFLOOR_JOBS": "1"},
    )


def _wave(tally: Tally, suites: list[Path], root: Path, what: str) -> None:
    """Start one check per suite at once and judge each exit; the last one will not wait for
    the store, so that "store busy" is tried too. On an empty store, each suite adopts one
    baseline: the checks that started with it compare with the first to finish."""
    procs = [_launch(suite, root, "600") for suite in suites[:-1]]
    procs.append(_launch(suites[-1], root, "0"))
    adopted: Counter[str] = Counter()
    for suite, proc in zip(suites, procs, strict=True):
        out, err = proc.communicate(timeout=900)
        if has_traceback(out + err):
            tally.tracebacks += 1
        busy = proc.returncode == 3 and "store busy" in err and "is locked by" in err
        if proc.returncode != 0 and not busy:
            tally.fail(f"{what}: a check exited {proc.returncode}: {err.strip()[-300:]}")
        elif proc.returncode == 0 and json.loads(out)["adopted"]:
            adopted[suite.stem] += 1
    for name, count in adopted.items():
        if count > 1:
            tally.fail(f"{what}: {count} checks of suite {name} each adopted a baseline")


def _one_trial(tally: Tally, work: Path, names: list[str]) -> None:
    root, log = work / "store", work / "calls.log"
    suites = [write_suite(work, name, CASES, REPEATS, log) for name in dict.fromkeys(names)]
    by_name = {s.stem: s for s in suites}
    # a first wave on an empty store (each suite adopts a baseline), a second that compares
    _wave(tally, [by_name[n] for n in names], root, "first checks")
    _wave(tally, [by_name[n] for n in names], root, "second checks")
    wanted = {
        (f"question {name}-c{i}", str(r))
        for name in by_name
        for i in range(CASES)
        for r in range(REPEATS)
    }
    lost, twice = count_calls(log, wanted)
    tally.lost += lost
    tally.twice += twice
    damage = store_damage(root)
    tally.torn += sum("pointer" in d for d in damage)
    for name in by_name:
        if not (root / "baselines" / f"{name}.json").exists():
            tally.torn += 1
            tally.fail(f"suite {name} lost its baseline pointer")
    disagreement = ledger_disagrees(root)
    if damage or disagreement:
        tally.fail("; ".join([*damage[:3], *([disagreement] if disagreement else [])]))


def trials(n: int, workdir: Path, seed: int = 0, processes: int = PROCESSES) -> list[Tally]:
    """`n` rounds of each: eight checks (`processes`) of one suite at once, and eight of as
    many suites; each round checks twice, on an empty store (adopting) and then comparing."""
    rng = random.Random(seed)
    one, many = Tally("concurrency, one suite"), Tally("concurrency, many suites")
    for trial in range(n):
        for tally, names in (
            (one, ["solo"] * processes),
            (many, [f"s{i}" for i in rng.sample(range(processes), processes)]),
        ):
            tally.trials += 1
            _one_trial(
                tally, workdir / f"{tally.name.split(', ')[1].replace(' ', '-')}-{trial}", names
            )
    return [one, many]
