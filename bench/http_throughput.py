"""Throughput of a whole `noisefloor run` against the loopback chat-completions stand-in.

1,000 requests (200 cases x 5 repeats) answered after 0.1 s each, at `--jobs 50`: ideally 2.0 s.
The reference, measured in the same run: the same 1,000 requests from a bare client on the same
HTTP stack (httpcore's pools over the harness's asyncio backend) in a fresh process, which
neither records, scores nor indexes anything: what the endpoint and the stack cost on their own.
Added to it, the floor: what reading a suite file imports before the first request (pyyaml and
pydantic, see `bench/_common.py`).

Each process's time is split where its first request started and its last answer came back (the
run's from its sample files): start-up, the requests, and what follows them (for the run:
recording, scoring and indexing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# the stand-in server is in the `bench` package, which the tests share
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _common import import_floor  # noqa: E402

from bench.servers.llm import LlmServer  # noqa: E402

__all__ = ["main"]

CASES = 200
REPEATS = 5
DELAY_S = 0.1
JOBS = 50


def write_suite(directory: Path, base_url: str) -> Path:
    """Write the benchmark suite: distinct inputs, a cheap scorer, no retries expected.

    Args:
        directory: Where the suite file goes.
        base_url: The stand-in server's base URL.

    Returns:
        The suite file's path.
    """
    suite = {
        "name": "http-throughput",
        "target": {"http": {"base_url": base_url, "model": "bench-model", "temperature": 0.0}},
        "defaults": {
            "repeats": REPEATS,
            "scorers": [{"type": "must_include", "all": ["answer"]}],
        },
        "cases": [{"id": f"case-{i:03d}", "input": f"question {i}: word{i}"} for i in range(CASES)],
    }
    path = directory / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


#: A process's seconds before its first request, making requests, and after its last answer.
Phases = tuple[float, float, float]


def _phases(launched: float, first: float, last: float, ended: float) -> Phases:
    """The phases of a process from its clock times (seconds since the epoch)."""
    return first - launched, last - first, ended - last


def _requests_span(store: Path) -> tuple[float, float]:
    """When the run's first request started and its last answer came back, from its samples."""
    starts, ends = [], []
    for path in store.glob("samples/**/r*.json"):
        sample = json.loads(path.read_text(encoding="utf-8"))
        started = datetime.fromisoformat(sample["started_at"].replace("Z", "+00:00")).timestamp()
        starts.append(started)
        ends.append(started + sample["wall_s"])
    return min(starts), max(ends)


def one_round(base_url: str, work: Path) -> tuple[float, Phases, list[str]]:
    """Run the CLI once in a subprocess on a fresh store; return its wall time and any problems.

    Args:
        base_url: The stand-in server's base URL.
        work: An empty directory for the suite and the store.

    Returns:
        Seconds the whole process took, its phases, and what went wrong (empty when the run was
        clean).
    """
    work.mkdir()
    suite = write_suite(work, base_url)
    argv = [sys.executable, "-m", "noisefloor", "--root", str(work / "store"), "run"]
    argv += [str(suite), "--jobs", str(JOBS), "--format", "json"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOISEFLOOR_")}
    launched, started = time.time(), time.perf_counter()
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    elapsed, ended = time.perf_counter() - started, time.time()
    problems: list[str] = []
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return elapsed, (0.0, 0.0, 0.0), problems
    try:
        summary = json.loads(proc.stdout)
    except ValueError:
        return elapsed, (0.0, 0.0, 0.0), [f"stdout is not the JSON summary: {proc.stdout[:500]!r}"]
    outcomes: dict[str, int] = {}
    for case in summary.get("cases", []):
        for outcome, count in case["outcomes"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + count
    if outcomes != {"ok": CASES * REPEATS}:
        problems.append(f"outcomes {outcomes}, expected ok x{CASES * REPEATS}")
    if summary.get("calls") != CASES * REPEATS:
        problems.append(f"{summary.get('calls')} calls made, expected {CASES * REPEATS}")
    return elapsed, _phases(launched, *_requests_span(work / "store"), ended), problems


async def _bare_requests(url: str) -> None:
    """The reference client: the requests alone, `JOBS` at a time, responses parsed; prints when
    its first request started and its last answer came back."""
    import httpcore
    import orjson

    from noisefloor.targets.http_backend import AsyncioBackend

    backend = AsyncioBackend()
    pools: asyncio.Queue[httpcore.AsyncConnectionPool] = asyncio.Queue()
    for _ in range(JOBS):
        pools.put_nowait(httpcore.AsyncConnectionPool(max_connections=1, network_backend=backend))

    span: list[float] = []

    async def one(i: int) -> None:
        pool = await pools.get()
        span.append(time.time())
        try:
            body = {"model": "bench-model", "messages": [{"role": "user", "content": f"q {i}"}]}
            response = await pool.request(
                "POST",
                url,
                headers=[(b"Content-Type", b"application/json")],
                content=orjson.dumps(body),
            )
            orjson.loads(response.content)["choices"][0]["message"]["content"]
        finally:
            pools.put_nowait(pool)
            span.append(time.time())

    await asyncio.gather(*(one(i) for i in range(CASES * REPEATS)))
    print(json.dumps([min(span), max(span)]))


def bare_round(base_url: str) -> tuple[float, Phases]:
    """Run the reference client in a fresh process (start-up included); return its wall time
    and its phases."""
    argv = [sys.executable, __file__, "--bare-client", base_url + "/chat/completions"]
    launched, started = time.time(), time.perf_counter()
    proc = subprocess.run(argv, check=True, capture_output=True, text=True)
    elapsed, ended = time.perf_counter() - started, time.time()
    first, last = json.loads(proc.stdout)
    return elapsed, _phases(launched, first, last, ended)


def _shown(phases: list[Phases]) -> str:
    """The median of each phase, in words."""
    up, requests, after = (statistics.median(p[i] for p in phases) for i in range(3))
    return f"start-up {up:.2f} s, requests {requests:.2f} s, after the last answer {after:.2f} s"


def main(argv: list[str] | None = None) -> int:
    """Time `--rounds` runs and print the median against the ideal.

    Args:
        argv: Command-line arguments (default: `sys.argv[1:]`).

    Returns:
        0 when every round ran cleanly, else 1.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds, median reported (3)")
    parser.add_argument("--bare-client", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_client:
        asyncio.run(_bare_requests(args.bare_client))
        return 0
    ideal = CASES * REPEATS * DELAY_S / JOBS
    times: list[float] = []
    bare: list[float] = []
    floor: list[float] = []
    phases: list[Phases] = []
    bare_phases: list[Phases] = []
    # every round's store is kept until the end: deleting thousands of files just before a
    # round slowed the round's own file creation (the file system discards the freed blocks)
    with LlmServer(delay_s=DELAY_S) as server, tempfile.TemporaryDirectory() as tmp:
        for number in range(1, args.rounds + 1):
            reference, split = bare_round(server.base_url)
            bare.append(reference)
            bare_phases.append(split)
            # the bare client's process has started an interpreter already: count the imports
            floor.append(import_floor() - import_floor("pass"))
            elapsed, split, problems = one_round(server.base_url, Path(tmp) / f"round{number}")
            times.append(elapsed)
            phases.append(split)
            print(f"round {number}: noisefloor run {elapsed:.2f} s, bare client {bare[-1]:.2f} s")
            if problems:
                for problem in problems:
                    print(f"  FAILED: {problem}", file=sys.stderr)
                return 1
    median, reference = statistics.median(times), statistics.median(bare)
    imports = statistics.median(floor)
    print(
        f"{CASES * REPEATS} requests, {DELAY_S:g} s each, --jobs {JOBS} (medians of {args.rounds}):"
        f"\n  noisefloor run: {median:.2f} s, ratio to the ideal {ideal:.2f} s: {median / ideal:.2f}"
        f" (target <= 1.5)\n  bare client on the same stack: {reference:.2f} s"
        f" ({reference / ideal:.2f} of the ideal); the harness's share: {median / reference:.2f}x"
        f" (target <= 1.15x; the imports alone make {(reference + imports) / reference:.2f}x)"
        f"\n  floor: the bare client plus importing pyyaml and pydantic ({imports:.2f} s):"
        f" {(reference + imports) / ideal:.2f} of the ideal, leaving"
        f" {max(1.5 * ideal - reference - imports, 0.0):.2f} s within the target for recording,"
        " scoring and indexing"
        f"\n  where the time goes: noisefloor run {_shown(phases)};"
        f"\n                       bare client {_shown(bare_phases)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
