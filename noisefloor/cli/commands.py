"""The command functions: each reads its parsed arguments, calls one operation, and renders what
it returns; `COMMANDS` maps a subcommand's name to its function.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from noisefloor.cli.inputs import (
    check_design,
    jobs_of,
    load_suite_of,
    rule_settings,
    run_options,
    store_of,
    suite_name,
    watched,
)
from noisefloor.errors import ExitCode, NoisefloorError, UsageError

if TYPE_CHECKING:
    from noisefloor.model.report import Report

__all__ = ["COMMANDS"]


def _emit(text: str, args: argparse.Namespace, rendered_for_file: str | None = None) -> None:
    if getattr(args, "output", None) is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            rendered_for_file if rendered_for_file is not None else text, encoding="utf-8"
        )
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # `| head` closed the pipe: the verdict still decides the exit code. Point stdout at
        # devnull so that the interpreter's flush at exit stays silent (Python's documented recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _sample(args: argparse.Namespace, fn: Callable[..., Any], *extra: Any, **kw: Any) -> Any:
    suite = load_suite_of(args)
    if kw.pop("with_settings", False):
        extra = (rule_settings(args, suite), *extra)
    if kw.pop("with_design", False):
        kw["design"] = check_design(args, suite)
    opts, progress = run_options(args, suite)
    from noisefloor.pipeline.doit_runner import SamplesDropped

    try:
        for _ in range(2):  # a sample read back corrupt was deleted: taken again, twice at most
            try:
                return fn(store_of(args), suite, opts, *extra, **kw)
            except SamplesDropped as exc:
                print(f"warning: {exc.message}; taking it again", file=sys.stderr)
        return fn(store_of(args), suite, opts, *extra, **kw)
    finally:
        if progress is not None:
            progress.stop()


def _report_out(report: Report, args: argparse.Namespace) -> int:
    from noisefloor.operations.step_summary import append_step_summary
    from noisefloor.report import render_report

    store = store_of(args, read_only=True)
    repeats = None
    if args.format == "html":
        from noisefloor.operations.repeats import repeats_behind

        repeats = repeats_behind(store, report)
    if args.output is not None:
        _emit(render_report(report, "terminal"), args, render_report(report, args.format, repeats))
    else:
        _emit(render_report(report, args.format, repeats), args)
    for warning in report.warnings if args.format != "terminal" else []:
        print(f"warning: {warning}", file=sys.stderr)
    append_step_summary(report, store)
    return report.exit_code


def cmd_run(args: argparse.Namespace) -> int:
    from noisefloor.operations.run import run_suite
    from noisefloor.operations.run_summary import run_summary
    from noisefloor.report import render_run

    result = _sample(args, run_suite)
    _emit(render_run(run_summary(result), getattr(args, "format", "terminal")), args)
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
    report = _sample(
        args,
        check_suite,
        with_settings=True,
        with_design=True,
        allow_target_change=args.allow_target_change,
        require_baseline=args.require_baseline,
        ci=bool(os.environ.get("CI")) and not args.adopt,
        continue_on_scorer_error=args.continue_on_scorer_error,
    )
    return _report_out(report, args)


def cmd_ab(args: argparse.Namespace) -> int:
    from noisefloor.executors import executor_of
    from noisefloor.operations.ab import ab_suite
    from noisefloor.operations.run import RunOptions
    from noisefloor.suite.load import load_suite

    suite = load_suite(args.suite)
    opts = RunOptions(
        repeats=args.repeats,
        jobs=jobs_of(args, suite),
        fresh=args.fresh,
        executor=executor_of(args.executor),
    )
    progress = watched(opts)
    try:
        report = ab_suite(
            store_of(args),
            suite,
            args.baseline_ref,
            opts,
            rule_settings(args, suite),
            allow_target_change=args.allow_target_change,
            continue_on_scorer_error=args.continue_on_scorer_error,
            design=check_design(args, suite),
        )
    finally:
        if progress is not None:
            progress.stop()
    return _report_out(report, args)


def cmd_rescore(args: argparse.Namespace) -> int:
    from noisefloor.operations.rescore import rescore_run
    from noisefloor.operations.run_summary import run_summary
    from noisefloor.report import render_run
    from noisefloor.suite.load import load_suite

    result = rescore_run(store_of(args), load_suite(args.suite), args.run)
    _emit(render_run(run_summary(result), args.format), args)
    return 0


def _compared(
    args: argparse.Namespace, compare: Callable[..., Report], *refs: Any, **kw: Any
) -> int:
    """A comparison of stored runs (diff, compare): never calls a target, never writes a run."""
    report = compare(
        store_of(args, read_only=True),
        *refs,
        rule_settings(args),
        allow_target_change=args.allow_target_change,
        **kw,
    )
    return _report_out(report, args)


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


def cmd_baseline(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run

    store = store_of(args)
    if args.baseline_command == "deepen":
        return _deepen(store, args)
    if args.baseline_command == "set":
        run = resolve_run(store, args.run)
        pointer = store.set_baseline(run.suite, run.run_id)
        print(f"{pointer.suite}: {pointer.run_id}")
        return 0
    pointers = store.baselines()
    if not pointers:
        raise NoisefloorError(
            f"no baselines recorded under {store.root}",
            hint="`noisefloor check SUITE` adopts one; `noisefloor baseline set RUN` moves one",
        )
    for pointer in pointers:
        print(f"{pointer.suite}: {pointer.run_id}  (set {pointer.set_at})")
    return 0


def _deepen(store: Any, args: argparse.Namespace) -> int:
    from noisefloor.executors import executor_of
    from noisefloor.operations.deepen import deepen_baseline
    from noisefloor.settings import BASELINE_REPEATS
    from noisefloor.suite.load import load_suite

    suite = load_suite(args.suite)
    own = suite.defaults.baseline_repeats
    repeats = args.repeats or own or BASELINE_REPEATS
    done = deepen_baseline(
        store, suite, repeats, jobs=jobs_of(args, suite), executor=executor_of(args.executor)
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
    return 0


def _depths(repeats: list[int]) -> str:
    """Cases' repeats as one number, or the range they span ("5 to 30", never "5/30", which
    reads as a fraction)."""
    low, high = min(repeats, default=0), max(repeats, default=0)
    return str(low) if low == high else f"{low} to {high}"


def cmd_runs(args: argparse.Namespace) -> int:
    from noisefloor.operations.runs import run_rows
    from noisefloor.report.runs import render_runs

    rows = run_rows(store_of(args, read_only=True), suite_name(args.suite))
    if args.format == "json":
        from noisefloor.report.json import render

        _emit(render(rows), args)
    else:
        _emit(render_runs(rows), args)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run
    from noisefloor.report.show import render_show

    store = store_of(args, read_only=True)
    run = resolve_run(store, args.run) if args.run else store.latest_run()
    if run is None:
        raise NoisefloorError(f"no runs under {store.root}")
    _emit(render_show(store, run, args.case), args)
    return 0


def cmd_scorers(args: argparse.Namespace) -> int:
    from noisefloor.report.scorers import render_scorers
    from noisefloor.scorers.registry import REGISTRY

    if args.suite is not None:
        from noisefloor.suite.load import load_suite_plugins

        load_suite_plugins(args.suite)
    _emit(render_scorers(REGISTRY.table()), args)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import orjson

    from noisefloor.model.report import report_json_schema
    from noisefloor.suite.json_schema import suite_json_schema

    schema = report_json_schema() if args.report else suite_json_schema()
    _emit(orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode() + "\n", args)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from noisefloor.operations.plan import plan_text

    _emit(
        plan_text(
            suite_path=args.suite,
            repeats=args.repeats,
            cases=args.cases,
            alpha=args.alpha,
            power=args.power,
            store=store_of(args, read_only=True),
            max_repeats=args.max_repeats,
            baseline_repeats=args.baseline_repeats,
        ),
        args,
    )
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from noisefloor.operations import history

    store, suite = store_of(args), suite_name(args.suite)
    if args.html is not None:
        from noisefloor.report.history_html import render, summary_line

        name, cases = history.history_of_suite(store, suite, args.last, args.case)
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(render(name, cases), encoding="utf-8")
        _emit(f"wrote {args.html}: {summary_line(name, cases)}\n", args)
        return 0
    if args.case is None:
        raise UsageError(
            "history needs a CASE, or --html FILE for a suite's page",
            hint="`noisefloor history CASE` or `noisefloor history --html history.html`",
        )
    from noisefloor.report.history import render as render_history

    found = history.history_of_case(store, args.case, suite, args.last)
    _emit(render_history(found, args.format, args.outputs), args)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from noisefloor.operations.importer import import_store
    from noisefloor.suite.load import load_suite

    suite = load_suite(args.suite)
    result = import_store(store_of(args), suite, args.source)
    out = [
        f"imported {len(result.imported)} run(s) of {suite.name!r} "
        f"({result.samples} samples, no target calls)"
    ]
    for run in result.imported:
        source = run.imported_from
        repeats = "/".join(str(n) for n in sorted({c.repeats for c in run.cases}))
        git = f", git {source.git_sha}" if source and source.git_sha else ""
        out.append(f"  {run.run_id}  {len(run.cases)} cases x {repeats} repeats{git}")
    if result.already:
        out.append(f"already imported, left alone: {', '.join(result.already)}")
    if result.baseline:
        out.append(f"baseline: {result.baseline}")
    _emit("\n".join(out) + "\n", args)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from noisefloor.operations.explain import explain
    from noisefloor.report.explain import render

    store = store_of(args, read_only=True)
    found = explain(store, args.case, args.run, args.baseline, suite_name(args.suite))
    _emit(render(found, args.format), args)
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from noisefloor.pipeline.indexing import open_ledger

    store = store_of(args)
    with open_ledger(store.root) as ledger:
        counts = ledger.rebuild(store.root)
    print(
        f"ledger rebuilt: {counts['samples']} samples, {counts['runs']} runs, "
        f"{counts['run_samples']} scored repeats"
    )
    return 0


def cmd_store(args: argparse.Namespace) -> int:
    from noisefloor.operations.verify import verify_store
    from noisefloor.report.verify import render

    found = verify_store(store_of(args), repair=args.repair)
    _emit(render(found, args.format, args.repair), args)
    return int(ExitCode.HARNESS) if found.left else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run,
    "record": cmd_run,
    "check": cmd_check,
    "ab": cmd_ab,
    "rescore": cmd_rescore,
    "diff": cmd_diff,
    "compare": cmd_compare,
    "report": cmd_report,
    "baseline": cmd_baseline,
    "runs": cmd_runs,
    "show": cmd_show,
    "scorers": cmd_scorers,
    "schema": cmd_schema,
    "plan": cmd_plan,
    "history": cmd_history,
    "explain": cmd_explain,
    "ledger": cmd_ledger,
    "store": cmd_store,
    "import": cmd_import,
}
