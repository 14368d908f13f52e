"""Soak: one store taking a large number of samples of a fast command target. Memory while
sampling must stay flat, a no-op check scale linearly, and `ledger rebuild` agree with the ledger."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import yaml

from bench.fault_trials import Tally, cli_run, has_traceback

__all__ = ["trials"]

REPEATS = 5
#: The no-op reference: the suite size of `bench/noop.py`'s figure, scaled linearly.
REFERENCE_CASES = 2000
#: How much the check's memory may grow while it takes the last three quarters of its samples.
GROWTH_LIMIT_MB = 16


def _suite(directory: Path, name: str, cases: int, log: Path) -> Path:
    """A suite of `cases` x 5 repeats of a shell one-liner that logs each call and echoes its
    input (the fastest target that can count its own calls)."""
    directory.mkdir(parents=True)
    rows = (
        orjson.dumps(
            {
                "id": f"case-{i:06d}",
                "input": f"input {i}",
                "scorers": [{"type": "contains", "needle": "input"}],
            }
        )
        for i in range(cases)
    )
    (directory / "cases.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    sh = shutil.which("sh") or "/bin/sh"
    # the log's path goes in the environment: a file named in argv is part of the target's
    # version, and this one changes with every call
    script = 'printf "%s\\n" "$1" >> "$SOAK_CALLS"; printf "%s\\n" "$1"'
    suite = {
        "name": name,
        "target": {
            "command": [sh, "-c", script, "sh", "{{input}}"],
            "env": {"SOAK_CALLS": str(log)},
            "timeout_s": 30,
        },
        "defaults": {"repeats": REPEATS, "baseline_repeats": REPEATS},
        "cases_file": "cases.jsonl",
    }
    path = directory / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def _rss_mb(pid: int) -> float | None:
    """The resident memory of process `pid` in MB, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def _calls(log: Path) -> int:
    """The target calls logged so far."""
    try:
        return log.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _sampled_check(
    root: Path, suite: Path, log: Path, jobs: int
) -> tuple[subprocess.CompletedProcess[str], list[tuple[int, float]], float]:
    """Run the first check (it adopts), polling its memory; returns the process, the readings
    (target calls so far, memory in MB) in time order, and the wall time."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "noisefloor",
            "--root",
            str(root),
            "check",
            str(suite),
            "--adopt",
            "--jobs",
            str(jobs),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    readings: list[tuple[int, float]] = []

    def poll() -> None:
        while proc.poll() is None:
            rss = _rss_mb(proc.pid)
            if rss is not None:
                readings.append((_calls(log), rss))
            time.sleep(0.25)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    out, err = proc.communicate()
    poller.join()
    wall = time.perf_counter() - start
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), readings, wall


def _ledger_rows(root: Path) -> tuple[set[str], int, int]:
    """The ledger's sample paths, run-sample rows and run records."""
    with contextlib.closing(sqlite3.connect(root / "ledger.sqlite")) as db:
        paths = {row[0] for row in db.execute("SELECT sample_path FROM samples")}
        run_samples = db.execute("SELECT count(*) FROM run_samples").fetchone()[0]
        runs = db.execute("SELECT count(*) FROM run_records").fetchone()[0]
    return paths, run_samples, runs


def _noop(root: Path, suite: Path, rounds: int = 3) -> float:
    """The median wall time of a check that finds everything current (after one that builds
    the verdicts)."""
    cli_run("check", suite, root=root)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        cli_run("check", suite, root=root)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def trials(
    n: int,
    workdir: Path,
    seed: int = 0,
    samples: int = 100_000,
    jobs: int = 2,
    reference_cases: int | None = REFERENCE_CASES,
    rounds: int = 3,
) -> list[Tally]:
    """`n` soaks of `samples` samples each (the bench runs one of 100,000), against a no-op
    reference of `reference_cases` x 5, each timed as the median of `rounds` no-op checks.

    `reference_cases=None` times the no-op check without judging it: the test suite's soak runs
    beside other tests, whose load would make a timing a coin toss (speed is the bench's)."""
    tally = Tally("soak")
    cases = max(1, samples // REPEATS)
    for trial in range(n):
        tally.trials += 1
        base = workdir / f"soak-{trial}"
        root = base / "store"
        log = base / "calls.log"
        suite = _suite(base / "suite", "soak", cases, log)
        proc, readings, wall = _sampled_check(root, suite, log, jobs)
        if has_traceback(proc.stdout + proc.stderr):
            tally.tracebacks += 1
        if proc.returncode != 0:
            tally.fail(f"the sampling check exited {proc.returncode}: {proc.stderr[-500:]}")
            continue
        files = sum(1 for _ in (root / "samples").rglob("r*.json"))
        calls = _calls(log)
        tally.lost += max(0, cases * REPEATS - files)
        tally.twice += max(0, calls - cases * REPEATS)
        # flat: what taking the last three quarters of the samples added (the scoring after
        # them holds one task per case and scorer, bounded by the suite, not by the samples)
        total = cases * REPEATS
        sampling = [rss for done, rss in readings if done >= total // 4 and done < total]
        quarter = sampling[0] if sampling else 0.0
        grown = max(sampling, default=quarter) - quarter
        peak = max((rss for _, rss in readings), default=0.0)
        if grown > GROWTH_LIMIT_MB:
            tally.fail(
                f"memory grew {grown:.0f} MB while taking the last three quarters of samples"
            )
        noop = _noop(root, suite, rounds)
        timed = f"{noop:.2f} s (not judged)"
        if reference_cases is not None:
            ref_log = base / "ref-calls.log"
            ref_suite = _suite(base / "ref", "reference", reference_cases, ref_log)
            ref_root = base / "ref-store"
            cli_run("check", ref_suite, "--adopt", "--jobs", str(jobs), root=ref_root)
            reference = _noop(ref_root, ref_suite, rounds)
            # linear in the samples above the reference's size; a smaller store has the same
            # fixed cost (start-up, imports) to pay, so the reference itself bounds it
            scaled = reference * max(1.0, cases / reference_cases)
            if noop > scaled:
                tally.fail(
                    f"no-op check {noop:.2f} s over {scaled:.2f} s "
                    f"({reference_cases} x {REPEATS} scaled)"
                )
            timed = (
                f"{noop:.2f} s (the {reference_cases:,} x {REPEATS} reference {reference:.2f} s"
                f" scaled linearly: {scaled:.2f} s)"
            )
        before = _ledger_rows(root)
        rebuild = cli_run("ledger", "rebuild", root=root)
        if has_traceback(rebuild.stdout + rebuild.stderr):
            tally.tracebacks += 1
        after = _ledger_rows(root)
        if rebuild.returncode != 0 or before != after or len(after[0]) != cases * REPEATS:
            tally.fail(
                f"ledger rebuild disagrees: {len(before[0])} samples / {before[1]} run rows before,"
                f" {len(after[0])} / {after[1]} after (exit {rebuild.returncode})"
            )
        tally.figures.update(
            {
                "samples": f"{cases * REPEATS:,} ({cases:,} cases x {REPEATS}, --jobs {jobs})",
                "sampling check": f"{wall:.0f} s, {wall / (cases * REPEATS) * 1000:.2f} ms per sample",
                "memory": (
                    f"{quarter:.0f} MB at a quarter of the samples, {quarter + grown:.0f} MB at"
                    f" most until the last; peak {peak:.0f} MB while scoring"
                ),
                "no-op check": timed,
                "ledger rebuild": f"{len(after[0]):,} samples, {after[1]:,} run rows, agrees: {before == after}",
            }
        )
    return [tally]
