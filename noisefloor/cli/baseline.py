"""The `baseline` command: set, show and deepen the baseline pointers, with their arguments and
their handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from noisefloor.cli.inputs import open_store, resolved_of, store_of, suites_store
from noisefloor.cli.options import (
    executor_option,
    global_options,
    jobs_option,
    lock_timeout_option,
    repeats_option,
)
from noisefloor.cli.remote_options import branch_option, remote_options
from noisefloor.cli.usage import Parser
from noisefloor.errors import NoisefloorError, UsageError

if TYPE_CHECKING:
    from noisefloor.store.mirrored import MirroredStore

# Each handler imports its operation when it runs: `--help` and the other commands load none of it.

__all__ = ["baseline_parser", "cmd_baseline"]


def baseline_parser(p: argparse.ArgumentParser) -> None:
    from noisefloor.settings import BASELINE_REPEATS

    bsub = p.add_subparsers(
        dest="baseline_command", metavar="ACTION", parser_class=Parser, required=True
    )
    q = bsub.add_parser("set", help="point the run's suite at this run")
    global_options(q, top=False)
    q.add_argument("run", help="run id or label")
    q.add_argument(
        "--suite",
        metavar="FILE",
        help="the run's suite file: its `defaults.remote` names the remote whose pointer moves "
        "(under --remote and NOISEFLOOR_REMOTE), and the run must be of that suite",
    )
    remote_options(q)
    branch_option(
        q,
        "the branch whose pointer in the remote moves (default: the current branch, or the "
        "one containing a detached HEAD, else the default branch: NOISEFLOOR_DEFAULT_BRANCH, "
        "the repository's, or main); the move fails with exit 3, "
        "naming who moved it, when another runner moved it since it was read",
        "branch",
    )
    q = bsub.add_parser(
        "show", help="list every suite's baseline (with a remote, its pointers on every branch)"
    )
    global_options(q, top=False)
    remote_options(q)
    q = bsub.add_parser(
        "deepen",
        help="top the baseline up to N repeats per case, on the baseline's own target version",
        description="Take more samples of the baseline's target version (the code as it is "
        "must be that version), so that checks compare against a deep baseline. Never touches "
        "a candidate.",
    )
    global_options(q, top=False)
    q.add_argument("suite", type=Path, help="the suite file")
    repeats_option(
        q,
        dest="baseline_repeats",
        help_text=f"repeats per case to reach (default: the suite's `baseline_repeats`, else "
        f"{BASELINE_REPEATS})",
    )
    jobs_option(q, "default 8 for an endpoint, 1 for a command")
    executor_option(q)
    lock_timeout_option(q)
    remote_options(q)


def cmd_baseline(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run

    if args.baseline_command == "set":
        from noisefloor.store.mirrored import MirroredStore

        store, names = suites_store(args, [args.suite] if args.suite else [])
        run = resolve_run(store, args.run)
        if names and run.suite != names[0]:
            raise UsageError(
                f"run {run.run_id} is of suite {run.suite!r}, not of {args.suite} ({names[0]!r})",
                hint="name the run's own suite file with --suite, or a run of that suite",
            )
        pointer = store.set_baseline(run.suite, run.run_id)
        moved = f" (branch {store.branches.write})" if isinstance(store, MirroredStore) else ""
        print(f"{pointer.suite}: {pointer.run_id}{moved}")
        return 0
    if args.baseline_command == "deepen":
        return _deepen(args)
    store = store_of(args)
    from noisefloor.store.mirrored import MirroredStore

    pointers = store.baselines()
    shared = _remote_pointers(store) if isinstance(store, MirroredStore) else []
    if not pointers and not shared:
        raise NoisefloorError(
            f"no baselines recorded under {store.root}",
            hint="`noisefloor check SUITE` adopts one; `noisefloor baseline set RUN` moves one",
        )
    for pointer in pointers:
        print(f"{pointer.suite}: {pointer.run_id}  (set {pointer.set_at})")
    for line in shared:
        print(line)
    return 0


def _remote_pointers(store: MirroredStore) -> list[str]:
    """A line per pointer of the remote, under a line naming it."""
    from noisefloor.operations.sync import remote_pointers

    lines = [
        f"{p.suite} on {p.branch}: {p.run_id}  (set {p.set_at} by {p.set_by or 'unknown'})"
        for p in remote_pointers(store)
    ]
    return [f"in {store.remote.url}:", *(f"  {line}" for line in lines)] if lines else []


def _deepen(args: argparse.Namespace) -> int:
    """`baseline deepen`, in the store its suite's settings name (its `defaults.remote` too)."""
    from noisefloor.executors import executor_of
    from noisefloor.operations.deepen import deepen_baseline
    from noisefloor.suite.load import load_suite

    suite = load_suite(args.suite)
    resolved = resolved_of(args, suite)
    done = deepen_baseline(
        open_store(resolved.store),
        suite,
        resolved.design.baseline_repeats,
        jobs=resolved.sampling.jobs,
        executor=executor_of(resolved.sampling.executor),
    )
    print(
        f"{suite.name}: baseline {done.run.run_id}: {len(done.before)} case(s) at "
        f"{_depths([c.repeats for c in done.run.cases])} repeats (held "
        f"{_depths(list(done.before.values()))} before), {done.run.calls} target call(s)"
    )
    if done.skipped:
        print(
            f"NOTE: {len(done.skipped)} case(s) of the baseline are not in the suite with the same "
            f"input, left as they were: {', '.join(done.skipped[:5])}",
            file=sys.stderr,
        )
    for warning in done.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _depths(repeats: list[int]) -> str:
    """Cases' repeats as one number, or the range they span ("5 to 30", never "5/30", which
    reads as a fraction)."""
    low, high = min(repeats, default=0), max(repeats, default=0)
    return str(low) if low == high else f"{low} to {high}"
