"""The commands that call the target: `run`, `record`, `check` and `ab`, each with its arguments
and its handler.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from noisefloor.cli.inputs import load_suite_of, open_store, resolved_of, run_options
from noisefloor.cli.options import (
    format_options,
    repeats_option,
    rule_options,
    run_arguments,
    sampling_options,
    sequential_options,
)
from noisefloor.cli.output import emit, report_out, screen_of, verbosity_of
from noisefloor.cli.remote_options import branch_option
from noisefloor.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from noisefloor.store.store import Store

# Each handler imports its operation when it runs: `--help` and the other commands load none of it.

__all__ = [
    "ab_parser",
    "check_parser",
    "cmd_ab",
    "cmd_check",
    "cmd_run",
    "record_parser",
    "run_parser",
]

_T = TypeVar("_T")


def run_parser(p: argparse.ArgumentParser) -> None:
    run_arguments(p)
    format_options(p)


def record_parser(p: argparse.ArgumentParser) -> None:
    run_arguments(p, label_required=True)


def check_parser(p: argparse.ArgumentParser) -> None:
    run_arguments(p)
    rule_options(p)
    format_options(p)
    p.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 3 instead of adopting when there is no baseline",
    )
    sequential_options(p)
    branch_option(
        p,
        "the branch whose baseline in the remote to compare with (default: the target branch "
        "of the pull or merge request, from GITHUB_BASE_REF or "
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME; else the current branch's baseline, else the "
        "default branch's)",
        "baseline_branch",
    )
    p.add_argument(
        "--adopt",
        action="store_true",
        help="with CI set in the environment, adopt this run when there is no baseline "
        "(without CI, a first check adopts anyway)",
    )


def ab_parser(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("suite", type=Path, help="the suite file (YAML), inside a git work tree")
    p.add_argument(
        "--baseline-ref",
        required=True,
        metavar="REF",
        help="the baseline arm: a commit, branch or tag (e.g. HEAD, main, HEAD~1)",
    )
    repeats_option(p, "repeats per case and arm, a fixed design (default: sequential)")
    sampling_options(p)
    rule_options(p)
    format_options(p)
    sequential_options(p)


def _sample(args: argparse.Namespace, fn: Callable[..., _T], **kw: Any) -> tuple[_T, Store]:
    """Load the suite, resolve the command's settings, and call `fn(store, suite, opts)`; with
    `with_settings` and `with_design`, a check's rule settings and design too. Returns what `fn`
    returned and the store it was given."""
    suite = load_suite_of(args)
    resolved = resolved_of(args, suite)
    extra: tuple[Any, ...] = ()
    if kw.pop("with_settings", False):
        extra = (resolved.rule,)
    if kw.pop("with_design", False):
        kw["design"] = resolved.design
    opts, progress = run_options(args, resolved)
    from noisefloor.pipeline.doit_runner import SamplesDropped

    try:
        for _ in range(2):  # a sample read back corrupt was deleted: taken again, twice at most
            # anew: it notes the files it drops
            store = open_store(resolved.store, max_age_s=resolved.design.baseline_max_age_s)
            try:
                return fn(store, suite, opts, *extra, **kw), store
            except SamplesDropped as exc:
                print(f"warning: {exc.message}; taking it again", file=sys.stderr)
        store = open_store(resolved.store, max_age_s=resolved.design.baseline_max_age_s)
        return fn(store, suite, opts, *extra, **kw), store
    finally:
        progress.stop()


def cmd_run(args: argparse.Namespace) -> int:
    from noisefloor.operations.run import run_suite
    from noisefloor.operations.run_summary import run_summary
    from noisefloor.report import render_run

    result, _ = _sample(args, run_suite)
    fmt, screen = getattr(args, "format", "terminal"), screen_of(sys.stdout)
    emit(render_run(run_summary(result), fmt, screen=screen, verbosity=verbosity_of(args)), args)
    if args.set_baseline:
        print(f"baseline of {result.run.suite!r} is now {result.run.run_id}", file=sys.stderr)
    return int(ExitCode.HARNESS) if result.unmeasured else 0  # (its cause is in the summary)


def cmd_check(args: argparse.Namespace) -> int:
    from noisefloor.operations.check import check_suite

    if args.adopt and args.require_baseline:
        raise UsageError(
            "--adopt and --require-baseline contradict each other",
            hint="--adopt makes this run the baseline when there is none; "
            "--require-baseline exits 3 then",
        )
    report, store = _sample(
        args,
        check_suite,
        with_settings=True,
        with_design=True,
        allow_target_change=args.allow_target_change,
        require_baseline=args.require_baseline,
        ci=bool(os.environ.get("CI")) and not args.adopt,
        continue_on_scorer_error=args.continue_on_scorer_error,
    )
    from noisefloor.store.mirrored import MirroredStore

    if isinstance(store, MirroredStore):
        report.warnings += store.notes
    if report.baseline_branch is not None:  # which branch's baseline, first of all
        branch = report.baseline_branch
        where = f"branch {branch.name!r}" if branch.name else "the local store"
        print(f"note: baseline of {where}: {branch.why}", file=sys.stderr)
    return report_out(report, args, store)


def cmd_ab(args: argparse.Namespace) -> int:
    from noisefloor.operations.ab import ab_suite
    from noisefloor.suite.load import load_suite

    suite = load_suite(args.suite)
    resolved = resolved_of(args, suite)
    opts, progress = run_options(args, resolved)
    try:
        store = open_store(resolved.store)
        report = ab_suite(
            store,
            suite,
            args.baseline_ref,
            opts,
            resolved.rule,
            allow_target_change=args.allow_target_change,
            continue_on_scorer_error=args.continue_on_scorer_error,
            design=resolved.design,
        )
    finally:
        progress.stop()
    return report_out(report, args, store)
