"""The size of what a person reads: lines and widest line of the default output of `check`,
`plan`, `runs` and `explain`, on the quickstart and on a randomized target whose pass rate moves
from 0.7 to 0.4, as a new user meets them.

Usage: python bench/report_size.py [--columns 80] [--python PYTHON] [--pythonpath DIR]. Each
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


def _measure(name: str, out: str, code: int) -> str:
    lines = out.splitlines()
    widest = max((len(line) for line in lines), default=0)
    return f"  {name:<34} {len(lines):>5} {widest:>7}  (exit {code})"


def scenarios(python: str, env: dict[str, str], work: Path) -> list[str]:
    """Every output measured, as table rows."""
    rows = []
    quick = work / "quickstart"
    shutil.copytree(ROOT / "examples" / "quickstart", quick)
    rows.append(
        _measure(
            "quickstart: check (adopts)",
            *_swap(_run(python, env, quick, "check", "suite.yaml", "--jobs", "4")),
        )
    )
    rows.append(
        _measure(
            "quickstart: check (unchanged)", *_swap(_run(python, env, quick, "check", "suite.yaml"))
        )
    )
    suite = quick / "suite.yaml"
    suite.write_text(suite.read_text().replace("capital of France?", "capital of Mars?"))
    rows.append(
        _measure(
            "quickstart: check (Mars)", *_swap(_run(python, env, quick, "check", "suite.yaml"))
        )
    )
    rows.append(
        _measure(
            "quickstart: explain", *_swap(_run(python, env, quick, "explain", "capital-of-france"))
        )
    )
    rows.append(
        _measure("quickstart: plan", *_swap(_run(python, env, quick, "plan", "suite.yaml")))
    )
    rows.append(_measure("quickstart: runs", *_swap(_run(python, env, quick, "runs"))))
    moved = work / "moved"
    moved.mkdir()
    (moved / "target.py").write_text(RANDOMIZED)
    (moved / "suite.yaml").write_text(RANDOMIZED_SUITE)
    rows.append(
        _measure(
            "0.7 -> 0.4: check (adopts)",
            *_swap(_run(python, env, moved, "check", "suite.yaml", "--jobs", "4")),
        )
    )
    target = moved / "target.py"
    target.write_text(RANDOMIZED.replace("RATE = 0.7", "RATE = 0.4"))
    rows.append(
        _measure(
            "0.7 -> 0.4: check",
            *_swap(_run(python, env, moved, "check", "suite.yaml", "--jobs", "4")),
        )
    )
    rows.append(_measure("0.7 -> 0.4: explain", *_swap(_run(python, env, moved, "explain", "mid"))))
    rows.append(
        _measure("0.7 -> 0.4: plan", *_swap(_run(python, env, moved, "plan", "suite.yaml")))
    )
    return rows


def _swap(result: tuple[int, str]) -> tuple[str, int]:
    return result[1], result[0]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--columns", type=int, default=80)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pythonpath", type=Path, help="import noisefloor from this directory")
    args = parser.parse_args(argv)
    drop = ("NOISEFLOOR_", "CI", "GITHUB_", "NO_COLOR", "FORCE_COLOR")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["COLUMNS"] = str(args.columns)
    if args.pythonpath is not None:
        env["PYTHONPATH"] = str(args.pythonpath.resolve())
    with tempfile.TemporaryDirectory(prefix="noisefloor-size-") as tmp:
        env["NOISEFLOOR_ROOT"] = str(Path(tmp) / "store")
        rows = scenarios(args.python, env, Path(tmp))
    print(f"default outputs at COLUMNS={args.columns}, stdout piped")
    print(f"  {'output':<34} {'lines':>5} {'widest':>7}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
