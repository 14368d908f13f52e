"""From parsed arguments to what the operations take: the suite (a file, or --cases with the
endpoint flags), the store, the rule settings, a check's design, and the run options.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.errors import UsageError

if TYPE_CHECKING:
    from noisefloor.settings import RuleSettings

__all__ = [
    "check_design",
    "jobs_of",
    "load_suite_of",
    "rule_settings",
    "run_options",
    "store_of",
    "suite_name",
    "watched",
]


def rule_settings(args: argparse.Namespace, suite: Any = None) -> RuleSettings:
    """The rule settings: flags first, then the suite's `defaults`, then the built-in ones."""
    from noisefloor.settings import resolve_settings

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


def check_design(args: argparse.Namespace, suite: Any) -> Any:
    """A check's sequential design and deep baseline: flags first, then the suite's
    `defaults`, then the built-in ones."""
    from noisefloor.rules.sequential import Design
    from noisefloor.settings import BASELINE_REPEATS, MAX_REPEATS
    from noisefloor.store.pool import parse_age

    defaults = suite.defaults

    def pick(name: str, default: Any) -> Any:
        flag = getattr(args, name, None)
        if flag is not None:
            return flag
        own = getattr(defaults, name, None)
        return own if own is not None else default

    age = pick("baseline_max_age", None)
    return Design(
        max_repeats=pick("max_repeats", MAX_REPEATS),
        max_calls=args.max_calls,
        max_cost=args.max_cost,
        baseline_repeats=pick("baseline_repeats", BASELINE_REPEATS),
        baseline_max_age_s=parse_age(age) if age is not None else None,
    )


def store_of(args: argparse.Namespace, read_only: bool = False) -> Any:
    from noisefloor.store.store import ReadOnlyStore, Store

    root = args.root or os.environ.get("NOISEFLOOR_ROOT") or ".noisefloor"
    if read_only:
        return ReadOnlyStore(root)
    return Store(root, lock_timeout_of(args))


def lock_timeout_of(args: argparse.Namespace) -> float:
    """How long a run waits for the store: --lock-timeout, else NOISEFLOOR_LOCK_TIMEOUT, else
    the store's default."""
    from noisefloor.cli.options import non_negative
    from noisefloor.store.store import LOCK_TIMEOUT_S

    flag = getattr(args, "lock_timeout", None)
    if flag is not None:
        return float(flag)
    text = os.environ.get("NOISEFLOOR_LOCK_TIMEOUT")
    if not text:
        return LOCK_TIMEOUT_S
    try:
        return non_negative(text)  # the flag's own check
    except argparse.ArgumentTypeError:
        raise UsageError(
            f"NOISEFLOOR_LOCK_TIMEOUT must be a number of seconds >= 0, got {text!r}",
            hint="unset it for the default (600), or pass --lock-timeout SECONDS",
        ) from None


def jobs_of(args: argparse.Namespace, suite: Any) -> int:
    """Target calls at once: --jobs, else NOISEFLOOR_JOBS, else what the suite's target suits."""
    if args.jobs is not None:
        return int(args.jobs)
    env = os.environ.get("NOISEFLOOR_JOBS")
    if env:
        from noisefloor.cli.options import jobs

        try:
            return jobs(env)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(
                f"NOISEFLOOR_JOBS: {exc}",
                hint="set it to a whole number of target calls at once, or to auto; or unset it",
            ) from None
    from noisefloor.targets.kinds import kind_of

    return kind_of(suite.target).default_jobs


def run_options(args: argparse.Namespace, suite: Any) -> Any:
    from noisefloor.executors import executor_of
    from noisefloor.operations.run import RunOptions

    opts = RunOptions(
        repeats=args.repeats,
        jobs=jobs_of(args, suite),
        executor=executor_of(args.executor),
        fresh=args.fresh,
        label=args.label,
        replace=args.replace,
        set_baseline=args.set_baseline,
    )
    return opts, watched(opts)


def watched(opts: Any) -> Any:
    """Progress of a run's sampling on stderr, never in a report: a live line on a terminal,
    plain lines in a log."""
    from noisefloor.report.progress import Progress

    progress = Progress(live=sys.stderr.isatty())
    opts.on_start, opts.on_call, opts.on_sample = progress.start, progress.begin, progress.advance
    return progress


def load_suite_of(args: argparse.Namespace) -> Any:
    """The suite of a sampling command: a suite file, or --cases with the endpoint flags."""
    from noisefloor.suite.suite import cases_suite, load_suite
    from noisefloor.targets.endpoint_flags import EndpointFlags

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
        import dataclasses

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


def suite_name(suite: str | None) -> str | None:
    """A suite named by its name or by its file (`--suite` of `runs`, `history`, `explain`)."""
    if suite is not None and os.path.isfile(suite):
        from noisefloor.suite.suite import load_suite

        return load_suite(Path(suite)).name
    return suite
