"""Helpers shared by the benchmarks: timing subprocesses, medians, and writing generated suites.

Benchmarks print ratios against a reference measured in the same run: absolute times lie here.
Importing this module byte-compiles the package, as installing a wheel does (see `byte_compile`).
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

__all__ = [
    "byte_compile",
    "calls",
    "import_floor",
    "loop_process",
    "median",
    "noisefloor",
    "timed",
    "write_suite",
]


def byte_compile() -> None:
    """Byte-compile the package where it is imported from, as installing a wheel does.

    An environment that sets PYTHONDONTWRITEBYTECODE (CI images often do) caches nothing, so
    every process a benchmark starts would compile the package's modules from source again
    (about 70 ms per start here), a cost no installed copy pays.
    """
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "noisefloor", quiet=1)


byte_compile()


def timed(fn: object, *args: object) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - start


#: What a harness must import before its first target call: reading the suite file takes pyyaml,
#: and validating it pydantic, whose first model costs the most.
SUITE_IMPORTS = """
import orjson, yaml
from pydantic import BaseModel
class Floor(BaseModel):
    x: int
"""


def import_floor(code: str = SUITE_IMPORTS, *args: str) -> float:
    """Wall seconds of a fresh process that runs `code` (by default: imports `SUITE_IMPORTS`)
    with `args` as its arguments."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True)
    return time.perf_counter() - start


def calls(command: list[str], cases: int, repeats: int) -> list[list[str]]:
    """The argv of every call a generated suite makes (`write_suite`'s inputs), `repeats` each."""
    return [
        [part.replace("{{input}}", f"input {i}") for part in command]
        for i in range(cases)
        for _ in range(repeats)
    ]


#: A bare loop making the calls read from stdin (one argv a line, its parts split by NUL), run
#: after `{preamble}`; prints the loop's own seconds.
_LOOP = """
import subprocess, sys, time
{preamble}
argvs = [line.split("\\0") for line in sys.stdin.read().splitlines()]
start = time.perf_counter()
for argv in argvs:
    subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, check=False)
print(time.perf_counter() - start)
"""


def loop_process(argvs: list[list[str]], preamble: str = "") -> tuple[float, float]:
    """A fresh process making the calls in a bare loop after running `preamble` (imports, say):
    the whole process's wall seconds, and the loop's own."""
    lines = "\n".join("\0".join(argv) for argv in argvs)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _LOOP.format(preamble=preamble)],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start, float(proc.stdout)


def median(values: list[float]) -> float:
    """The median, the figure quoted."""
    return statistics.median(values)


def noisefloor(*args: str | Path, check: bool = True) -> float:
    """Run the real CLI in a fresh process; return its wall time (start-up included)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "noisefloor", *map(str, args)], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise SystemExit(
            f"noisefloor {' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    return elapsed


def write_suite(
    directory: Path,
    name: str,
    command: list[str],
    cases: int,
    repeats: int,
    scorers: list[object] | None = None,
    jsonl: bool = False,
) -> Path:
    """A generated suite of `cases` cases; with `jsonl`, the cases go to a cases file."""
    rows = [
        {
            "id": f"case-{i:05d}",
            "input": f"input {i}",
            "scorers": scorers or [{"type": "contains", "needle": "input"}],
        }
        for i in range(cases)
    ]
    suite: dict[str, object] = {
        "name": name,
        "target": {"command": command, "timeout_s": 30},
        "defaults": {"repeats": repeats},
    }
    if jsonl:
        import orjson

        (directory / "cases.jsonl").write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
        suite["cases_file"] = "cases.jsonl"
    else:
        suite["cases"] = rows
    path = directory / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def cached_suite_args(doc: str | None) -> argparse.Namespace:
    """The arguments of the benches over a cached suite of `echo`: its size and the rounds."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args()
