"""The command functions: each reads its parsed arguments, calls one operation, and renders what
it returns; `COMMANDS` maps a subcommand's name to its function.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.errors import NoisefloorError, UsageError
from noisefloor.settings import RuleSettings, resolve_settings

if TYPE_CHECKING:
    from noisefloor.report.model import Report

__all__ = ["COMMANDS"]


def _settings(args: argparse.Namespace, suite: Any = None) -> RuleSettings:
    """The rule settings: flags first, then the suite's `defaults`, then the built-in ones."""
    given = {
        name: getattr(args, name)
        for name in (
            "rule",
            "alpha",
            "min_effect",
            "suspect_drop",
            "min_rate_drop",
            "min_valid",
            "strict",
            "suite_gate",
            "suite_min_effect",
        )
    }
    return resolve_settings(given, suite.defaults if suite is not None else None)


def _store(args: argparse.Namespace, read_only: bool = False) -> Any:
    from noisefloor.store import ReadOnlyStore, Store

    root = args.root or os.environ.get("NOISEFLOOR_ROOT") or ".noisefloor"
    return ReadOnlyStore(root) if read_only else Store(root)


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


def _progress(args: argparse.Namespace) -> Any:
    from noisefloor.operations.run import RunOptions
    from noisefloor.report.progress import Progress

    opts = RunOptions(
        repeats=args.repeats,
        jobs=args.jobs,
        fresh=args.fresh,
        label=args.label,
        replace=args.replace,
        set_baseline=args.set_baseline,
    )
    # a live line on a terminal, plain lines in a log; on stderr, never in a report
    progress = Progress(live=sys.stderr.isatty())
    opts.on_start, opts.on_call, opts.on_sample = progress.start, progress.begin, progress.advance
    return opts, progress


def _load(args: argparse.Namespace) -> Any:
    """The suite of a sampling command: a suite file, or --cases with the endpoint flags."""
    from noisefloor.suite import cases_suite, load_suite
    from noisefloor.targets.http_kind import EndpointFlags

    flags = EndpointFlags(
        base_url=args.base_url,
        model=args.model,
        temperature=args.temperature,
        seed=args.seed,
        max_tokens=args.max_tokens,
        system=args.system,
    )
    if args.suite is not None and args.cases is not None:
        raise UsageError(
            "give a suite file or --cases FILE, not both",
            hint="a suite file names its cases with `cases_file:`",
        )
    if args.cases is None:
        if args.suite is None:
            raise UsageError(
                f"{args.command} needs a suite file, or --cases FILE.jsonl with --model",
                hint=f"`noisefloor {args.command} --help` lists the options",
            )
        _check_base_url(flags.base_url, "--base-url")
        return load_suite(args.suite, flags)
    if not flags.base_url:
        from_env = os.environ.get("OPENAI_BASE_URL")
        if not from_env:
            raise UsageError(
                "--cases needs the endpoint's base URL: pass --base-url URL or set OPENAI_BASE_URL",
                hint="e.g. --base-url http://127.0.0.1:8080/v1",
            )
        _check_base_url(from_env, "OPENAI_BASE_URL")
        flags = dataclasses.replace(flags, base_url=from_env)
    else:
        _check_base_url(flags.base_url, "--base-url")
    if not flags.model:
        raise UsageError("--cases needs the model to request: pass --model NAME")
    key_env = "OPENAI_API_KEY" if os.environ.get("OPENAI_API_KEY") else None
    return cases_suite(args.cases, flags, api_key_env=key_env)


def _check_base_url(url: str | None, source: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url or "")
    if url is not None and (parts.scheme not in ("http", "https") or not parts.netloc):
        raise UsageError(
            f"{source} {url!r} is not an http(s) URL",
            hint="e.g. http://127.0.0.1:8080/v1 (`/chat/completions` is appended)",
        )


def _sample(args: argparse.Namespace, fn: Callable[..., Any], *extra: Any, **kw: Any) -> Any:
    suite = _load(args)
    if kw.pop("with_settings", False):
        extra = (_settings(args, suite), *extra)
    opts, progress = _progress(args)
    try:
        return fn(_store(args), suite, opts, *extra, **kw)
    finally:
        if progress is not None:
            progress.stop()


def _report_out(report: Report, args: argparse.Namespace) -> int:
    from noisefloor.report import render_report, step_summary

    if args.output is not None:
        _emit(render_report(report, "terminal"), args, render_report(report, args.format))
    else:
        _emit(render_report(report, args.format), args)
    for warning in report.warnings if args.format != "terminal" else []:
        print(f"warning: {warning}", file=sys.stderr)
    step_summary.append_step_summary(report, _store(args, read_only=True))
    return report.exit_code


def _run_summary(result: Any) -> dict[str, Any]:
    from noisefloor.verdict import side

    return {
        "run": result.run.model_dump(
            mode="json", include={"run_id", "suite", "label", "cases", "rescored_from"}
        ),
        "calls": result.run.calls,
        "pending": result.pending,
        "warnings": result.warnings,
        "work": result.stats.as_dict(),
        "cases": [
            {
                "case_id": b.case_id,
                "outcomes": b.outcomes,
                "scorers": [{"key": s.label, "side": side(s)} for s in b.scorers],
            }
            for b in result.bands.values()
        ],
    }


def cmd_run(args: argparse.Namespace) -> int:
    from noisefloor.operations.run import run_suite
    from noisefloor.report import render_run

    result = _sample(args, run_suite)
    fmt = getattr(args, "format", "terminal")
    _emit(render_run(_run_summary(result), fmt), args)
    if args.set_baseline:
        print(f"baseline of {result.run.suite!r} is now {result.run.run_id}", file=sys.stderr)
    return 0


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
        allow_target_change=args.allow_target_change,
        require_baseline=args.require_baseline,
        ci=bool(os.environ.get("CI")) and not args.adopt,
        continue_on_scorer_error=args.continue_on_scorer_error,
    )
    # other formats print every warning on stderr already
    if args.format == "terminal" and (report.adopted or report.baseline is None):
        print(f"NOTE: {report.warnings[0]}", file=sys.stderr)
    return _report_out(report, args)


def cmd_rescore(args: argparse.Namespace) -> int:
    from noisefloor.operations.rescore import rescore_run
    from noisefloor.report import render_run
    from noisefloor.suite import load_suite

    result = rescore_run(_store(args), load_suite(args.suite), args.run)
    _emit(render_run(_run_summary(result), args.format), args)
    return 0


def _compared(
    args: argparse.Namespace, compare: Callable[..., Report], *refs: Any, **kw: Any
) -> int:
    """A comparison of stored runs (diff, compare): never calls a target, never writes a run."""
    report = compare(
        _store(args, read_only=True),
        *refs,
        _settings(args),
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


def cmd_baseline(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run

    store = _store(args)
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


def cmd_runs(args: argparse.Namespace) -> int:
    from noisefloor.report.runs import render_runs, run_rows

    suite = args.suite
    if suite is not None and os.path.isfile(suite):
        from noisefloor.suite import load_suite

        suite = load_suite(Path(suite)).name
    rows = run_rows(_store(args, read_only=True), suite)
    if args.format == "json":
        from noisefloor.report.json import render

        _emit(render(rows), args)
    else:
        _emit(render_runs(rows), args)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run
    from noisefloor.report.show import render_show

    store = _store(args, read_only=True)
    run = resolve_run(store, args.run) if args.run else store.latest_run()
    if run is None:
        raise NoisefloorError(f"no runs under {store.root}")
    _emit(render_show(store, run, args.case), args)
    return 0


def cmd_scorers(args: argparse.Namespace) -> int:
    from noisefloor.scorers import REGISTRY

    rows = REGISTRY.table()
    width = max(len(r["name"]) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    out = [f"{'scorer':<{width}}  {'kind':<{kind_w}}  params / what it checks"]
    for row in rows:
        out.append(f"{row['name']:<{width}}  {row['kind']:<{kind_w}}  {row['params'] or '-'}")
        out.append(f"{'':<{width}}  {'':<{kind_w}}  {row['doc']}")
    _emit("\n".join(out) + "\n", args)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import orjson

    from noisefloor.report.model import report_json_schema
    from noisefloor.suite import suite_json_schema

    schema = report_json_schema() if args.report else suite_json_schema()
    _emit(orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode() + "\n", args)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from noisefloor.plan import plan_text

    _emit(
        plan_text(
            suite_path=args.suite,
            repeats=args.repeats,
            cases=args.cases,
            alpha=args.alpha,
            power=args.power,
            store=_store(args, read_only=True),
        ),
        args,
    )
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from noisefloor.indexing import open_ledger

    store = _store(args)
    with open_ledger(store.root) as ledger:
        runs = ledger.history(args.case, args.suite)
    if not runs:
        raise NoisefloorError(
            f"no run in the ledger has a case {args.case!r}",
            hint="`noisefloor ledger rebuild` indexes runs made before the ledger existed",
        )
    out = []
    for run in runs:
        rate = f"{run['passes']}/{run['valid']}" if run["valid"] else "-"
        label = f"  label {run['label']}" if run["label"] else ""
        out.append(
            f"{run['run_id']}  {rate} passed{label}  target {run['target_key']}"
            + (f"  model {run['model']}" if run["model"] else "")
        )
        for rep in run["repeats"]:
            text = (rep["output_text"] or "").replace("\n", " ")
            out.append(
                f"    r{rep['repeat_idx']} {rep['status']:<7} {rep['reason'] or ''}  | {text}"
            )
    _emit("\n".join(out) + "\n", args)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from noisefloor.importer import import_store
    from noisefloor.suite import load_suite

    suite = load_suite(args.suite)
    result = import_store(_store(args), suite, args.source)
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

    found = explain(_store(args, read_only=True), args.case, args.run, args.baseline)
    _emit(render(found, args.format), args)
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from noisefloor.indexing import open_ledger

    store = _store(args)
    with open_ledger(store.root) as ledger:
        counts = ledger.rebuild(store.root)
    print(
        f"ledger rebuilt: {counts['samples']} samples, {counts['runs']} runs, "
        f"{counts['run_samples']} scored repeats"
    )
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run,
    "record": cmd_run,
    "check": cmd_check,
    "rescore": cmd_rescore,
    "diff": cmd_diff,
    "compare": cmd_compare,
    "baseline": cmd_baseline,
    "runs": cmd_runs,
    "show": cmd_show,
    "scorers": cmd_scorers,
    "schema": cmd_schema,
    "plan": cmd_plan,
    "history": cmd_history,
    "explain": cmd_explain,
    "ledger": cmd_ledger,
    "import": cmd_import,
}
