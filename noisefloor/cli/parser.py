"""The command line: every subcommand with its help, and the arguments of each; one invocation
builds the arguments of its own command alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from noisefloor import __version__
from noisefloor.cli.options import (
    Parser,
    alpha_option,
    executor_option,
    format_options,
    global_options,
    html_file,
    jobs_option,
    lock_timeout_option,
    positive,
    probability,
    repeat_count,
    repeats_option,
    rule_options,
    run_options,
    sampling_options,
    sequential_options,
)

__all__ = ["build_parser", "command_named"]


def _run(p: argparse.ArgumentParser) -> None:
    run_options(p)
    format_options(p)


def _record(p: argparse.ArgumentParser) -> None:
    run_options(p, label_required=True)


_EXIT_CODES = """exit codes:
  0    nothing regressed
  1    a case regressed (with --strict, also an inconclusive one)
  2    a case is broken: the target no longer produces valid results
  3    the harness, its configuration or its invocation is wrong
  130  interrupted by Ctrl-C (SIGINT); finished samples are kept
  143  stopped by SIGTERM; finished samples are kept
"""


def _check(p: argparse.ArgumentParser) -> None:
    run_options(p)
    rule_options(p)
    format_options(p)
    p.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 3 instead of adopting when there is no baseline",
    )
    sequential_options(p)
    p.add_argument(
        "--adopt",
        action="store_true",
        help="with CI set in the environment, adopt this run when there is no baseline "
        "(without CI, a first check adopts anyway)",
    )


def _ab(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("suite", type=Path, help="the suite file (YAML), inside a git work tree")
    p.add_argument(
        "--baseline-ref",
        required=True,
        metavar="REF",
        help="the baseline arm: a commit, branch or tag (e.g. HEAD, main, HEAD~1)",
    )
    repeats_option(p, "repeats per case and arm, a fixed design (default: sequential)")
    sampling_options(p)
    rule_options(p)
    format_options(p)
    sequential_options(p)


def _rescore(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", type=Path, help="the suite file whose scorers to apply")
    p.add_argument(
        "run",
        nargs="?",
        help="run id (default: the suite's newest run that sampled its target, not a re-scoring)",
    )
    format_options(p)


def _diff(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "candidate",
        nargs="?",
        help="run id or label (default: the newest run that sampled its target, not a re-scoring; name a `rescore`'s run to compare it)",
    )
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to compare against (default: the suite's baseline)",
    )
    rule_options(p)
    format_options(p)


def _report(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run",
        nargs="?",
        help="run id or label (default: the newest run that sampled its target, not a re-scoring; name a `rescore`'s run to report it)",
    )
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to compare against (default: the suite's baseline)",
    )
    p.add_argument(
        "--html",
        type=html_file,
        required=True,
        metavar="FILE",
        help="write the report here (one self-contained page; needs the `html` extra)",
    )
    rule_options(p)


def _baseline(p: argparse.ArgumentParser) -> None:
    from noisefloor.settings import BASELINE_REPEATS

    bsub = p.add_subparsers(
        dest="baseline_command", metavar="ACTION", parser_class=Parser, required=True
    )
    q = bsub.add_parser("set", help="point the run's suite at this run")
    global_options(q, top=False)
    q.add_argument("run", help="run id or label")
    q = bsub.add_parser("show", help="list every suite's baseline")
    global_options(q, top=False)
    q = bsub.add_parser(
        "deepen",
        help="top the baseline up to N repeats per case, on the baseline's own target version",
        description="Take more samples of the baseline's target version (the code as it is "
        "must be that version), so that checks compare against a deep baseline. Never touches "
        "a candidate.",
    )
    global_options(q, top=False)
    q.add_argument("suite", type=Path, help="the suite file")
    repeats_option(
        q,
        f"repeats per case to reach (default: the suite's `baseline_repeats`, else "
        f"{BASELINE_REPEATS})",
    )
    jobs_option(q, "default 8 for an endpoint, 1 for a command")
    executor_option(q)
    lock_timeout_option(q)


def _runs(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", nargs="?", help="only runs of this suite (its name or its file)")
    p.add_argument(
        "--format", choices=("terminal", "json"), default="terminal", help="default terminal"
    )


def _show(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument("--case", metavar="ID", help="only this case")


def _schema(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        action="store_true",
        help="print the JSON Schema of the JSON report (`--format json`) instead",
    )


def _compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", required=True, metavar="LABEL", help="label of the baseline run")
    p.add_argument("--current", required=True, metavar="LABEL", help="label of the current run")
    p.add_argument("--suite", metavar="NAME", help="the suite, when a label exists in several")
    rule_options(p)
    format_options(p)


def _history(p: argparse.ArgumentParser) -> None:
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


def _explain(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="the case id")
    p.add_argument(
        "run",
        nargs="?",
        help="run id or label (default: the newest run holding the case that sampled its "
        "target, not a re-scoring)",
    )
    p.add_argument("--suite", metavar="NAME", help="only runs of this suite (its name or its file)")
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


def _ledger(p: argparse.ArgumentParser) -> None:
    lsub = p.add_subparsers(
        dest="ledger_command", metavar="ACTION", parser_class=Parser, required=True
    )
    q = lsub.add_parser("rebuild", help="rebuild the ledger from the JSON sample and run files")
    global_options(q, top=False)


def _store(p: argparse.ArgumentParser) -> None:
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


def _import(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", type=Path, metavar="DIR", help="the public tool's store root")
    p.add_argument(
        "--suite", type=Path, required=True, help="the suite file those runs were taken of"
    )


def _plan(p: argparse.ArgumentParser) -> None:
    from noisefloor.settings import BASELINE_REPEATS, MAX_REPEATS, REPEATS

    p.add_argument("suite", nargs="?", type=Path, help="take N and the case count from this suite")
    repeats_option(p, f"repeats per side (default: the suite's, else {REPEATS})")
    p.add_argument(
        "--cases",
        type=positive,
        metavar="M",
        help="cases that can fail (default: the suite's, else 50)",
    )
    alpha_option(p, "family-wise false-alarm rate")
    p.add_argument(
        "--power",
        type=probability,
        default=0.8,
        help="power for the repeats-needed table (default 0.8)",
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


def _scorers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "suite",
        type=Path,
        nargs="?",
        help="a suite file: its plugins' scorers are listed too, with the file they come from",
    )


#: Each command: its help, its description (default: the help) and what adds its arguments.
_COMMANDS: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = {
    "run": ("sample every case (cached samples are reused) and save the run", "", _run),
    "check": ("run, then compare with the baseline and exit with the verdict", "", _check),
    "ab": (
        "sample a git ref and the working tree interleaved, then judge as check does",
        "Check REF out in a temporary git worktree and sample its target and the working tree's\n"
        "interleaved (REF, working tree, REF, ...), so drift hits both alike; then judge as check.",
        _ab,
    ),
    "rescore": (
        "re-apply the suite's current scorers to a stored run; never calls the target",
        "",
        _rescore,
    ),
    "diff": ("compare stored runs; never calls the target", "", _diff),
    "report": (
        "compare a stored run with its suite's baseline (or --baseline) and write the HTML report; "
        "never calls the target",
        "",
        _report,
    ),
    "baseline": ("move or list the baseline pointers", "", _baseline),
    "runs": (
        "the stored runs, newest first: ids, labels, target versions, baselines",
        "",
        _runs,
    ),
    "show": ("the stored outputs of a run, stderr included", "", _show),
    "scorers": ("the table of scorers (a suite's own too, given the suite)", "", _scorers),
    "schema": ("the JSON Schema of suite files (or of the JSON report)", "", _schema),
    "record": (
        "the quarantine-lane `record`: run a suite and label the run",
        "",
        _record,
    ),
    "compare": (
        "the quarantine-lane `compare`: two labelled runs, judged as `check` judges",
        "The default rule is exact, as check's: a significant drop regresses even when the "
        "repeats of a label disagree. The design's triage table is --rule wilson. Under every "
        "rule, a case whose repeats disagree within a label is marked [quarantine: ...], as "
        "information.",
        _compare,
    ),
    "history": (
        "a case across stored runs, and its flakiness; or a suite's runs over time as an HTML page",
        "Each run's pass rate with its 95% Wilson interval, newest first, and the case's "
        "flakiness: the pass rate pooled over the newest runs of the current target version "
        "(each sample once). Read from the ledger; never calls the target.",
        _history,
    ),
    "explain": (
        "what the target said differently in one case: its distinct outputs on both sides, "
        "a diff, and which scorer failed on which repeat; never calls the target",
        "",
        _explain,
    ),
    "ledger": ("the SQLite ledger that indexes every sample", "", _ledger),
    "store": ("check the store's files, and repair what can be rebuilt or retaken", "", _store),
    "import": (
        "read a store written by the public noisefloor; never calls the target",
        "",
        _import,
    ),
    "plan": (
        "minimum detectable change and repeats needed, for N, case count and alpha",
        "",
        _plan,
    ),
}


def command_named(argv: list[str]) -> str | None:
    """The command `argv` runs, read as the top-level parser reads it; None when unsure.

    Args:
        argv: The command-line arguments.

    Returns:
        The first argument that is neither an option nor `--root`'s value (which argparse also
        takes from any prefix of `--root` of three letters or more), when it names a command;
        "" when it names none (`--help`, `--version`, an unknown command); None after `--`.
    """
    value = False
    for arg in argv:
        if value:
            value = False
        elif arg == "--":
            return None
        elif arg.startswith("--r") and "--root".startswith(arg):
            value = True
        elif not arg.startswith("-"):
            return arg if arg in _COMMANDS else ""
    return ""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; given `only`, a command's name, only that command's arguments are added
    ("" adds none: the top-level `--help` lists every command's name and help either way).
    """
    parser = Parser(
        prog="noisefloor",
        description="A regression gate for programs that don't give the same answer twice.",
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"noisefloor {__version__}")
    global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (help_text, description, arguments) in _COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=description or help_text)
        if only in (None, name):
            global_options(p, top=False)
            arguments(p)
    return parser
