"""The commands of the store itself: `store`, `ledger`, `runs`, `show` and `import`, each with
its arguments and its handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from noisefloor.cli.inputs import store_of, suite_name, suites_store
from noisefloor.cli.options import global_options
from noisefloor.cli.output import emit, screen_of
from noisefloor.cli.remote_options import branch_option, remote_options
from noisefloor.cli.usage import Parser
from noisefloor.errors import ExitCode, NoisefloorError, UsageError

# Each handler imports its operation when it runs: `--help` and the other commands load none of it.

__all__ = [
    "cmd_import",
    "cmd_ledger",
    "cmd_runs",
    "cmd_show",
    "cmd_store",
    "import_parser",
    "ledger_parser",
    "runs_parser",
    "show_parser",
    "store_parser",
]


def store_parser(p: argparse.ArgumentParser) -> None:
    ssub = p.add_subparsers(
        dest="store_command", metavar="ACTION", parser_class=Parser, required=True
    )
    q = ssub.add_parser(
        "verify",
        help="read every file of the store; report each corrupt one and what fixes it",
        description="Read every file of the store as the commands read it, and report each "
        "one that is corrupt (cut, emptied, garbage, of another shape, or no file at all): "
        "where it is, its kind, what is wrong and what fixes it. Exits 0 when the store is "
        "sound, 3 when something is wrong (after --repair: when something is left).",
    )
    global_options(q, top=False)
    q.add_argument(
        "--repair",
        action="store_true",
        help="delete what is rebuilt or retaken (derived files, doit's database, corrupt "
        "samples, stale temporary files), rebuild the ledger, and rewrite .gitignore; "
        "baselines, runs, labels and epochs are reported with the command that fixes them",
    )
    q.add_argument(
        "--format", choices=("terminal", "json"), default="terminal", help="default terminal"
    )
    q.add_argument(
        "--remote",
        nargs="?",
        const="",
        metavar="URL",
        help="read the remote instead of the local store, where it lies (nothing is copied "
        "here): URL, or without one the remote NOISEFLOOR_REMOTE names. Each sample, run "
        "record, manifest and pointer must parse, each run's samples be there, each pack "
        "agree with them, each pointer name a run there",
    )

    q = ssub.add_parser(
        "push",
        help="push every run and baseline of the local store to the remote",
        description="Push every run of the local store (a committed .noisefloor/ too; of the "
        "suites named, when any is) to the remote, each sample, manifest and run record only if "
        "the remote lacks it, then point the branch's baseline pointers at the local baselines "
        "(moved only from the version read: exit 3, naming who moved one, when another runner "
        "did). A suite file's `defaults.remote` names the remote, under --remote and "
        "NOISEFLOOR_REMOTE. The local store is left as it was.",
    )
    global_options(q, top=False)
    q.add_argument(
        "suites", nargs="*", metavar="SUITE", help="only these suites (their names or files)"
    )
    remote_options(q)
    branch_option(
        q, "the branch whose pointers move (default: the current branch, else main)", "branch"
    )
    q = ssub.add_parser(
        "pull",
        help="fetch suites' baselines (or, with --all, everything) from the remote",
        description="Fetch each named suite's baseline from the remote (the branch a check "
        "compares with), its run record and its samples, and point the local store at it: a "
        "store that then works with --offline, or is committed. --all first copies every object "
        "the remote holds, listing it (never done on a check's path). A suite file's "
        "`defaults.remote` names the remote, under --remote and NOISEFLOOR_REMOTE.",
    )
    global_options(q, top=False)
    q.add_argument("suites", nargs="*", metavar="SUITE", help="suite names or files")
    q.add_argument("--all", action="store_true", help="copy every object of the remote")
    remote_options(q)
    branch_option(
        q, "the branch whose baselines to fetch (default: as a check's)", "baseline_branch"
    )


def ledger_parser(p: argparse.ArgumentParser) -> None:
    lsub = p.add_subparsers(
        dest="ledger_command", metavar="ACTION", parser_class=Parser, required=True
    )
    q = lsub.add_parser("rebuild", help="rebuild the ledger from the JSON sample and run files")
    global_options(q, top=False)


def runs_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", nargs="?", help="only runs of this suite (its name or its file)")
    p.add_argument(
        "--format", choices=("terminal", "json"), default="terminal", help="default terminal"
    )


def show_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument("--case", metavar="ID", help="only this case")


def import_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source", type=Path, nargs="?", metavar="DIR", help="the public tool's store root"
    )
    p.add_argument(
        "--suite",
        type=Path,
        help="the suite file those runs were taken of (with --inspect: optional, the suite of "
        "the task whose logs they are; default: one named after the task)",
    )
    p.add_argument(
        "--inspect",
        type=Path,
        nargs="+",
        metavar="LOG",
        help="Inspect AI logs (.eval or .json) to import instead, each as a run: its samples "
        "the cases, its epochs the repeats (needs the `inspect` extra)",
    )
    p.add_argument("--label", metavar="L", help="with --inspect: label the imported runs")


def cmd_store(args: argparse.Namespace) -> int:
    from noisefloor.operations.verify import verify_store
    from noisefloor.report.verify import render

    if args.store_command in ("push", "pull"):
        return _sync(args)
    if args.remote is not None:
        return _verify_remote(args)
    found = verify_store(store_of(args), repair=args.repair)
    emit(render(found, args.format, args.repair), args)
    return int(ExitCode.HARNESS) if found.left else 0


def _verify_remote(args: argparse.Namespace) -> int:
    from noisefloor.operations.remote_verify import verify_remote
    from noisefloor.report.verify import render
    from noisefloor.store.mirrored import MirroredStore

    if args.repair:
        raise UsageError(
            "store verify --repair mends the local store, not a remote",
            hint="drop --remote to repair the local store; a remote's objects are fixed as "
            "each problem's line says",
        )
    store = store_of(args)
    if not isinstance(store, MirroredStore):
        raise NoisefloorError(
            "store verify --remote needs a remote, and none is set",
            hint="pass --remote URL, or set NOISEFLOOR_REMOTE",
        )
    found = verify_remote(store)
    emit(render(found, args.format, False), args)
    return int(ExitCode.HARNESS) if found.left else 0


def _sync(args: argparse.Namespace) -> int:
    from noisefloor.operations.sync import pull_store, push_store
    from noisefloor.store.mirrored import MirroredStore

    store, suites = suites_store(args, args.suites)
    if not isinstance(store, MirroredStore):
        raise NoisefloorError(
            f"store {args.store_command} needs a remote, and none is set",
            hint="pass --remote URL, set NOISEFLOOR_REMOTE, or name a suite file whose "
            "defaults.remote names one",
        )
    if args.store_command == "push":
        pushed = push_store(store, suites)
        print(
            f"pushed to {store.remote.url}: {pushed.runs} run(s) new there, "
            f"{pushed.objects} object(s) written"
        )
        for suite, run_id in pushed.pointers:
            print(f"  {suite}: {run_id} (branch {store.branches.write})")
        for note in store.notes:
            print(f"warning: {note}", file=sys.stderr)
        return 0
    pulled = pull_store(store, suites, args.all)
    print(f"pulled from {store.remote.url}: {pulled.objects} object(s) copied")
    for pointer in pulled.baselines:
        print(f"  {pointer.suite}: {pointer.run_id}")
    if not pulled.baselines and not args.all:
        raise NoisefloorError(
            f"no baseline of {', '.join(args.suites) or 'any suite'} in {store.remote.url} "
            f"on branch {', '.join(store.branches.read)}",
            hint="name the suites to pull (their names or files), or --baseline-branch",
        )
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


def cmd_runs(args: argparse.Namespace) -> int:
    from noisefloor.operations.runs import run_rows
    from noisefloor.report.runs import render_runs

    rows = run_rows(store_of(args, read_only=True), suite_name(args.suite))
    if args.format == "json":
        from noisefloor.report.json import render

        emit(render(rows), args)
    else:
        emit(render_runs(rows, screen_of(sys.stdout)), args)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from noisefloor.operations.resolve import resolve_run
    from noisefloor.operations.show import run_outputs
    from noisefloor.report.show import render_show

    store = store_of(args, read_only=True)
    run = resolve_run(store, args.run) if args.run else store.latest_run()
    if run is None:
        raise NoisefloorError(f"no runs under {store.root}")
    emit(render_show(run_outputs(store, run, args.case)), args)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from noisefloor.operations.importer import import_store
    from noisefloor.suite.load import load_suite

    if args.inspect:
        return _import_inspect(args)
    if args.source is None or args.suite is None or args.label is not None:
        raise UsageError(
            "import takes a store DIR with --suite SUITE, or --inspect LOG...",
            hint="noisefloor import DIR --suite SUITE.yaml, or noisefloor import --inspect "
            "a.eval [--label L]",
        )
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
    emit("\n".join(out) + "\n", args)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _import_inspect(args: argparse.Namespace) -> int:
    from noisefloor.operations.inspect_import import import_logs
    from noisefloor.suite.load import load_suite

    if args.source is not None:
        raise UsageError(
            f"import --inspect takes log files, not a store directory ({args.source})",
            hint="noisefloor import --inspect a.eval b.eval [--suite SUITE.yaml] [--label L]",
        )
    suite = load_suite(args.suite) if args.suite is not None else None
    result = import_logs(store_of(args), list(args.inspect), suite, args.label)
    out = [
        f"imported {len(result.imported)} Inspect log(s) as runs of {result.suite!r} "
        f"({result.samples} samples, no target calls)"
    ]
    for run in result.imported:
        repeats = "/".join(str(n) for n in sorted({c.repeats for c in run.cases}))
        out.append(f"  {run.run_id}  {len(run.cases)} cases x {repeats} epochs")
    if result.already:
        out.append(f"already imported, left alone: {', '.join(result.already)}")
    if args.label:
        out.append(f"label: {args.label}")
    emit("\n".join(out) + "\n", args)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
