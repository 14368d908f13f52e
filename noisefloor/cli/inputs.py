"""From parsed arguments to what the operations take: the suite (a file, or --cases with the
endpoint flags), the command's resolved settings, the store, and the run options.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from noisefloor.errors import UsageError

if TYPE_CHECKING:
    from noisefloor.operations.run import RunOptions
    from noisefloor.report.progress import Progress
    from noisefloor.settings.resolved import Resolved, StoreSettings
    from noisefloor.store.store import ReadOnlyStore, Store
    from noisefloor.suite.model import Suite

# What each input needs (the suite's loader, the store, the kinds) loads when a command asks for it.

__all__ = [
    "load_suite_of",
    "open_store",
    "resolved_of",
    "run_options",
    "store_of",
    "suite_name",
    "suites_store",
    "watched",
]


def resolved_of(args: argparse.Namespace, suite: Suite | None = None) -> Resolved:
    """Every setting of the command: its flags over the environment over the suite's `defaults`
    (none when it reads stored runs only) over the built-in defaults."""
    from noisefloor.settings import JOBS
    from noisefloor.settings.resolved import resolve

    if suite is None:
        return resolve(vars(args), os.environ, None, JOBS)
    from noisefloor.targets.kinds import kind_of

    return resolve(vars(args), os.environ, suite.defaults, kind_of(suite.target).default_jobs)


@overload
def store_of(args: argparse.Namespace, read_only: Literal[True]) -> ReadOnlyStore: ...
@overload
def store_of(args: argparse.Namespace, read_only: bool = False) -> Store: ...
def store_of(args: argparse.Namespace, read_only: bool = False) -> Store:
    """The store at the resolved root: read-only for commands that only read it, else waiting
    the resolved lock timeout for another run of a suite."""
    return open_store(resolved_of(args).store, read_only)


@overload
def open_store(
    where: StoreSettings, read_only: Literal[True], max_age_s: float | None = None
) -> ReadOnlyStore: ...
@overload
def open_store(
    where: StoreSettings, read_only: bool = False, max_age_s: float | None = None
) -> Store: ...
def open_store(
    where: StoreSettings, read_only: bool = False, max_age_s: float | None = None
) -> Store:
    """The store `where` says: read-only, or waiting its lock timeout for another run; the
    working copy of a remote when one is set (`max_age_s`: a baseline older is warned of)."""
    from noisefloor.store.store import ReadOnlyStore, Store

    if read_only:
        return ReadOnlyStore(where.root)
    if where.remote is None:
        return Store(where.root, where.lock_timeout_s)
    from noisefloor.store.branches import Branch, branches_of
    from noisefloor.store.mirrored import MirroredStore
    from noisefloor.store.remote_url import open_remote

    named = where.baseline_branch
    branches = branches_of(
        os.environ,
        os.getcwd(),
        branch=where.branch,
        baseline_branch=Branch(named, where.baseline_branch_why) if named else None,
        suite_default=where.default_branch,
    )
    remote = open_remote(where.remote)
    if not where.remote.startswith("file:"):  # (a shared directory's writes are this package's)
        from pathlib import Path

        from noisefloor.store.remote_trust import Trusted

        remote = Trusted(remote, Path(where.root) / "remotes.json", where.remote_writes)
    return MirroredStore(where.root, remote, branches, where.lock_timeout_s, max_age_s=max_age_s)


def run_options(args: argparse.Namespace, resolved: Resolved) -> tuple[RunOptions, Progress]:
    """How a sampling command samples, with its progress on stderr."""
    from noisefloor.executors import executor_of
    from noisefloor.operations.run import RunOptions

    opts = RunOptions(
        repeats=resolved.design.fixed_repeats,
        jobs=resolved.sampling.jobs,
        executor=executor_of(resolved.sampling.executor),
        fresh=resolved.sampling.fresh,
        label=getattr(args, "label", None),
        replace=getattr(args, "replace", False),
        set_baseline=getattr(args, "set_baseline", False),
    )
    return opts, watched(opts)


def watched(opts: RunOptions) -> Progress:
    """Progress of a run's sampling on stderr, never in a report: a live line on a terminal,
    plain lines in a log."""
    from noisefloor.report.progress import Progress

    progress = Progress(live=sys.stderr.isatty())
    opts.on_start, opts.on_call, opts.on_sample = progress.start, progress.begin, progress.advance
    return progress


def load_suite_of(args: argparse.Namespace) -> Suite:
    """The suite of a sampling command: a suite file, or --cases with the endpoint flags."""
    from noisefloor.suite.load import cases_suite, load_suite
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
        from noisefloor.suite.load import load_suite

        return load_suite(Path(suite)).name
    return suite


def suites_store(args: argparse.Namespace, suites: list[str]) -> tuple[Store, list[str]]:
    """The store of a command given suites (their names or files), and their names: the remote
    a suite file's `defaults.remote` names is honoured, under --remote and NOISEFLOOR_REMOTE.

    Raises:
        UsageError: The suite files name different remotes.
    """
    from noisefloor.suite.load import load_suite

    files = [load_suite(Path(s)) for s in suites if os.path.isfile(s)]
    named = {f.defaults.remote: f for f in files if f.defaults.remote}
    if len(named) > 1:
        raise UsageError(
            "the suites name different remotes in `defaults.remote`: "
            + ", ".join(f"{f.path.name}: {url}" for url, f in named.items()),
            hint="give the suites of one remote at a time, or name one with --remote URL",
        )
    store = open_store(resolved_of(args, next(iter(named.values()), None)).store)
    return store, [suite_name(s) or s for s in suites]
