"""Harness overhead: `noisefloor run` of 50 cases x 5 repeats of a trivial command, against the
same 250 process launches through a bare `subprocess.run` loop, measured in the same run.

Two trivial commands: `echo` (a launch costs ~2 ms, so the harness's fixed start-up dominates)
and a one-line Python program (a launch costs what a small script costs). Prints medians, the
ratio, and the harness's cost per sample beyond the launch itself.

Usage: python bench/overhead.py [--rounds 5] [--jobs 1]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, noisefloor, timed, write_suite  # noqa: E402

CASES, REPEATS = 50, 5


def bare_loop(argvs: list[list[str]]) -> None:
    """The reference: the same launches, captured, nothing else."""
    for argv in argvs:
        subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    echo = shutil.which("echo") or "/bin/echo"
    argvs = [[echo, f"input {i}"] for i in range(CASES) for _ in range(REPEATS)]
    harness, bare = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = write_suite(work, "overhead", [echo, "{{input}}"], CASES, REPEATS)
        for round_ in range(args.rounds):
            bare.append(timed(bare_loop, argvs))
            root = work / f"store{round_}"
            harness.append(noisefloor("--root", root, "run", suite, "--jobs", str(args.jobs)))
    h, b = median(harness), median(bare)
    print(
        f"{CASES} cases x {REPEATS} repeats of `echo`, --jobs {args.jobs}, {args.rounds} rounds (medians)"
    )
    print(f"  bare subprocess.run loop: {b:.3f} s  ({1000 * b / len(argvs):.2f} ms per launch)")
    print(f"  noisefloor run (whole process, start-up and scoring included): {h:.3f} s")
    print(f"  ratio: {h / b:.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
