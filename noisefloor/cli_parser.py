"""The command line's arguments: every subcommand, its flags and their help, and the checks of
flag values; usage errors raise (exit 3) instead of argparse's exit 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from noisefloor import __version__
from noisefloor.errors import UsageError
from noisefloor.settings import (
    BASELINE_REPEATS,
    MAX_REPEATS,
    MIN_EFFECT,
    RELATIVE_EFFECT,
    REPEATS,
    RuleName,
    RuleSettings,
)

if TYPE_CHECKING:
    pass

__all__ = ["build_parser"]

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


def _sampling_options(parser: argparse.ArgumentParser) -> None:
    """--jobs and --fresh."""
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


def _run_options(parser: argparse.ArgumentParser, *, label_required: bool = False) -> None:
    parser.add_argument(
        "suite", nargs="?", type=Path, help="the suite file (YAML); or give --cases instead"
    )
    _repeats_option(parser, "repeats per case (overrides the suite)")
    _sampling_options(parser)
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


def _sequential_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "sequential repeats",
        "Without --repeats, a check screens every case at the suite's repeats and adds fresh "
        "repeats only to the cases in doubt, against a deep baseline: every stored sample of "
        "the baseline's target version counts. --repeats N takes N per case instead.",
    )
    group.add_argument(
        "--max-repeats",
        type=_positive,
        metavar="N",
        help=f"candidate repeats per case at most (suite `max_repeats`; default {MAX_REPEATS})",
    )
    group.add_argument(
        "--max-calls",
        type=_positive,
        metavar="N",
        help="samples the whole check may take (cached ones are free); cases left in doubt "
        "are inconclusive",
    )
    _baseline_depth_options(group)


def _baseline_depth_options(group: Any) -> None:
    group.add_argument(
        "--baseline-repeats",
        type=_positive,
        metavar="N",
        help="the deep baseline's repeats per case, at most (suite `baseline_repeats`; "
        f"default {BASELINE_REPEATS})",
    )
    group.add_argument(
        "--baseline-max-age",
        metavar="AGE",
        help="leave out baseline samples older than AGE, e.g. 12h or 7d, for endpoints that "
        "drift (suite `baseline_max_age`)",
    )


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


def _format(text: str) -> str:
    """A --format value; html is refused at once, before any sampling, without its extra."""
    if text == "html":
        _html_ready()
    return text


def _html_file(text: str) -> Path:
    _html_ready()
    return Path(text)


def _html_ready() -> None:
    from noisefloor.report.plots import require_plotting

    try:
        require_plotting()
    except UsageError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message}; {exc.hint}") from None


def _format_options(parser: argparse.ArgumentParser) -> None:
    from noisefloor.report import ALL_FORMATS

    parser.add_argument(
        "--format",
        type=_format,
        choices=ALL_FORMATS,
        default="terminal",
        help="report format (default terminal; html is one self-contained page with plots, "
        "from the `html` extra)",
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
        f"score units of continuous scorers for band ({MIN_EFFECT[RuleName.BAND]:g}). "
        "A scorer's own `min_effect` in the suite comes first; for a number scorer it is in "
        "score units. Under exact a number scorer's worsening that is not significant is "
        "inconclusive only while its 95%% interval reaches that min_effect (without one: "
        f"{RELATIVE_EFFECT * 100:g}%% of the baseline mean's magnitude), else unchanged",
    )
    parser.add_argument(
        "--suspect-drop",
        type=_non_negative,
        metavar="X",
        help="a pass-rate drop this large that is not significant is inconclusive, while its "
        "95%% interval still reaches min_effect "
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

    def command(name: str, help_text: str, description: str = "") -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=description or help_text)
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
    _sequential_options(p)
    p.add_argument(
        "--adopt",
        action="store_true",
        help="with CI set in the environment, adopt this run when there is no baseline "
        "(without CI, a first check adopts anyway)",
    )
    p = command(
        "ab",
        "sample a git ref and the working tree interleaved, then judge as check does",
        "Check REF out in a temporary git worktree and sample its target and the working tree's\n"
        "interleaved (REF, working tree, REF, ...), so drift hits both alike; then judge as check.",
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("suite", type=Path, help="the suite file (YAML), inside a git work tree")
    p.add_argument(
        "--baseline-ref",
        required=True,
        metavar="REF",
        help="the baseline arm: a commit, branch or tag (e.g. HEAD, main, HEAD~1)",
    )
    _repeats_option(p, "repeats per case and arm, a fixed design (default: sequential)")
    _sampling_options(p)
    _rule_options(p)
    _format_options(p)
    _sequential_options(p)
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
    p = command(
        "report",
        "compare a stored run with its suite's baseline and write the HTML report; "
        "never calls the target",
    )
    p.add_argument("run", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument(
        "--html",
        type=_html_file,
        required=True,
        metavar="FILE",
        help="write the report here (one self-contained page; needs the `html` extra)",
    )
    _rule_options(p)
    p = command("baseline", "move or list the baseline pointers")
    bsub = p.add_subparsers(
        dest="baseline_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    q = bsub.add_parser("set", help="point the run's suite at this run")
    _global_options(q, top=False)
    q.add_argument("run", help="run id or label")
    q = bsub.add_parser("show", help="list every suite's baseline")
    _global_options(q, top=False)
    q = bsub.add_parser(
        "deepen",
        help="top the baseline up to N repeats per case, on the baseline's own target version",
        description="Take more samples of the baseline's target version (the code as it is "
        "must be that version), so that checks compare against a deep baseline. Never touches "
        "a candidate.",
    )
    _global_options(q, top=False)
    q.add_argument("suite", type=Path, help="the suite file")
    _repeats_option(
        q, f"repeats per case to reach (default: --baseline-repeats, {BASELINE_REPEATS})"
    )
    q.add_argument(
        "--jobs",
        type=_positive,
        default=int(os.environ.get("NOISEFLOOR_JOBS", "1")),
        metavar="N",
        help="target calls at once (env NOISEFLOOR_JOBS; default 1)",
    )
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
    p = command(
        "explain",
        "what the target said differently in one case: its distinct outputs on both sides, "
        "a diff, and which scorer failed on which repeat; never calls the target",
    )
    p.add_argument("case", help="the case id")
    p.add_argument(
        "run", nargs="?", help="run id or label (default: the newest run holding the case)"
    )
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to explain against (default: the suite's baseline)",
    )
    p.add_argument(
        "--format",
        choices=("terminal", "markdown", "json"),
        default="terminal",
        help="default terminal",
    )
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
    p.add_argument(
        "--max-repeats",
        type=_positive,
        metavar="N",
        help=f"a sequential check's cap per case (default: the suite's, else {MAX_REPEATS})",
    )
    p.add_argument(
        "--baseline-repeats",
        type=_positive,
        metavar="N",
        help="the deep baseline's repeats per case (default: what the suite's baseline holds, "
        f"else {BASELINE_REPEATS})",
    )
    return parser
