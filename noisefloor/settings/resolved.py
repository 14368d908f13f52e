"""The settings of one command, resolved once at the edge: a flag, else its variable, else the
suite's `defaults`, else the built-in default; operations get them typed, none left to decide.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from noisefloor.errors import UsageError
from noisefloor.settings import (
    BASELINE_REPEATS,
    EXECUTOR,
    JOBS,
    LOCK_TIMEOUT_S,
    MAX_REPEATS,
    REMOTE_WRITES,
    STORE_ROOT,
    RuleSettings,
    resolve_settings,
)
from noisefloor.settings.design import Design, Fixed, Sequential

__all__ = [
    "Resolved",
    "SamplingSettings",
    "StoreSettings",
    "parse_age",
    "parse_jobs",
    "parse_seconds",
    "resolve",
]

#: The flags of the rule settings (`RuleSettings`), under their field names.
RULE_FLAGS = (
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

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class StoreSettings:
    """Where the store is, how long a run waits for another run of its suite there, and the
    remote it is the working copy of, with the branches of its baseline pointers."""

    root: str
    lock_timeout_s: float
    remote: str | None = None
    """The remote's URL; None without one, or with --offline."""
    branch: str | None = None
    """The branch whose pointer moves (--branch); None: the current branch."""
    baseline_branch: str | None = None
    """The branch a check compares with (--baseline-branch, else the CI's target branch of a
    pull or merge request); None: the current branch's baseline, else the default branch's."""
    baseline_branch_why: str = ""
    """Where `baseline_branch` came from, as a report says it."""
    remote_writes: str = REMOTE_WRITES
    """`conditional`, or `single-writer` for a server that ignores conditional writes
    (NOISEFLOOR_REMOTE_WRITES, else the suite's `defaults.remote_writes`)."""
    default_branch: str | None = None
    """The branch whose baseline a check falls back to, and whose pointer moves when git names
    no branch: the suite's `defaults.default_branch`; None: the repository's
    (`store.branches.default_branch`, where NOISEFLOOR_DEFAULT_BRANCH wins)."""


@dataclass(frozen=True)
class SamplingSettings:
    """How the target is called: calls at once, where, and whether cached samples count."""

    jobs: int
    executor: str
    """`local`, or a Dask scheduler as `dask://HOST:PORT` (checked by `executors.executor_of`)."""
    fresh: bool


@dataclass(frozen=True)
class Resolved:
    """Every setting of one command, each default decided."""

    rule: RuleSettings
    design: Design
    sampling: SamplingSettings
    store: StoreSettings


def parse_age(text: str) -> float:
    """Seconds in a duration such as `90m`, `12h`, `7d` or `2w`."""
    match = _AGE.match(text)
    if match is None:
        raise UsageError(
            f"--baseline-max-age {text!r} is not a duration",
            hint="a number and a unit: s, m, h, d or w (e.g. 12h, 7d)",
        )
    return float(match[1]) * _UNITS[match[2]]


def parse_whole(text: str) -> int:
    """A whole number of at least 1.

    Raises:
        ValueError: With what is wrong, as a flag's error says it.
    """
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def parse_jobs(text: str) -> int:
    """A --jobs value: a whole number, or `auto` for one per core this process may use.

    Raises:
        ValueError: With what is wrong.
    """
    if text == "auto":
        if hasattr(os, "sched_getaffinity"):
            return len(os.sched_getaffinity(0))
        return os.cpu_count() or 1
    return parse_whole(text)


def parse_seconds(text: str) -> float:
    """A number of seconds, at least 0.

    Raises:
        ValueError: With what is wrong.
    """
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number, got {text!r}") from None
    if not value >= 0:  # nan too
        raise ValueError(f"must be >= 0, got {value}")
    return value


def resolve(
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    suite_defaults: object = None,
    target_jobs: int = JOBS,
) -> Resolved:
    """Every setting of one command: a flag given (not None), else its environment variable,
    else the suite's `defaults`, else the built-in default.

    Args:
        flags: The parsed flags by name; a flag the command has not is left to the defaults.
        environ: The environment (NOISEFLOOR_ROOT, NOISEFLOOR_LOCK_TIMEOUT, NOISEFLOOR_JOBS,
            NOISEFLOOR_EXECUTOR, NOISEFLOOR_REMOTE, NOISEFLOOR_DEFAULT_BRANCH, and the CI's
            GITHUB_BASE_REF or CI_MERGE_REQUEST_TARGET_BRANCH_NAME).
        suite_defaults: The suite's `defaults`; None when the command reads stored runs only.
        target_jobs: Target calls at once that the suite's target kind suits.

    Raises:
        UsageError: A flag's or a variable's value is not one the setting takes.
    """
    rule = resolve_settings({name: flags.get(name) for name in RULE_FLAGS}, suite_defaults)
    remote = None if flags.get("offline") else _remote(flags, environ, suite_defaults)
    for flag in ("branch", "baseline_branch"):
        if remote is None and flags.get(flag):
            raise UsageError(
                f"--{flag.replace('_', '-')} names a branch of a remote's baseline pointers, "
                "and no remote is set" + (" (--offline)" if flags.get("offline") else ""),
                hint="pass --remote URL, or set NOISEFLOOR_REMOTE (or the suite's "
                "defaults.remote); a local store keeps one baseline per suite",
            )
    return Resolved(
        rule=rule,
        design=_design(flags, suite_defaults),
        sampling=SamplingSettings(
            jobs=_jobs(flags.get("jobs"), environ, target_jobs),
            executor=flags.get("executor") or environ.get("NOISEFLOOR_EXECUTOR") or EXECUTOR,
            fresh=bool(flags.get("fresh")),
        ),
        store=StoreSettings(
            root=flags.get("root") or environ.get("NOISEFLOOR_ROOT") or STORE_ROOT,
            lock_timeout_s=_lock_timeout(flags.get("lock_timeout"), environ),
            remote=remote,
            branch=flags.get("branch"),
            **_baseline_branch(flags, environ),
            remote_writes=_remote_writes(environ, suite_defaults),
            default_branch=getattr(suite_defaults, "default_branch", None),
        ),
    )


def _baseline_branch(flags: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """The branch a check compares with when one is named, and by what."""
    for value, why in (
        (flags.get("baseline_branch"), "--baseline-branch"),
        (
            environ.get("GITHUB_BASE_REF"),
            "the branch the pull request merges into (GITHUB_BASE_REF)",
        ),
        (
            environ.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
            "the branch the merge request merges into (CI_MERGE_REQUEST_TARGET_BRANCH_NAME)",
        ),
    ):
        if value:
            return {"baseline_branch": str(value), "baseline_branch_why": why}
    return {}


def _remote_writes(environ: Mapping[str, str], suite_defaults: object) -> str:
    value = environ.get("NOISEFLOOR_REMOTE_WRITES") or getattr(
        suite_defaults, "remote_writes", None
    )
    if not value:
        return REMOTE_WRITES
    if value not in ("conditional", "single-writer"):
        raise UsageError(
            f"NOISEFLOOR_REMOTE_WRITES {value!r} is not a mode of a remote's writes",
            hint="conditional (the default: the server must honour conditional writes) or "
            "single-writer (a server that does not, written by one writer at a time)",
        )
    return str(value)


def _remote(
    flags: Mapping[str, Any], environ: Mapping[str, str], suite_defaults: object
) -> str | None:
    url = (
        flags.get("remote")
        or environ.get("NOISEFLOOR_REMOTE")
        or getattr(suite_defaults, "remote", None)
    )
    return str(url) if url else None


def _design(flags: Mapping[str, Any], suite_defaults: object) -> Design:
    def pick(name: str, default: Any) -> Any:
        flag = flags.get(name)
        if flag is not None:
            return flag
        own = getattr(suite_defaults, name, None)
        return own if own is not None else default

    repeats, age = flags.get("repeats"), pick("baseline_max_age", None)
    return Design(
        candidate=Fixed(repeats) if repeats is not None else Sequential(),
        max_repeats=pick("max_repeats", MAX_REPEATS),
        max_calls=flags.get("max_calls"),
        max_cost=flags.get("max_cost"),
        baseline_repeats=pick("baseline_repeats", BASELINE_REPEATS),
        baseline_max_age_s=parse_age(age) if age is not None else None,
    )


def _jobs(flag: int | None, environ: Mapping[str, str], target_jobs: int) -> int:
    if flag is not None:
        return flag
    text = environ.get("NOISEFLOOR_JOBS")
    if not text:
        return target_jobs
    try:
        return parse_jobs(text)
    except ValueError as exc:
        raise UsageError(
            f"NOISEFLOOR_JOBS: {exc}",
            hint="set it to a whole number of target calls at once, or to auto; or unset it",
        ) from None


def _lock_timeout(flag: float | None, environ: Mapping[str, str]) -> float:
    if flag is not None:
        return flag
    text = environ.get("NOISEFLOOR_LOCK_TIMEOUT")
    if not text:
        return LOCK_TIMEOUT_S
    try:
        return parse_seconds(text)
    except ValueError:
        raise UsageError(
            f"NOISEFLOOR_LOCK_TIMEOUT must be a number of seconds >= 0, got {text!r}",
            hint=f"unset it for the default ({LOCK_TIMEOUT_S:g}), or pass --lock-timeout SECONDS",
        ) from None
