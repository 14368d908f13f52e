"""SIGKILL at a random instant of a check (sampling, scoring, doit, report, ledger, baseline
adoption): the next check finishes, takes only the samples the killed one did not keep, and
agrees with a check that was never killed."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fault_trials import Tally, cli_run, has_traceback
from bench.fault_trials.store_state import calls, ledger_disagrees, store_damage, write_suite

__all__ = ["trials"]

CASES = 3
REPEATS = 3
SUITE = "crash"


def _check_args(suite: Path) -> list[str]:
    return ["check", str(suite), "--repeats", str(REPEATS), "--adopt", "--format", "json"]


def _new_version(work: Path) -> None:
    """Change the fake target's code (not its behaviour): a new target version, new samples."""
    with open(work / "fake_target.py", "a") as handle:
        handle.write("# a new version\n")


def _summary(out: str) -> Any:
    """What a check decided, per case: its verdict and each scorer's candidate counts."""
    report = json.loads(out)
    return {
        case["case_id"]: (
            case["verdict"] if not report["adopted"] else "adopted",
            [(s["key"], s["candidate"]["k"], s["candidate"]["n"]) for s in case["scorers"]],
        )
        for case in report["cases"]
    }


def _kept(root: Path) -> set[Path]:
    """Every sample on disk with content."""
    base = root / "samples"
    return {p for p in base.rglob("r*.json") if p.stat().st_size} if base.is_dir() else set()


def _keys(paths: set[Path]) -> set[tuple[str, str]]:
    """The (question, repeat) the fake target logs for each sample file."""
    return {(f"question {p.parent.parent.name}", p.stem[1:]) for p in paths}


def _reference(workdir: Path) -> tuple[list[Any], list[float]]:
    """The reports and durations of the two checks of a trial, never killed."""
    work = workdir / "reference"
    root, log = work / "store", work / "calls.log"
    suite = write_suite(work, SUITE, CASES, REPEATS, log)
    reports, durations = [], []
    for step in range(2):
        if step:
            _new_version(work)
        started = time.monotonic()
        done = cli_run(*_check_args(suite), root=root)
        durations.append(time.monotonic() - started)
        if done.returncode != 0:
            raise RuntimeError(f"the reference check failed: {done.stderr}")
        reports.append(_summary(done.stdout))
    return reports, durations


def _killed_at(args: list[str], root: Path, delay: float) -> None:
    """Start the CLI and SIGKILL it `delay` seconds later (if it is still running)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "noisefloor", "--root", str(root), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "NOISEFLOOR_JOBS": "1"},
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _one_trial(tally: Tally, work: Path, rng: random.Random, reference: Any, spans: Any) -> None:
    root, log = work / "store", work / "calls.log"
    suite = write_suite(work, SUITE, CASES, REPEATS, log)
    victim = rng.randrange(2)  # the first check (it adopts a baseline) or the second
    wanted = {(f"question {SUITE}-c{i}", str(r)) for i in range(CASES) for r in range(REPEATS)}
    for step in range(2):
        if step:
            _new_version(work)
        args = _check_args(suite)
        older = _kept(root)
        if step == victim:
            _killed_at(args, root, rng.uniform(0, spans[step]))
            # a call the killed check had running fails on its closed pipe: let it end
            time.sleep(0.2)
        before, kept = calls(log), _keys(_kept(root) - older)
        done = cli_run(*args, root=root, env={"NOISEFLOOR_JOBS": "1"})
        if has_traceback(done.stdout + done.stderr):
            tally.tracebacks += 1
        if done.returncode != 0:
            tally.fail(
                f"check {step + 1} after the kill exited {done.returncode}: {done.stderr[-300:]}"
            )
            return
        again = calls(log) - before
        tally.twice += sum(n for key, n in again.items() if key in kept)
        tally.twice += sum(n - 1 for n in again.values() if n > 1)
        got = _summary(done.stdout)
        want = reference[step]
        if step == 0 and got != want:
            # a kill after the baseline was adopted: the rerun compares instead of adopting
            got = {case: ("adopted", counts) for case, (_, counts) in got.items()}
        if got != want:
            tally.fail(f"check {step + 1} after the kill decided {got}, never killed {want}")
        tally.lost += len(wanted - _keys(_kept(root) - older))
    # a process killed between making its temporary file and renaming it leaves that file:
    # never read, and ignored by the store's .gitignore
    damage = store_damage(root, strays=False)
    tally.torn += sum("pointer" in d for d in damage)
    if not (root / "baselines" / f"{SUITE}.json").exists():
        tally.torn += 1
    disagreement = ledger_disagrees(root)
    if damage or disagreement:
        tally.fail("; ".join([*damage[:3], *([disagreement] if disagreement else [])]))


def trials(n: int, workdir: Path, seed: int = 0) -> list[Tally]:
    """`n` trials, each killing one of a trial's two checks at a random instant of its span.

    "Taken twice" counts a call the check after the kill made for a sample already on disk. A
    call the killed check completed but never wrote is not kept, and is made again: that is
    the cost of a kill, not a double take.
    """
    rng = random.Random(seed)
    tally = Tally("SIGKILL at a random moment")
    reference, spans = _reference(workdir)
    for trial in range(n):
        tally.trials += 1
        _one_trial(tally, workdir / f"kill-{trial}", rng, reference, spans)
    return [tally]
