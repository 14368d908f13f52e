"""A no-op check: every sample cached, nothing changed, on a generated suite of 2,000 cases x
5 repeats. Prints the no-op time and its ratio to the cold run that took the samples.

A check that finds every derived file current decides from the whole comparison's key, without
starting the pipeline (`engine.run_comparison`), and indexes its run by copying the ledger rows of
the run before it, which rests on the same samples (`Ledger.index_run`). It times `noisefloor
check` with the suite's own design (sequential: every case is of the baseline's version, so none
takes a fresh repeat).

Usage: python bench/noop.py [--cases 2000] [--repeats 5] [--rounds 3]. Target: under 1.5 s.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import cached_suite_args, import_floor, median, noisefloor, write_suite  # noqa: E402

#: What any check does before it can decide: start, import a check's modules, read the suite.
CHECK_FLOOR = """
import sys
import noisefloor.cli.commands, noisefloor.operations.check
from noisefloor.suite.load import load_suite
load_suite(sys.argv[1])
"""


def main() -> None:
    args = cached_suite_args(__doc__)
    echo = shutil.which("echo") or "/bin/echo"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = write_suite(work, "noop", [echo, "{{input}}"], args.cases, args.repeats, jsonl=True)
        root = work / "store"
        cold = noisefloor("--root", root, "check", suite, "--jobs", "2")
        first = noisefloor("--root", root, "check", suite)  # builds the derived files once
        noop, floor = [], []
        for _ in range(args.rounds):
            noop.append(noisefloor("--root", root, "check", suite))
            floor.append(import_floor(CHECK_FLOOR, str(suite)))
    m = median(noop)
    print(f"{args.cases} cases x {args.repeats} repeats, every sample cached")
    print(
        f"  cold check (adopts; {args.cases * args.repeats} target calls, --jobs 2): {cold:.2f} s"
    )
    print(f"  first comparison (builds verdicts): {first:.2f} s")
    print(f"  no-op check, median of {args.rounds}: {m:.2f} s  (target < 1.5 s)")
    print(f"  ratio no-op / cold: {m / cold:.3f}")
    print(
        f"  floor: a process that imports a check's modules and reads the suite, nothing else:"
        f" {median(floor):.2f} s"
    )


if __name__ == "__main__":
    main()
