"""The command line's shared options and the checks of their values: the option groups commands
share, and the checks that turn a bad value into a usage error naming what was expected.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeVar

from noisefloor.cli.remote_options import remote_options

# A flag's check, and a help text's defaults, import what they need when the parser is built for
# the command invoked: `--version` and `--help` load none of it.

# the settings (dataclasses) load with a command's arguments alone: `--help` and `--version`
# need neither

__all__ = [
    "alpha_option",
    "executor_option",
    "format_options",
    "global_options",
    "html_file",
    "jobs",
    "jobs_option",
    "lock_timeout_option",
    "min_valid_option",
    "money",
    "non_negative",
    "positive",
    "repeat_count",
    "probability",
    "repeats_option",
    "rule_options",
    "run_arguments",
    "sampling_options",
    "sequential_options",
]

_N = TypeVar("_N", int, float)


def _parse(kind: Callable[[str], _N], text: str, what: str) -> _N:
    """`kind(text)`; argparse would name the converter (`invalid positive value`), so say what."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def _checked(parse: Callable[[str], _N], text: str) -> _N:
    """`parse(text)`, its ValueError made argparse's error for the flag."""
    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive(text: str) -> int:
    from noisefloor.settings.resolved import parse_whole

    return _checked(parse_whole, text)


def money(text: str) -> Decimal:
    """An amount of money above 0, kept exact as written (`0.05`, not the nearest float)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"must be an amount such as 0.50, got {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"must be an amount above 0, got {text!r}")
    return value


def repeat_count(text: str) -> int:
    """A number of repeats: at least 1, at most the limit suites have (`REPEATS_LIMIT`)."""
    from noisefloor.settings import REPEATS_LIMIT

    value = positive(text)
    if value > REPEATS_LIMIT:
        raise argparse.ArgumentTypeError(f"must be at most {REPEATS_LIMIT:,}, got {value}")
    return value


def probability(text: str) -> float:
    value = _parse(float, text, "a number")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def non_negative(text: str) -> float:
    from noisefloor.settings.resolved import parse_seconds

    return _checked(parse_seconds, text)


def global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """-v, -q, --root and --debug, accepted before or after the subcommand (a subcommand lists
    them last, in a group of their own)."""
    default: Any = None if top else argparse.SUPPRESS
    if not top:
        parser = parser.add_argument_group(  # type: ignore[assignment]
            "every command", "Accepted before or after the command's name, as -v and -q are."
        )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="more detail: the statistics behind each verdict (intervals, tests against their "
        "thresholds, looks, controls, the design)",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="less: the outcome, what failed and the warnings",
    )
    parser.add_argument(
        "--root",
        default=default,
        metavar="DIR",
        # settings.STORE_ROOT, written out: the top-level `--help` imports no settings
        help="store root (env NOISEFLOOR_ROOT; default .noisefloor)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="show tracebacks of internal errors",
    )


def repeats_option(parser: argparse.ArgumentParser, help_text: str, dest: str = "repeats") -> None:
    """--repeats N; `dest` names the setting it gives (`baseline deepen`: the baseline's depth)."""
    parser.add_argument("--repeats", type=repeat_count, metavar="N", dest=dest, help=help_text)


def alpha_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    from noisefloor.settings import RuleSettings

    parser.add_argument(
        "--alpha",
        type=probability,
        help=f"{help_text} (default {RuleSettings.alpha:g})",
    )


def min_valid_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    from noisefloor.settings import RuleSettings

    parser.add_argument(
        "--min-valid",
        type=positive,
        metavar="N",
        help=f"{help_text} (default {RuleSettings.min_valid})",
    )


def executor_option(parser: argparse.ArgumentParser) -> None:
    from noisefloor.settings import EXECUTOR

    parser.add_argument(
        "--executor",
        metavar="WHERE",
        help=f"where the target runs: {EXECUTOR} (default), or dask://HOST:PORT, a Dask scheduler "
        "whose workers take the samples (as many at once as they have threads; --jobs does not "
        "apply) while this process writes them (env NOISEFLOOR_EXECUTOR)",
    )


def jobs(text: str) -> int:
    """A --jobs value: a whole number, or `auto` for one per core this process may use."""
    from noisefloor.settings.resolved import parse_jobs

    return _checked(parse_jobs, text)


def jobs_option(parser: Any, default_help: str) -> None:
    """--jobs N|auto; without it, NOISEFLOOR_JOBS, then the target's own default."""
    parser.add_argument(
        "--jobs",
        type=jobs,
        metavar="N",
        help=f"target calls at once, or auto: one per core (env NOISEFLOOR_JOBS; {default_help}; "
        "latency is unreliable above 1)",
    )


def lock_timeout_option(parser: argparse.ArgumentParser) -> None:
    """--lock-timeout SECONDS: how long a run waits for another run of its suite."""
    from noisefloor.settings import LOCK_TIMEOUT_S

    parser.add_argument(
        "--lock-timeout",
        type=non_negative,
        metavar="SECONDS",
        help="how long to wait for another run of the same suite on this store before giving "
        f"up with 'store busy' (env NOISEFLOOR_LOCK_TIMEOUT; default {LOCK_TIMEOUT_S:g})",
    )


def sampling_options(parser: argparse.ArgumentParser) -> None:
    """--jobs, --executor, --lock-timeout, --fresh, and the remote's options."""
    jobs_option(parser, "default 8 for an endpoint, 1 for a command")
    executor_option(parser)
    lock_timeout_option(parser)
    parser.add_argument(
        "--fresh", action="store_true", help="take new samples even where cached ones exist"
    )
    remote_options(parser)


def run_arguments(parser: argparse.ArgumentParser, *, label_required: bool = False) -> None:
    parser.add_argument(
        "suite", nargs="?", type=Path, help="the suite file (YAML); or give --cases instead"
    )
    repeats_option(parser, "repeats per case (overrides the suite)")
    sampling_options(parser)
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


def sequential_options(parser: argparse.ArgumentParser) -> None:
    from noisefloor.settings import LOOKS, MAX_REPEATS

    looks = ", ".join(map(str, LOOKS))
    group = parser.add_argument_group(
        "sequential repeats",
        f"Without --repeats, a check looks at every case at the suite's repeats, then at {looks} "
        "and the cap, every repeat counting, and stops each case once a look decides it or "
        "leaves no worsening plausible, against a deep baseline: every stored sample of the "
        "baseline's target version counts. --repeats N takes N per case instead.",
    )
    group.add_argument(
        "--max-repeats",
        type=repeat_count,
        metavar="N",
        help=f"candidate repeats per case at most (suite `max_repeats`; default {MAX_REPEATS})",
    )
    group.add_argument(
        "--max-calls",
        type=positive,
        metavar="N",
        help="samples the whole check may take (cached ones are free); cases still running "
        "then stop, inconclusive unless their interval of change excludes a drop that matters",
    )
    group.add_argument(
        "--max-cost",
        type=money,
        metavar="AMOUNT",
        help="what the whole check's samples may cost at the suite's `target.http.price`, in "
        "its currency (cached ones are free; each call priced as its case's longest answer "
        "so far); cases still running then stop, as with --max-calls",
    )
    _baseline_depth_options(group)


def _baseline_depth_options(group: Any) -> None:
    from noisefloor.settings import BASELINE_REPEATS

    group.add_argument(
        "--baseline-repeats",
        type=repeat_count,
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
        "--max-tokens", type=positive, metavar="N", help="the most tokens an answer may have"
    )
    group.add_argument("--system", metavar="TEXT", help="a system message sent before each input")


def _format(text: str) -> str:
    """A --format value; html is refused at once, before any sampling, without its extra (the
    UsageError goes through argparse, which only catches its own errors)."""
    if text == "html":
        from noisefloor.report.plots import require_plotting

        require_plotting("--format html")
    return text


def html_file(text: str) -> Path:
    """An --html FILE value; refused at once without the `html` extra, as `_format`."""
    from noisefloor.report.plots import require_plotting

    require_plotting("--html")
    return Path(text)


def format_options(parser: argparse.ArgumentParser) -> None:
    from noisefloor.report import formats

    parser.add_argument(
        "--format",
        type=_format,
        choices=formats(),
        default="terminal",
        help="report format (default terminal; html is one self-contained page with plots, "
        "from the `html` extra)",
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="also write the report, in --format, to FILE"
    )


def rule_options(parser: argparse.ArgumentParser) -> None:
    from noisefloor.settings import MIN_EFFECT, RELATIVE_EFFECT, RuleName, RuleSettings

    group = parser.add_argument_group(
        "decision rule", "How a change is judged: the rule, its false-alarm rate and thresholds."
    )
    parser = group  # type: ignore[assignment]
    parser.add_argument(
        "--rule",
        choices=tuple(RuleName),
        help=f"decision rule (default {RuleSettings.rule})",
    )
    alpha_option(parser, "family-wise false-alarm rate per check, rule exact")
    parser.add_argument(
        "--min-effect",
        type=non_negative,
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
        type=non_negative,
        metavar="X",
        help="a pass-rate drop this large that is not significant is inconclusive, while its "
        "95%% interval still reaches min_effect "
        f"(default: the suite's defaults.suspect_drop, else {RuleSettings.suspect_drop:.2f})",
    )
    parser.add_argument(
        "--min-rate-drop",
        type=non_negative,
        metavar="X",
        help=f"rate clause of rule band (default {RuleSettings.min_rate_drop:.2f})",
    )
    min_valid_option(parser, "valid repeats needed per side, rules exact and wilson")
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
        type=non_negative,
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
