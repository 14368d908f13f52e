"""Throughput of a whole `noisefloor run` against the loopback chat-completions stand-in.

1,000 requests (200 cases x 5 repeats) answered after 0.1 s each, at `--jobs 50`: ideally 2.0 s.
The reference, measured in the same run: the same 1,000 requests from a bare client on the same
HTTP stack (httpcore's pools over the harness's asyncio backend) in a fresh process, which
neither records, scores nor indexes anything: what the endpoint and the stack cost on their own.
Added to it, the floor: what reading a suite file imports before the first request (pyyaml and
pydantic, see `bench/_common.py`).
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
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# the stand-in server lives with the tests; import it from the repository, not a copy
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _common import import_floor  # noqa: E402

from tests.llm_server import LlmServer  # noqa: E402

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


def one_round(base_url: str, work: Path) -> tuple[float, list[str]]:
    """Run the CLI once in a subprocess on a fresh store; return its wall time and any problems.

    Args:
        base_url: The stand-in server's base URL.
        work: An empty directory for the suite and the store.

    Returns:
        Seconds the whole process took, and what went wrong (empty when the run was clean).
    """
    work.mkdir()
    suite = write_suite(work, base_url)
    argv = [sys.executable, "-m", "noisefloor", "--root", str(work / "store"), "run"]
    argv += [str(suite), "--jobs", str(JOBS), "--format", "json"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOISEFLOOR_")}
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    problems: list[str] = []
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return elapsed, problems
    try:
        summary = json.loads(proc.stdout)
    except ValueError:
        return elapsed, [f"stdout is not the JSON summary: {proc.stdout[:500]!r}"]
    outcomes: dict[str, int] = {}
    for case in summary.get("cases", []):
        for outcome, count in case["outcomes"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + count
    if outcomes != {"ok": CASES * REPEATS}:
        problems.append(f"outcomes {outcomes}, expected ok x{CASES * REPEATS}")
    if summary.get("calls") != CASES * REPEATS:
        problems.append(f"{summary.get('calls')} calls made, expected {CASES * REPEATS}")
    return elapsed, problems


async def _bare_requests(url: str) -> None:
    """The reference client: the requests alone, `JOBS` at a time, responses parsed."""
    import httpcore
    import orjson

    from noisefloor.targets.http_backend import AsyncioBackend

    backend = AsyncioBackend()
    pools: asyncio.Queue[httpcore.AsyncConnectionPool] = asyncio.Queue()
    for _ in range(JOBS):
        pools.put_nowait(httpcore.AsyncConnectionPool(max_connections=1, network_backend=backend))

    async def one(i: int) -> None:
        pool = await pools.get()
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

    await asyncio.gather(*(one(i) for i in range(CASES * REPEATS)))


def bare_round(base_url: str) -> float:
    """Run the reference client in a fresh process (start-up included); return its wall time."""
    argv = [sys.executable, __file__, "--bare-client", base_url + "/chat/completions"]
    started = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - started


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
    # every round's store is kept until the end: deleting thousands of files just before a
    # round slowed the round's own file creation (the file system discards the freed blocks)
    with LlmServer(delay_s=DELAY_S) as server, tempfile.TemporaryDirectory() as tmp:
        for number in range(1, args.rounds + 1):
            bare.append(bare_round(server.base_url))
            # the bare client's process has started an interpreter already: count the imports
            floor.append(import_floor() - import_floor("pass"))
            elapsed, problems = one_round(server.base_url, Path(tmp) / f"round{number}")
            times.append(elapsed)
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
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
