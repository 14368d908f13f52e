"""Reliability in figures: every kind of fault CI creates, tried many times, in one table.

Concurrent checks on one store, SIGKILL at a random moment, every kind of store file broken,
disks that fill, hostile endpoints, a faulty remote object store, fuzzed inputs and a long soak. Each row counts the trials,
the failed ones, samples lost or taken twice, tracebacks and torn pointers: all but the trials
must be 0. The test suite runs the same trials in smaller numbers (`tests/e2e/test_faults_*`).

Usage: python bench/faults.py [--only KIND ...] [--scale 0.1] [--seed 0]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

# the trials are a package beside this script, which the tests run in smaller numbers too
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fault_trials import HEADER, Tally  # noqa: E402

#: Each kind of fault and its number of trials (the counts `issues` #13 asks for).
KINDS = {
    "concurrency": 20,
    "crashes": 100,
    "corruption": 228,
    "diskfull": 20,
    "hostile": 5,
    "remote": 5,
    "fuzz": 1000,
    "soak": 1,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(KINDS), help="run these kinds alone")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply every count (at least 1 trial)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--soak-samples", type=int, default=100_000, help="samples the soak takes (100,000)"
    )
    args = parser.parse_args()
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.only or KINDS:
            module = importlib.import_module(f"bench.fault_trials.{kind}")
            n = max(1, round(KINDS[kind] * args.scale))
            extra = {"samples": args.soak_samples} if kind == "soak" else {}
            start = time.perf_counter()
            rows = module.trials(n, Path(tmp) / kind, seed=args.seed, **extra)
            elapsed = time.perf_counter() - start
            print(f"{kind}: {n} trial(s) in {elapsed:.0f} s", file=sys.stderr)
            tallies.extend(rows)
    print(HEADER)
    for tally in tallies:
        print(tally.row())
    total = Tally("total", *(sum(getattr(t, f) for t in tallies) for f in _COUNTS))
    print(total.row().replace("| total |", "| **total** |"))
    for tally in tallies:
        for name, figure in tally.figures.items():
            print(f"\n{tally.name}, {name}: {figure}", end="")
        for note in tally.notes:
            print(f"\n{tally.name} failed: {note}", end="")
    print()
    sys.exit(0 if all(t.clean for t in tallies) else 1)


_COUNTS = ("trials", "failures", "lost", "twice", "tracebacks", "torn")


if __name__ == "__main__":
    main()
