"""The command line's arguments: every subcommand with its flags and their help (the shared
groups in cli_options); usage errors raise (exit 3) instead of argparse's exit 2.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import NoReturn

from noisefloor import __version__
from noisefloor.cli_options import (
    add_alpha_option,
    add_executor_option,
    add_format_options,
    add_global_options,
    add_repeats_option,
    add_rule_options,
    add_run_options,
    add_sampling_options,
    add_sequential_options,
    html_file,
    positive,
    probability,
)
from noisefloor.errors import UsageError
from noisefloor.settings import (
    BASELINE_REPEATS,
    HISTORY_RUNS,
    MAX_REPEATS,
    REPEATS,
)

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error, our "broken": raise instead, mapped to 3."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"`{self.prog} --help` lists the options")


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
    add_global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_text: str, description: str = "") -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=description or help_text)
        add_global_options(p, top=False)
        return p

    p = command("run", "sample every case (cached samples are reused) and save the run")
    add_run_options(p)
    add_format_options(p)
    p = command("check", "run, then compare with the baseline and exit with the verdict")
    add_run_options(p)
    add_rule_options(p)
    add_format_options(p)
    p.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 3 instead of adopting when there is no baseline",
    )
    add_sequential_options(p)
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
    add_repeats_option(p, "repeats per case and arm, a fixed design (default: sequential)")
    add_sampling_options(p)
    add_rule_options(p)
    add_format_options(p)
    add_sequential_options(p)
    p = command(
        "rescore", "re-apply the suite's current scorers to a stored run; never calls the target"
    )
    p.add_argument("suite", type=Path, help="the suite file whose scorers to apply")
    p.add_argument("run", nargs="?", help="run id (default: the suite's newest run)")
    add_format_options(p)
    p = command("diff", "compare stored runs; never calls the target")
    p.add_argument("candidate", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument(
        "--baseline",
        metavar="RUN|LABEL",
        help="the run to compare against (default: the suite's baseline)",
    )
    add_rule_options(p)
    add_format_options(p)
    p = command(
        "report",
        "compare a stored run with its suite's baseline and write the HTML report; "
        "never calls the target",
    )
    p.add_argument("run", nargs="?", help="run id or label (default: the newest run)")
    p.add_argument(
        "--html",
        type=html_file,
        required=True,
        metavar="FILE",
        help="write the report here (one self-contained page; needs the `html` extra)",
    )
    add_rule_options(p)
    p = command("baseline", "move or list the baseline pointers")
    bsub = p.add_subparsers(
        dest="baseline_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    q = bsub.add_parser("set", help="point the run's suite at this run")
    add_global_options(q, top=False)
    q.add_argument("run", help="run id or label")
    q = bsub.add_parser("show", help="list every suite's baseline")
    add_global_options(q, top=False)
    q = bsub.add_parser(
        "deepen",
        help="top the baseline up to N repeats per case, on the baseline's own target version",
        description="Take more samples of the baseline's target version (the code as it is "
        "must be that version), so that checks compare against a deep baseline. Never touches "
        "a candidate.",
    )
    add_global_options(q, top=False)
    q.add_argument("suite", type=Path, help="the suite file")
    add_repeats_option(
        q, f"repeats per case to reach (default: --baseline-repeats, {BASELINE_REPEATS})"
    )
    q.add_argument(
        "--jobs",
        type=positive,
        default=int(os.environ.get("NOISEFLOOR_JOBS", "1")),
        metavar="N",
        help="target calls at once (env NOISEFLOOR_JOBS; default 1)",
    )
    add_executor_option(q)
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
    add_run_options(p, label_required=True)
    p = command("compare", "the quarantine-lane `compare`: two labelled runs (default rule wilson)")
    p.add_argument("--baseline", required=True, metavar="LABEL", help="label of the baseline run")
    p.add_argument("--current", required=True, metavar="LABEL", help="label of the current run")
    p.add_argument("--suite", metavar="NAME", help="the suite, when a label exists in several")
    add_rule_options(p, default_rule="wilson")
    add_format_options(p)
    p = command(
        "history",
        "a case across stored runs, and its flakiness; or a suite's runs over time as an HTML page",
        "Each run's pass rate with its 95% Wilson interval, newest first, and the case's "
        "flakiness: the pass rate pooled over the newest runs of the current target version "
        "(each sample once). Read from the ledger; never calls the target.",
    )
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
    add_global_options(q, top=False)
    p = command("import", "read a store written by the public noisefloor; never calls the target")
    p.add_argument("source", type=Path, metavar="DIR", help="the public tool's store root")
    p.add_argument(
        "--suite", type=Path, required=True, help="the suite file those runs were taken of"
    )
    p = command("plan", "minimum detectable change and repeats needed, for N, case count and alpha")
    p.add_argument("suite", nargs="?", type=Path, help="take N and the case count from this suite")
    add_repeats_option(p, f"repeats per side (default: the suite's, else {REPEATS})")
    p.add_argument(
        "--cases",
        type=positive,
        metavar="M",
        help="cases that can fail (default: the suite's, else 50)",
    )
    add_alpha_option(p, "family-wise false-alarm rate")
    p.add_argument(
        "--power",
        type=probability,
        default=0.8,
        help="power for the repeats-needed table (default 0.8)",
    )
    p.add_argument(
        "--max-repeats",
        type=positive,
        metavar="N",
        help=f"a sequential check's cap per case (default: the suite's, else {MAX_REPEATS})",
    )
    p.add_argument(
        "--baseline-repeats",
        type=positive,
        metavar="N",
        help="the deep baseline's repeats per case (default: what the suite's baseline holds, "
        f"else {BASELINE_REPEATS})",
    )
    return parser
