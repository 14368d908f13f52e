"""Samples taken by a Dask cluster against the local executor: a target that sleeps 200 ms,
200 cases x 5 repeats, 4 single-threaded worker processes on loopback against `--jobs 1` here.
Prints the speed-up and the harness's share of each wall time.

Usage: python bench/cluster.py [--cases 200] [--repeats 5] [--workers 4] [--sleep 0.2].
Target: at least 3.5x faster with 4 workers. A sleeping target is the honest workload on a small
machine: the workers wait, as they would on an agent or an endpoint, instead of sharing cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import noisefloor, write_suite  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(workers: int, logs: Path) -> Iterator[str]:
    """A scheduler and `workers` single-threaded workers on loopback; yields the executor."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    module = "distributed.cli.dask_"
    commands = [[sys.executable, "-m", module + "scheduler", "--host", "127.0.0.1"]]
    commands[0] += ["--port", str(port), "--no-dashboard"]
    commands += [
        [sys.executable, "-m", module + "worker", address, "--nthreads", "1", "--no-nanny"]
        + ["--no-dashboard", "--host", "127.0.0.1"]
        for _ in range(workers)
    ]
    procs = []
    try:
        for n, command in enumerate(commands):
            with (logs / f"dask-{n}.log").open("wb") as log:
                procs.append(subprocess.Popen(command, stdout=log, stderr=log))
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=60)
        yield f"dask://127.0.0.1:{port}"
    finally:
        for proc in reversed(procs):
            proc.kill()
            proc.wait()


def target_seconds(root: Path) -> float:
    """The target's own time: the sum of every sample's wall time."""
    return sum(
        json.loads(path.read_text(encoding="utf-8"))["wall_s"]
        for path in (root / "samples").rglob("r*.json")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.2)
    args = parser.parse_args()
    calls = args.cases * args.repeats
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # a shell starts in a millisecond: the target's time is its sleep, not an interpreter
        # starting on cores the workers share
        sh = shutil.which("sh") or "/bin/sh"
        command = [sh, "-c", f'sleep {args.sleep}; echo "$0"', "{{input}}"]
        suite = write_suite(work, "cluster", command, args.cases, args.repeats, jsonl=True)
        local_root, dask_root = work / "local", work / "dask"
        local = noisefloor("--root", local_root, "run", suite, "--jobs", "1")
        local_target = target_seconds(local_root)
        with cluster(args.workers, work) as executor:
            start = time.perf_counter()
            noisefloor("--root", dask_root, "run", suite, "--executor", executor)
            remote = time.perf_counter() - start
        remote_target = target_seconds(dask_root) / args.workers
    print(
        f"{args.cases} cases x {args.repeats} repeats ({calls} calls), a target that sleeps "
        f"{args.sleep * 1000:.0f} ms"
    )
    print(
        f"  local, --jobs 1: {local:.1f} s; harness {100 * (1 - local_target / local):.1f}% "
        "of the wall time"
    )
    print(
        f"  dask, {args.workers} workers x 1 thread: {remote:.1f} s; harness "
        f"{100 * max(0.0, 1 - remote_target / remote):.1f}% of the wall time"
    )
    print(f"  speed-up: {local / remote:.2f}x  (target >= 3.5x with 4 workers)")


if __name__ == "__main__":
    main()
