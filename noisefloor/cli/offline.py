"""The commands that read stored runs and never call the target: `rescore`, `diff`, `compare`,
`report` and `explain`, each with its arguments and its handler.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.cli.inputs import open_store, resolved_of, store_of, suite_name
from noisefloor.cli.options import format_options, html_file, min_valid_option, rule_options
from noisefloor.cli.output import emit, report_out, screen_of, verbosity_of
from noisefloor.errors import ExitCode

if TYPE_CHECKING:
    from noisefloor.model.report import Report

# Each handler imports its operation when it runs: `--help` and the other commands load none of it.

__all__ = [
    "cmd_compare",
    "cmd_diff",
    "cmd_explain",
    "cmd_report",
    "cmd_rescore",
    "compare_parser",
    "diff_parser",
    "explain_parser",
    "report_parser",
    "rescore_parser",
]


def rescore_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", type=Path, help="the suite file whose scorers to apply")
    p.add_argument(
        "run",
        nargs="?",
        help="run id (default: the suite's newest run that sampled its target, not a re-scoring)",
    )
    format_options(p)


def _compared_runs(p: argparse.ArgumentParser, name: str, does: str) -> None:
    """The run a command compares (positional `name`) and the run it compares against."""
    p.add_argument(
        name,
        nargs="?",
        help="run id or label (default: the newest run that sampled its target, not a "
        f"re-scoring; name a `rescore`'s run to {does} it)",
    )
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to compare against (default: the suite's baseline)",
    )


def diff_parser(p: argparse.ArgumentParser) -> None:
    _compared_runs(p, "candidate", "compare")
    rule_options(p)
    format_options(p)


def report_parser(p: argparse.ArgumentParser) -> None:
    _compared_runs(p, "run", "report")
    p.add_argument(
        "--html",
        type=html_file,
        required=True,
        metavar="FILE",
        help="write the report here (one self-contained page; needs the `html` extra)",
    )
    rule_options(p)


def compare_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", required=True, metavar="LABEL", help="label of the baseline run")
    p.add_argument("--current", required=True, metavar="LABEL", help="label of the current run")
    p.add_argument("--suite", metavar="NAME", help="the suite, when a label exists in several")
    rule_options(p)
    format_options(p)


def explain_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="the case id")
    p.add_argument(
        "run",
        nargs="?",
        help="run id or label (default: the newest run holding the case that sampled its "
        "target, not a re-scoring)",
    )
    p.add_argument("--suite", metavar="NAME", help="only runs of this suite (its name or its file)")
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to explain against (default: the suite's baseline)",
    )
    min_valid_option(
        p,
        "exit 3 when the infrastructure left the candidate fewer valid repeats than this, "
        "as diff does",
    )
    p.add_argument(
        "--format",
        choices=("terminal", "markdown", "json"),
        default="terminal",
        help="default terminal",
    )


def cmd_rescore(args: argparse.Namespace) -> int:
    from noisefloor.operations.rescore import rescore_run
    from noisefloor.operations.run_summary import run_summary
    from noisefloor.report import render_run
    from noisefloor.suite.load import load_suite

    result = rescore_run(store_of(args), load_suite(args.suite), args.run)
    screen, verbosity = screen_of(sys.stdout), verbosity_of(args)
    emit(render_run(run_summary(result), args.format, screen=screen, verbosity=verbosity), args)
    return 0


def _compared(
    args: argparse.Namespace, compare: Callable[..., Report], *refs: Any, **kw: Any
) -> int:
    """A comparison of stored runs (diff, compare): never calls a target, never writes a run."""
    resolved = resolved_of(args)
    store = open_store(resolved.store, read_only=True)
    report = compare(
        store, *refs, resolved.rule, allow_target_change=args.allow_target_change, **kw
    )
    return report_out(report, args, store)


def cmd_diff(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import diff_runs

    return _compared(
        args,
        diff_runs,
        args.candidate,
        args.baseline,
        continue_on_scorer_error=args.continue_on_scorer_error,
    )


def cmd_compare(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import compare_labels

    return _compared(args, compare_labels, args.baseline, args.current, suite=args.suite)


def cmd_report(args: argparse.Namespace) -> int:
    """`diff` of a run with its baseline, the terminal report printed, the HTML one written."""
    from noisefloor.operations.resolve import diff_runs

    args.format, args.output = "html", args.html
    return _compared(args, diff_runs, args.run, args.baseline, continue_on_scorer_error=True)


def cmd_explain(args: argparse.Namespace) -> int:
    """The explanation on stdout; a candidate the infrastructure left unmeasured exits 3, its
    cause on stderr, as a comparison of it would."""
    from noisefloor.operations.explain import explain
    from noisefloor.report.explain import render

    resolved = resolved_of(args)
    store = open_store(resolved.store, read_only=True)
    found = explain(
        store,
        args.case,
        args.run,
        args.baseline,
        suite_name(args.suite),
        min_valid=resolved.rule.min_valid,
    )
    emit(render(found, args.format, screen_of(sys.stdout), verbosity_of(args)), args)
    if found.unmeasured:
        print(f"error: {found.unmeasured}", file=sys.stderr)
        return int(ExitCode.HARNESS)
    return 0
