"""The doit pipeline view (a user's dodo.py yielding `noisefloor.pipeline.tasks.suite_tasks`) on a
generated suite of 2,000 cases x 5 repeats, every sample cached: one sample task per case-repeat.

Prints the task count, `doit list --all`, the first `doit` (builds scores and bands) and the
no-op `doit` (every task up to date), each a fresh process, against `noisefloor check`'s no-op
on the same store, which builds no sample tasks at all.

Usage: python bench/pipeline.py [--cases 2000] [--repeats 5] [--rounds 3]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import cached_suite_args, median, noisefloor, write_suite  # noqa: E402

DODO = """
from noisefloor.pipeline.tasks import suite_tasks

DOIT_CONFIG = {"backend": "sqlite3", "dep_file": "dodo.sqlite", "verbosity": 0}


def task_pipeline():
    for task in suite_tasks("suite.yaml", "store"):
        yield {**task, "task_dep": [f"pipeline:{n}" for n in task.get("task_dep", [])]}
"""


def doit(work: Path, *args: str) -> tuple[float, str]:
    """Run doit in `work` in a fresh process; return its wall time and stdout."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "doit", *args], cwd=work, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"doit {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def main() -> None:
    args = cached_suite_args(__doc__)
    echo = shutil.which("echo") or "/bin/echo"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = write_suite(work, "pipe", [echo, "{{input}}"], args.cases, args.repeats)
        (work / "dodo.py").write_text(DODO, encoding="utf-8")
        root = work / "store"
        noisefloor("--root", root, "check", suite, "--jobs", "2")  # takes every sample
        listing, out = doit(work, "list", "--all")
        kinds = [line.split(":", 2)[1] for line in out.splitlines() if line.startswith("pipeline:")]
        first, _ = doit(work)
        noop = [doit(work)[0] for _ in range(args.rounds)]
        check = [noisefloor("--root", root, "check", suite) for _ in range(args.rounds)]
    print(f"{args.cases} cases x {args.repeats} repeats, every sample cached")
    print("  tasks: " + ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))))
    print(f"  doit list --all: {listing:.2f} s")
    print(f"  first doit (builds scores and bands): {first:.2f} s")
    print(f"  no-op doit, median of {args.rounds}: {median(noop):.2f} s")
    print(f"  no-op noisefloor check (no sample tasks), median: {median(check):.2f} s")


if __name__ == "__main__":
    main()
