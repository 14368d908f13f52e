"""Harness overhead: `noisefloor run` of 50 cases x 5 repeats of a trivial command, against the
same 250 process launches through a bare `subprocess.run` loop, measured in the same run.

Two trivial commands: `echo` (a launch costs ~2 ms, so the harness's fixed start-up dominates)
and a one-line Python program (a launch costs what a small script costs). Prints medians: the
ratio to the bare loop, the fixed cost (the same run fully cached: start-up, reading the suite,
scoring, writing the run), the harness's cost per sample beyond the launch itself (the cold run
less the cached one and the bare loop, per sample), and a floor: a fresh process that only
imports what reading a suite file takes before the first launch (pyyaml, and pydantic with one
model defined), added to the bare loop. No harness that validates its suite with pydantic can
beat that floor; and the same launches from a process that imported what a run imports. Also
the cost of the file each sample is stored in: the same number of small files written the way the
store writes them (a temporary file, then a rename) into fresh directories of the store's depth,
by a bare loop; on some file systems that costs as much as a launch. It times `noisefloor run`
(one sample per repeat, no comparison).

Usage: python bench/overhead.py [--rounds 7] [--jobs 1]. Targets at --jobs 1: at most 2.0x the
bare loop, and under 1 ms per sample beyond the launch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import calls, import_floor, loop_process, median, noisefloor, timed, write_suite  # noqa: E402

CASES, REPEATS = 50, 5


def bare_loop(argvs: list[list[str]]) -> None:
    """The reference: the same launches, captured, nothing else."""
    for argv in argvs:
        subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, check=False)


#: What a run imports, for the bare loop run from a process of the harness's size (fork copies
#: its page tables).
HARNESS_IMPORTS = "import noisefloor.cli.commands, noisefloor.operations.run, noisefloor.suite.load"


def store_files(directory: Path, cases: int, repeats: int) -> None:
    """The reference for storing samples: one small file per sample, written atomically (a
    temporary file, then a rename) into a fresh directory per case, as deep as the store's, in
    the order a run writes them (repeat 0 of every case first)."""
    parent = directory / "samples" / "suite" / ("k" * 16) / "e0"
    dirs = [parent / f"case-{i}" / ("h" * 16) for i in range(cases)]
    payload = b"x" * 700  # about a sample of echo's size
    for repeat in range(repeats):
        for case_dir in dirs:
            case_dir.mkdir(parents=True, exist_ok=True)
            tmp, final = case_dir / f".r{repeat}.tmp", case_dir / f"r{repeat}.json"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, payload)
            os.close(fd)
            os.replace(tmp, final)


def measure(name: str, command: list[str], rounds: int, jobs: int) -> None:
    """Time the bare loop and the harness on one command, interleaved round by round."""
    argvs = calls(command, CASES, REPEATS)
    harness, bare, cached, floor, loaded, files = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = write_suite(work, "overhead", command, CASES, REPEATS)
        for round_ in range(rounds):
            root = work / f"store{round_}"
            bare.append(timed(bare_loop, argvs))
            floor.append(import_floor())
            loaded.append(loop_process(argvs, HARNESS_IMPORTS)[1])
            files.append(timed(store_files, work / f"files{round_}", CASES, REPEATS))
            harness.append(noisefloor("--root", root, "run", suite, "--jobs", str(jobs)))
            cached.append(noisefloor("--root", root, "run", suite))
    h, b, c, f = median(harness), median(bare), median(cached), median(floor)
    launched = median(loaded)
    print(f"{CASES} cases x {REPEATS} repeats of {name}, --jobs {jobs}, {rounds} rounds (medians)")
    print(f"  bare subprocess.run loop: {b:.3f} s  ({1000 * b / len(argvs):.2f} ms per launch)")
    print(f"  noisefloor run, whole process: {h:.3f} s")
    print(f"  fixed cost (the same run fully cached): {c:.3f} s")
    per_sample = 1000 * (h - c - b) / len(argvs)
    print(f"  per-sample cost beyond the launch: {per_sample:+.2f} ms  (target < 1 ms)")
    per_file = 1000 * median(files) / len(argvs)
    print(
        f"    of which storing it: a bare loop writing {len(argvs)} such files takes"
        f" {per_file:.2f} ms per file; the rest: {per_sample - per_file:+.2f} ms"
    )
    print(f"  ratio to the bare loop: {h / b:.2f}x  (target <= 2.0x)")
    print(f"  floor: a process importing pyyaml and pydantic alone takes {f:.3f} s,", end=" ")
    print(f"so no harness validating suites with them can do better than {(f + b) / b:.2f}x")
    print(
        f"    and one that also stores each sample in a file of its own, no better than"
        f" {(f + b + median(files)) / b:.2f}x"
    )
    print(
        f"  the same launches from a process that imported the harness: {launched:.3f} s"
        f" ({1000 * (launched - b) / len(argvs):+.2f} ms per launch against the bare loop);"
        f" with the fixed cost: {(c + launched) / b:.2f}x\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    echo = shutil.which("echo") or "/bin/echo"
    measure("`echo`", [echo, "{{input}}"], args.rounds, args.jobs)
    script = "import sys; print(sys.argv[1])"
    python = [sys.executable, "-S", "-c", script, "{{input}}"]
    measure("a one-line Python program", python, args.rounds, args.jobs)


if __name__ == "__main__":
    main()
