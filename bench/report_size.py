"""The size of what a person reads: lines and widest line of the default output of `check`,
`plan`, `runs` and `explain`, on the quickstart and on a randomized target whose pass rate moves
from 0.7 to 0.4, as a new user meets them.

Usage: python bench/report_size.py [--columns 80] [--pythonpath DIR] [--depth 100]. Each
command runs in its own interpreter, as a user runs it, with COLUMNS set and stdout piped;
`--pythonpath` runs another copy of the package (an older commit's, say) for a before/after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A target that passes its `mid` case at RATE, decided by a hash of the repeat, so that every
#: run of this bench takes the same answers (the `steady` case always passes).
RANDOMIZED = '''\
"""A randomized answerer: `mid` is right at RATE; which repeats are right follows the repeat."""
import hashlib
import json
import sys

RATE = 0.7
question, repeat = sys.argv[1], sys.argv[2]
draw = int(hashlib.sha256(f"draw-{repeat}".encode()).hexdigest()[:8], 16) / 16**8
right = question != "mid" or draw < RATE
print(json.dumps({"answer": question, "confidence": "high" if right else "medium"}))
'''

RANDOMIZED_SUITE = """\
name: moved
target:
  command: [python3, target.py, "{{input}}", "{{repeat}}"]
  output: json
defaults:
  repeats: 5
cases:
  - id: steady
    input: steady
    scorers: [json_valid, {type: json_path_equals, path: confidence, value: high}]
  - id: mid
    input: mid
    scorers: [json_valid, {type: json_path_equals, path: confidence, value: high}]
"""


def _run(python: str, env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """`noisefloor ARGS` in its own interpreter: the exit code and stdout."""
    done = subprocess.run(
        [python, "-m", "noisefloor", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout


def _measured(name: str, result: tuple[int, str]) -> str:
    code, out = result
    lines = out.splitlines()
    widest = max((len(line) for line in lines), default=0)
    return f"  {name:<34} {len(lines):>5} {widest:>7}  (exit {code})"


def _deep(text: str, depth: int) -> str:
    """A suite's text with its baseline `depth` repeats deep, for every check of it."""
    return text.replace("  repeats: 5\n", f"  repeats: 5\n  baseline_repeats: {depth}\n")


def scenarios(python: str, env: dict[str, str], work: Path, depth: int) -> list[str]:
    """Every output measured, as table rows; the baselines adopted at `depth` repeats per case."""
    quick, moved = work / "quickstart", work / "moved"
    shutil.copytree(ROOT / "examples" / "quickstart", quick)
    moved.mkdir()
    (moved / "target.py").write_text(RANDOMIZED)
    for where, text in ((quick, (quick / "suite.yaml").read_text()), (moved, RANDOMIZED_SUITE)):
        (where / "suite.yaml").write_text(_deep(text, depth))

    def mars() -> None:
        suite = quick / "suite.yaml"
        suite.write_text(suite.read_text().replace("capital of France?", "capital of Mars?"))

    def lower() -> None:
        (moved / "target.py").write_text(RANDOMIZED.replace("RATE = 0.7", "RATE = 0.4"))

    steps = [
        ("quickstart: check (adopts)", quick, None, ("check", "suite.yaml", "--jobs", "4")),
        ("quickstart: check (unchanged)", quick, None, ("check", "suite.yaml")),
        ("quickstart: check (Mars)", quick, mars, ("check", "suite.yaml")),
        ("quickstart: explain", quick, None, ("explain", "capital-of-france")),
        ("quickstart: plan", quick, None, ("plan", "suite.yaml")),
        ("quickstart: runs", quick, None, ("runs",)),
        ("0.7 -> 0.4: check (adopts)", moved, None, ("check", "suite.yaml", "--jobs", "4")),
        ("0.7 -> 0.4: check", moved, lower, ("check", "suite.yaml", "--jobs", "4")),
        ("0.7 -> 0.4: explain", moved, None, ("explain", "mid")),
        ("0.7 -> 0.4: plan", moved, None, ("plan", "suite.yaml")),
    ]
    rows = []
    for name, where, before, args in steps:
        if before is not None:
            before()
        rows.append(_measured(name, _run(python, env, where, *args)))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--columns", type=int, default=80)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pythonpath", type=Path, help="import noisefloor from this directory")
    parser.add_argument("--depth", type=int, default=100, help="baseline repeats per case")
    args = parser.parse_args(argv)
    drop = ("NOISEFLOOR_", "CI", "GITHUB_", "NO_COLOR", "FORCE_COLOR")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["COLUMNS"] = str(args.columns)
    if args.pythonpath is not None:
        env["PYTHONPATH"] = str(args.pythonpath.resolve())
    with tempfile.TemporaryDirectory(prefix="noisefloor-size-") as tmp:
        env["NOISEFLOOR_ROOT"] = str(Path(tmp) / "store")
        rows = scenarios(args.python, env, Path(tmp), args.depth)
    print(f"default outputs at COLUMNS={args.columns}, stdout piped")
    print(f"  {'output':<34} {'lines':>5} {'widest':>7}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
