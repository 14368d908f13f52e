"""The commands that describe rather than judge: `scorers`, `schema`, `plan` and `history`, each
with its arguments and its handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from noisefloor.cli.inputs import resolved_of, store_of, suite_name
from noisefloor.cli.options import (
    alpha_option,
    html_file,
    positive,
    probability,
    repeat_count,
    repeats_option,
)
from noisefloor.cli.output import emit, screen_of
from noisefloor.errors import UsageError

# Each handler imports its operation when it runs: `--help` and the other commands load none of it.

__all__ = [
    "cmd_history",
    "cmd_plan",
    "cmd_schema",
    "cmd_scorers",
    "history_parser",
    "plan_parser",
    "schema_parser",
    "scorers_parser",
]


def scorers_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "suite",
        type=Path,
        nargs="?",
        help="a suite file: its plugins' scorers are listed too, with the file they come from",
    )


def schema_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        action="store_true",
        help="print the JSON Schema of the JSON report (`--format json`) instead",
    )


def plan_parser(p: argparse.ArgumentParser) -> None:
    from noisefloor.settings import BASELINE_REPEATS, MAX_REPEATS, PLAN_CASES, PLAN_POWER, REPEATS

    p.add_argument("suite", nargs="?", type=Path, help="take N and the case count from this suite")
    repeats_option(p, f"repeats per side (default: the suite's, else {REPEATS})")
    p.add_argument(
        "--cases",
        type=positive,
        metavar="M",
        help=f"cases that can fail (default: the suite's, else {PLAN_CASES})",
    )
    alpha_option(p, "family-wise false-alarm rate")
    p.add_argument(
        "--power",
        type=probability,
        default=PLAN_POWER,
        help=f"power for the repeats-needed table (default {PLAN_POWER:g})",
    )
    p.add_argument(
        "--max-repeats",
        type=repeat_count,
        metavar="N",
        help=f"a sequential check's cap per case (default: the suite's, else {MAX_REPEATS})",
    )
    p.add_argument(
        "--baseline-repeats",
        type=repeat_count,
        metavar="N",
        help="the deep baseline's repeats per case (default: what the suite's baseline holds, "
        f"else {BASELINE_REPEATS})",
    )
    p.add_argument(
        "--drift",
        type=probability,
        metavar="RHO",
        help="what sessions that drift do to the sequential check: each session draws a case's "
        "pass rate from a beta around its mean with this intra-session correlation (0.02 to 0.1 "
        "is the range docs/drift.md describes)",
    )


def history_parser(p: argparse.ArgumentParser) -> None:
    from noisefloor.settings import HISTORY_RUNS

    p.add_argument("case", nargs="?", help="the case id (with --html: only this case)")
    p.add_argument("--suite", metavar="NAME", help="only runs of this suite (its name or its file)")
    p.add_argument(
        "--last",
        type=positive,
        default=HISTORY_RUNS,
        metavar="N",
        help="the newest N runs; the flakiness pools the newest N of the current target "
        f"version (default {HISTORY_RUNS})",
    )
    p.add_argument(
        "--format",
        choices=("terminal", "json", "markdown"),
        default="terminal",
        help="default terminal",
    )
    p.add_argument(
        "--outputs",
        action="store_true",
        help="also list each repeat: its status, reason and output (cut to 200 characters)",
    )
    p.add_argument(
        "--html",
        type=html_file,
        metavar="FILE",
        help="write one page of the suite's runs over time: per case, each run's pass rate "
        "plotted and its flakiness (needs the `html` extra)",
    )


def cmd_scorers(args: argparse.Namespace) -> int:
    from noisefloor.report.scorers import render_scorers
    from noisefloor.scorers.registry import REGISTRY

    if args.suite is not None:
        from noisefloor.suite.load import load_suite_plugins

        load_suite_plugins(args.suite)
    emit(render_scorers(REGISTRY.table()), args)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import orjson

    from noisefloor.model.report import report_json_schema
    from noisefloor.suite.json_schema import suite_json_schema

    schema = report_json_schema() if args.report else suite_json_schema()
    emit(orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode() + "\n", args)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from noisefloor.operations.plan import plan_text
    from noisefloor.report._console import wrapped

    text = plan_text(
        suite_path=args.suite,
        repeats=args.repeats,
        cases=args.cases,
        alpha=resolved_of(args).rule.alpha,
        power=args.power,
        store=store_of(args, read_only=True),
        max_repeats=args.max_repeats,
        baseline_repeats=args.baseline_repeats,
        drift=args.drift,
    )
    emit(wrapped(text, screen_of(sys.stdout)), args)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from noisefloor.operations import history

    store, suite = store_of(args), suite_name(args.suite)
    if args.html is not None:
        from noisefloor.report.history_html import render, summary_line

        name, cases = history.history_of_suite(store, suite, args.last, args.case)
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(render(name, cases), encoding="utf-8")
        emit(f"wrote {args.html}: {summary_line(name, cases)}\n", args)
        return 0
    if args.case is None:
        raise UsageError(
            "history needs a CASE, or --html FILE for a suite's page",
            hint="`noisefloor history CASE` or `noisefloor history --html history.html`",
        )
    from noisefloor.report.history import render as render_history

    found = history.history_of_case(store, args.case, suite, args.last)
    emit(render_history(found, args.format, args.outputs), args)
    return 0
