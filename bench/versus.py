"""Side by side with another harness: `noisefloor run` of a suite of CASES x REPEATS calls of a
trivial command, another harness's command over its own suite of the same calls, and a bare
`subprocess.run` loop making the same calls, each a whole process (start-up included), in
alternated rounds; prints the medians and each one's ratio to the bare loop.

The other harness is given as its command line, `{root}` standing for a fresh directory for its
store in each round, run in `--cwd`; its suite must make the same calls (`--target echo`:
`/bin/echo "input N"`; `--target python`: a one-line Python program printing its argument).
The public noisefloor, for one, was compared through its `run` command (`--other "noisefloor
--root {root} run suite.yaml"`) over a suite of its own format whose targets print the input as
a JSON string, as that tool requires.

Usage: python bench/versus.py --other "CMD ... {root} ..." [--cwd DIR] [--target echo|python]
[--cases 50] [--repeats 5] [--rounds 9]
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import calls, loop_process, median, noisefloor, write_suite  # noqa: E402


def target_command(target: str) -> list[str]:
    """The command each call runs, `{{input}}` standing for the case's input."""
    if target == "python":
        return [sys.executable, "-S", "-c", "import sys; print(sys.argv[1])", "{{input}}"]
    return [shutil.which("echo") or "/bin/echo", "{{input}}"]


def other(command: str, root: Path, cwd: Path) -> float:
    """Wall seconds of the other harness's command, its store at `root`; it must exit 0."""
    argv = [part.replace("{root}", str(root)) for part in shlex.split(command)]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--other", required=True, help="the other harness's command, with {root}")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="where it runs")
    parser.add_argument("--target", choices=("echo", "python"), default="echo")
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    command = target_command(args.target)
    argvs = calls(command, args.cases, args.repeats)
    times: dict[str, list[float]] = {"bare loop": [], "noisefloor run": [], "other": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = write_suite(work, "versus", command, args.cases, args.repeats)
        for round_ in range(args.rounds):
            times["bare loop"].append(loop_process(argvs)[0])
            times["noisefloor run"].append(
                noisefloor("--root", work / f"store{round_}", "run", suite, "--jobs", "1")
            )
            times["other"].append(other(args.other, work / f"other{round_}", args.cwd))
    reference = median(times["bare loop"])
    print(
        f"{args.cases} cases x {args.repeats} repeats of {args.target}, whole processes,"
        f" {args.rounds} alternated rounds (medians)"
    )
    for name, values in times.items():
        shown = "the other harness" if name == "other" else name
        value = median(values)
        print(f"  {shown}: {value:.3f} s, {value / reference:.2f}x the bare loop")
    ours, theirs = median(times["noisefloor run"]), median(times["other"])
    print(f"  noisefloor run against the other harness: {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
