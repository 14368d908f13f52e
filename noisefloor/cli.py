"""Argument parsing and the console entry: each command parses, calls one library function, renders.

`main(argv) -> int` never exits; `console_main` maps harness faults to 3 and survives closed pipes.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from noisefloor import __version__
from noisefloor.errors import ExitCode, NoisefloorError, UsageError
from noisefloor.settings import MIN_EFFECT, REPEATS, RuleName, RuleSettings, resolve_settings

if TYPE_CHECKING:
    from noisefloor.report.model import Report

__all__ = ["console_main", "main"]

_N = TypeVar("_N", int, float)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error, our "broken": raise instead, mapped to 3."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"`{self.prog} --help` lists the options")


def _parse(kind: Callable[[str], _N], text: str, what: str) -> _N:
    """`kind(text)`; argparse would name the converter (`invalid _positive value`), so say what."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def _positive(text: str) -> int:
    value = _parse(int, text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _probability(text: str) -> float:
    value = _parse(float, text, "a number")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _non_negative(text: str) -> float:
    value = _parse(float, text, "a number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """--root and --debug, accepted before or after the subcommand."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument(
        "--root",
        default=default,
        metavar="DIR",
        help="store root (env NOISEFLOOR_ROOT; default .noisefloor)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="show tracebacks of internal errors",
    )


def _repeats_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--repeats", type=_positive, metavar="N", help=help_text)


def _alpha_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument(
        "--alpha",
        type=_probability,
        default=RuleSettings.alpha,
        help=f"{help_text} (default {RuleSettings.alpha:g})",
    )


def _run_options(parser: argparse.ArgumentParser, *, label_required: bool = False) -> None:
    parser.add_argument(
        "suite", nargs="?", type=Path, help="the suite file (YAML); or give --cases instead"
    )
    _repeats_option(parser, "repeats per case (overrides the suite)")
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=int(os.environ.get("NOISEFLOOR_JOBS", "1")),
        metavar="N",
        help="target calls at once (env NOISEFLOOR_JOBS; default 1; latency is unreliable above 1)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="take new samples even where cached ones exist"
    )
    parser.add_argument(
        "--label",
        metavar="NAME",
        required=label_required,
        help="name this run (see `compare`); runs under one label pool their repeats",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="start --label over with new samples (its earlier runs stay in the store)",
    )
    parser.add_argument(
        "--set-baseline", action="store_true", help="make this run the suite's baseline"
    )
    _endpoint_options(parser)


def _endpoint_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "endpoint",
        "An OpenAI-compatible endpoint: run a JSONL cases file against it with no suite file, or "
        "override an endpoint suite's `target.http` values (which changes the target version).",
    )
    group.add_argument(
        "--cases",
        type=Path,
        metavar="FILE",
        help="a JSONL cases file, run with no suite file; the suite is named after the file",
    )
    group.add_argument(
        "--base-url",
        metavar="URL",
        help="e.g. http://127.0.0.1:8080/v1 (with --cases, default env OPENAI_BASE_URL; "
        "the key is read from OPENAI_API_KEY when set)",
    )
    group.add_argument("--model", metavar="NAME", help="the model to request (needed with --cases)")
    group.add_argument("--temperature", type=float, metavar="T", help="sampling temperature")
    group.add_argument("--seed", type=int, metavar="N", help="the request's seed")
    group.add_argument(
        "--max-tokens", type=_positive, metavar="N", help="the most tokens an answer may have"
    )
    group.add_argument("--system", metavar="TEXT", help="a system message sent before each input")


def _format_options(parser: argparse.ArgumentParser) -> None:
    from noisefloor.report import FORMATS

    parser.add_argument(
        "--format", choices=FORMATS, default="terminal", help="report format (default terminal)"
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="also write the report, in --format, to FILE"
    )


def _rule_options(parser: argparse.ArgumentParser, default_rule: str = "exact") -> None:
    parser.add_argument(
        "--rule",
        choices=tuple(RuleName),
        default=default_rule,
        help=f"decision rule (default {default_rule})",
    )
    _alpha_option(parser, "family-wise false-alarm rate per check, rule exact")
    parser.add_argument(
        "--min-effect",
        type=_non_negative,
        metavar="X",
        help="smallest change called a regression: a pass rate for exact "
        f"({MIN_EFFECT[RuleName.EXACT]:.2f}) and wilson ({MIN_EFFECT[RuleName.WILSON]:.2f}); "
        f"score units of continuous scorers for band ({MIN_EFFECT[RuleName.BAND]:g})",
    )
    parser.add_argument(
        "--suspect-drop",
        type=_non_negative,
        metavar="X",
        help="a pass-rate drop this large that is not significant is inconclusive "
        f"(default: the suite's defaults.suspect_drop, else {RuleSettings.suspect_drop:.2f})",
    )
    parser.add_argument(
        "--min-rate-drop",
        type=_non_negative,
        default=RuleSettings.min_rate_drop,
        metavar="X",
        help=f"rate clause of rule band (default {RuleSettings.min_rate_drop:.2f})",
    )
    parser.add_argument(
        "--min-valid",
        type=_positive,
        default=RuleSettings.min_valid,
        metavar="N",
        help="valid repeats needed per side, rules exact and wilson "
        f"(default {RuleSettings.min_valid})",
    )
    parser.add_argument(
        "--strict", action="store_true", help="inconclusive cases fail the check (exit 1)"
    )
    parser.add_argument(
        "--suite-gate",
        action="store_true",
        help="also fail when the suite's mean pass-rate change lies wholly below -SUITE_MIN_EFFECT",
    )
    parser.add_argument(
        "--suite-min-effect",
        type=_non_negative,
        default=RuleSettings.suite_min_effect,
        metavar="X",
        help="mean pass-rate drop across cases that --suite-gate fails on "
        f"(default {RuleSettings.suite_min_effect:g})",
    )
    parser.add_argument(
        "--allow-target-change",
        action="store_true",
        help="compare runs whose target spec (argv template, cwd, model) differs",
    )
    parser.add_argument(
        "--continue-on-scorer-error",
        action="store_true",
        help="report scorer errors without failing the check with exit 3",
    )


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


_EXIT_CODES = """exit codes:
  0    nothing regressed
  1    a case regressed (with --strict, also an inconclusive one)
  2    a case is broken: the target no longer produces valid results
  3    the harness, its configuration or its invocation is wrong
  130  interrupted by Ctrl-C (SIGINT); finished samples are kept
  143  stopped by SIGTERM; finished samples are kept
"""


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = _Parser(
        prog="noisefloor",
        description="A regression gate for programs that don't give the same answer twice.",
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"noisefloor {__version__}")
    _global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        _global_options(p, top=False)
        return p

    p = command("run", "sample every case (cached samples are reused) and save the run")
    _run_options(p)
    _format_options(p)
    p = command("check", "run, then compare with the baseline and exit with the verdict")
    _run_options(p)
    _rule_options(p)
    _format_options(p)
    p.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 3 instead of adopting when there is no baseline",
    )
    p.add_argument(
        "--adopt",
        action="store_true",
        help="with CI set in the environment, adopt this run when there is no baseline "
        "(without CI, a first check adopts anyway)",
    )
    p = command(
        "rescore", "re-apply the suite's current scorers to a stored run; never calls the target"
    )
    p.add_argument("suite", type=Path, help="the suite file whose scorers to apply")
    p.add_argument("run", nargs="?", help="run id (default: the suite's newest run)")
    _format_options(p)
    p = command("diff", "compare stored runs; never calls the target")
    p.add_argument("candidate", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to compare against (default: the suite's baseline)",
    )
    _rule_options(p)
    _format_options(p)
    p = command("baseline", "move or list the baseline pointers")
    bsub = p.add_subparsers(
        dest="baseline_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    q = bsub.add_parser("set", help="point the run's suite at this run")
    _global_options(q, top=False)
    q.add_argument("run", help="run id or label")
    q = bsub.add_parser("show", help="list every suite's baseline")
    _global_options(q, top=False)
    p = command("runs", "the stored runs, newest first: ids, labels, target versions, baselines")
    p.add_argument("suite", nargs="?", help="only runs of this suite (its name or its file)")
    p.add_argument(
        "--format", choices=("terminal", "json"), default="terminal", help="default terminal"
    )
    p = command("show", "the stored outputs of a run, stderr included")
    p.add_argument("run", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument("--case", metavar="ID", help="only this case")
    p = command("scorers", "the table of scorers")
    p = command("schema", "the JSON Schema of suite files (or of the JSON report)")
    p.add_argument(
        "--report",
        action="store_true",
        help="print the JSON Schema of the JSON report (`--format json`) instead",
    )
    p = command("record", "the quarantine-lane `record`: run a suite and label the run")
    _run_options(p, label_required=True)
    p = command("compare", "the quarantine-lane `compare`: two labelled runs (default rule wilson)")
    p.add_argument("--baseline", required=True, metavar="LABEL", help="label of the baseline run")
    p.add_argument("--current", required=True, metavar="LABEL", help="label of the current run")
    p.add_argument("--suite", metavar="NAME", help="the suite, when a label exists in several")
    _rule_options(p, default_rule="wilson")
    _format_options(p)
    p = command("history", "one case across stored runs: pass rate and outputs (from the ledger)")
    p.add_argument("case", help="the case id")
    p.add_argument("--suite", metavar="NAME", help="only runs of this suite")
    p = command("ledger", "the SQLite ledger that indexes every sample")
    lsub = p.add_subparsers(
        dest="ledger_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    q = lsub.add_parser("rebuild", help="rebuild the ledger from the JSON sample and run files")
    _global_options(q, top=False)
    p = command("import", "read a store written by the public noisefloor; never calls the target")
    p.add_argument("source", type=Path, metavar="DIR", help="the public tool's store root")
    p.add_argument(
        "--suite", type=Path, required=True, help="the suite file those runs were taken of"
    )
    p = command("plan", "minimum detectable change and repeats needed, for N, case count and alpha")
    p.add_argument("suite", nargs="?", type=Path, help="take N and the case count from this suite")
    _repeats_option(p, f"repeats per side (default: the suite's, else {REPEATS})")
    p.add_argument(
        "--cases",
        type=_positive,
        metavar="M",
        help="cases that can fail (default: the suite's, else 50)",
    )
    _alpha_option(p, "family-wise false-alarm rate")
    p.add_argument(
        "--power",
        type=_probability,
        default=0.8,
        help="power for the repeats-needed table (default 0.8)",
    )
    return parser


# -- commands -------------------------------------------------------------------------------


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

    opts = RunOptions(
        repeats=args.repeats,
        jobs=args.jobs,
        fresh=args.fresh,
        label=args.label,
        replace=args.replace,
        set_baseline=args.set_baseline,
    )
    if not sys.stderr.isatty():
        return opts, None
    from noisefloor.report.progress import Progress

    progress = Progress()
    opts.on_start = progress.start
    opts.on_sample = progress.advance
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
    from noisefloor.report import render_report

    if args.output is not None:
        _emit(render_report(report, "terminal"), args, render_report(report, args.format))
    else:
        _emit(render_report(report, args.format), args)
    for warning in report.warnings if args.format != "terminal" else []:
        print(f"warning: {warning}", file=sys.stderr)
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


def cmd_diff(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import diff_runs

    report = diff_runs(
        _store(args, read_only=True),
        args.candidate,
        args.baseline,
        _settings(args),
        allow_target_change=args.allow_target_change,
        continue_on_scorer_error=args.continue_on_scorer_error,
    )
    return _report_out(report, args)


def cmd_compare(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import compare_labels

    report = compare_labels(
        _store(args, read_only=True),
        args.baseline,
        args.current,
        _settings(args),
        suite=args.suite,
        allow_target_change=args.allow_target_change,
    )
    return _report_out(report, args)


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
    "ledger": cmd_ledger,
    "import": cmd_import,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse and run one command; return its exit code (never raises for harness faults)."""
    parser = build_parser()
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        args = parser.parse_args(args_list)
        if args.command is None:
            # a usage error like any other: the help goes to stderr, stdout stays empty
            parser.print_help(sys.stderr)
            return int(ExitCode.HARNESS)
        return COMMANDS[args.command](args)
    except NoisefloorError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"error: {exc.format_message()}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, _Terminated)
        print(
            f"error: interrupted ({'SIGTERM' if terminated else 'Ctrl-C'}); every finished sample is "
            "kept and the next run resumes",
            file=sys.stderr,
        )
        return int(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
    except Exception as exc:  # an internal error: one clear line, the traceback only with --debug
        if debug:
            raise
        print(
            f"error: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return int(ExitCode.HARNESS)


class _Terminated(KeyboardInterrupt):
    """SIGTERM: stops like Ctrl-C, and exits 143 instead of 130."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def console_main() -> int:
    """The console script: SIGTERM stops like Ctrl-C, and a closed pipe (`| head`) is no error.

    Before the interpreter exits, every object alive is frozen out of the garbage collector:
    the process is ending, and the collections at shutdown took 0.3 s after a run of 1,000
    samples (finalizers and file flushing still happen).
    """
    signal.signal(signal.SIGTERM, _terminate)
    code = main()
    gc.freeze()
    return code
