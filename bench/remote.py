"""A check against a remote baseline: 50 cases of `echo` against a 100-deep baseline, with the
local store as the reference, measured in the same run, with the requests each check made.

Steps: the baseline adopted in a local store and pushed (`store push`); a check of that version
from the local store (the reference); the same check on a fresh runner from the remote (the
pointer, the run record, a pack per case); the same runner again (the pointer only); then a
changed version checked by one fresh runner (which takes its samples and pushes each, a few at
once; and, for comparison, another version's first runner pushing one at a time) and by a second
fresh runner (which fetches them by their keys: 0 target calls). Every step runs the
operation in this process, so the ratios compare the store's work, not start-up.

Usage: python bench/remote.py [--cases 50] [--depth 100] [--rounds 3] [--remote s3|file].
Targets: the fresh runner's check under a few hundred requests; the second check on a runner
no request beyond reading the pointer.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import median, write_suite  # noqa: E402
from bench.servers.object_store import S3Server  # noqa: E402
from noisefloor.operations.check import check_suite  # noqa: E402
from noisefloor.operations.run import RunOptions  # noqa: E402
from noisefloor.operations.sync import push_store  # noqa: E402
from noisefloor.settings import REMOTE_CONNECTIONS  # noqa: E402
from noisefloor.settings.resolved import resolve  # noqa: E402
from noisefloor.store.branches import Branches  # noqa: E402
from noisefloor.store.mirrored import MirroredStore  # noqa: E402
from noisefloor.store.remote_url import open_remote  # noqa: E402
from noisefloor.store.store import Store  # noqa: E402
from noisefloor.suite.load import load_suite  # noqa: E402

MAIN = Branches(("main",), "main")


def check(store: Store, suite_file: Path, *, changed: bool = False) -> tuple[float, int]:
    """One check of the suite in `store`: its wall seconds and its target calls."""
    suite = load_suite(suite_file)
    resolved = resolve({}, {}, suite.defaults)
    start = time.perf_counter()
    report = check_suite(
        store,
        suite,
        RunOptions(jobs=8),
        resolved.rule,
        design=resolved.design,
        allow_target_change=changed,
    )
    return time.perf_counter() - start, report.calls or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--remote", choices=("s3", "file"), default="s3")
    args = parser.parse_args()
    echo = shutil.which("echo") or "/bin/echo"
    rows: dict[str, list[tuple[float, int, Counter[str]]]] = {}

    def note(step: str, seconds: float, calls: int, requests: Counter[str]) -> None:
        rows.setdefault(step, []).append((seconds, calls, requests))

    with tempfile.TemporaryDirectory() as tmp, S3Server() as server:
        work = Path(tmp)
        if args.remote == "s3":
            os.environ.update(server.env())
        suite = write_suite(work, "remote", [echo, "{{input}}"], args.cases, 5)
        text = suite.read_text().replace(
            "repeats: 5", f"repeats: 5\n  baseline_repeats: {args.depth}"
        )
        suite.write_text(text)
        changed = work / "changed.yaml"
        changed.write_text(text.replace(f"- {echo}\n", f"- {echo}\n    - v2\n"))
        serial = work / "serial.yaml"  # another version, whose first runner pushes one by one
        serial.write_text(text.replace(f"- {echo}\n", f"- {echo}\n    - v3\n"))
        local = Store(work / "local")
        adopt_s, adopt_calls = check(local, suite)
        print(
            f"{args.cases} cases, a baseline {args.depth} deep ({adopt_calls} calls to adopt "
            f"locally, {adopt_s:.1f} s), remote: {args.remote} on loopback"
        )
        for round_ in range(args.rounds):
            if args.remote == "s3":
                url = f"s3://{server.bucket(f'nf-bench-{round_}')}/team"
            else:
                (work / f"shared{round_}").mkdir()
                url = f"file://{work / f'shared{round_}'}"

            pusher = MirroredStore(local.root, open_remote(url), MAIN)
            start = time.perf_counter()
            push_store(pusher)
            note(
                "store push of the local store",
                time.perf_counter() - start,
                0,
                pusher.remote.requests,
            )
            seconds, calls = check(local, suite)
            note("check, local store (reference)", seconds, calls, Counter())
            for step, root in (
                ("check, fresh runner, remote", "fresh"),
                ("check, same runner again", "fresh"),
            ):
                store = MirroredStore(work / f"{root}{round_}", open_remote(url), MAIN)
                seconds, calls = check(store, suite)
                note(step, seconds, calls, store.remote.requests)
            for step, root, version, pushes in (
                ("changed version, first runner, one push at a time", "serial", serial, 1),
                ("changed version, first runner", "one", changed, REMOTE_CONNECTIONS),
                ("changed version, second runner", "two", changed, REMOTE_CONNECTIONS),
            ):
                store = MirroredStore(
                    work / f"{root}{round_}", open_remote(url), MAIN, pushes=pushes
                )
                seconds, calls = check(store, version, changed=True)
                note(step, seconds, calls, store.remote.requests)
    reference = median([s for s, _, _ in rows["check, local store (reference)"]])
    print(f"medians of {args.rounds} rounds")
    print("| step | seconds | x local check | GETs | PUTs | target calls |")
    print("|---|---|---|---|---|---|")
    for step, seen in rows.items():
        seconds = median([s for s, _, _ in seen])
        gets = median([float(r["get"]) for _, _, r in seen])
        puts = median([float(r["put"]) for _, _, r in seen])
        calls = median([float(c) for _, c, _ in seen])
        print(
            f"| {step} | {seconds:.2f} | {seconds / reference:.1f} | {gets:.0f} | {puts:.0f} | {calls:.0f} |"
        )


if __name__ == "__main__":
    main()
