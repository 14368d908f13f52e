"""Runners of one commit adopting a baseline at once: the target calls they take together, and
how long the last one took, against one runner adopting alone, measured in the same run.

Each runner is the real command line in its own process (`check SUITE --adopt`, a fresh store
root each) against moto's S3 server on loopback; the suite is `--cases` cases of `echo`, its
baseline `--depth` deep. Runners needing the same samples at once claim them in the remote
(`noisefloor.store.claims`): one takes each sample, the others fetch it, and the losers of the
race to move the pointer compare with the winner's baseline.

Usage: python bench/fleet.py [--cases 20] [--depth 20] [--runners 4] [--rounds 3].
Target: the runners together take each sample once (calls = cases x depth), and none fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import median, write_suite  # noqa: E402
from bench.servers.object_store import S3Server  # noqa: E402


def adopt_at_once(suite: Path, roots: list[Path], env: dict[str, str]) -> tuple[float, int, int]:
    """`check --adopt` in every root at once: the seconds until the last ended, the calls all
    made, and the runners that failed (any exit but 0)."""
    argv = [sys.executable, "-m", "noisefloor"]
    start = time.perf_counter()
    started = [
        subprocess.Popen(
            [*argv, "--root", str(root), "check", str(suite), "--adopt", "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for root in roots
    ]
    calls = failed = 0
    for process in started:
        out, _ = process.communicate(timeout=600)
        failed += process.returncode != 0
        calls += json.loads(out)["calls"] if process.returncode == 0 else 0
    return time.perf_counter() - start, calls, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--runners", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    echo = shutil.which("echo") or "/bin/echo"
    rows: dict[str, list[tuple[float, int, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp, S3Server() as server:
        work = Path(tmp)
        suite = write_suite(work, "fleet", [echo, "{{input}}"], args.cases, 5)
        text = suite.read_text().replace(
            "repeats: 5", f"repeats: 5\n  baseline_repeats: {args.depth}"
        )
        suite.write_text(text)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOISEFLOOR_", "CI"))}
        env.update(server.env())
        for round_ in range(args.rounds):
            for label, runners in (
                ("one runner alone", 1),
                (f"{args.runners} at once", args.runners),
            ):
                bucket = server.bucket(f"nf-fleet-{round_}-{runners}")
                roots = [work / f"r{round_}-{runners}-{n}" for n in range(runners)]
                done = adopt_at_once(
                    suite, roots, {**env, "NOISEFLOOR_REMOTE": f"s3://{bucket}/team"}
                )
                rows.setdefault(label, []).append(done)
    print(
        f"{args.cases} cases of echo, a baseline {args.depth} deep "
        f"({args.cases * args.depth} samples), moto on loopback, medians of {args.rounds} rounds"
    )
    print("| runners adopting | seconds (the last to end) | target calls, all runners | failed |")
    print("|---|---|---|---|")
    for label, found in rows.items():
        seconds = median([f[0] for f in found])
        calls = median([float(f[1]) for f in found])
        failed = sum(f[2] for f in found)
        print(f"| {label} | {seconds:.2f} | {calls:.0f} | {failed} |")


if __name__ == "__main__":
    main()
