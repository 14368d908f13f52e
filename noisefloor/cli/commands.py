"""The table of commands: each one's name, help, description, the function that adds its
arguments and the handler that runs it, in the order `--help` lists them.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any, NamedTuple

__all__ = ["COMMANDS", "Command"]


class Command(NamedTuple):
    """One command of the command line."""

    help: str
    description: str
    """Its `--help` description; "": the help."""
    arguments: str
    """`group.function` under `noisefloor.cli`: adds its arguments to its parser."""
    handler: str
    """`group.function` under `noisefloor.cli`: runs it and returns the exit code."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to its parser."""
        _function(self.arguments)(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Run the command with its parsed arguments; return the exit code."""
        result: int = _function(self.handler)(args)
        return result


def _function(name: str) -> Any:
    """A function of a command group, named `group.function`: a group's module loads only for a
    command of its own, so that `--help` and `--version` load none of them."""
    group, function = name.split(".")
    return getattr(importlib.import_module(f"noisefloor.cli.{group}"), function)


#: Every command, in the order `--help` lists them.
COMMANDS: dict[str, Command] = {
    "run": Command(
        "sample every case (cached samples are reused) and save the run",
        "",
        "sampling.run_parser",
        "sampling.cmd_run",
    ),
    "check": Command(
        "run, then compare with the baseline and exit with the verdict",
        "",
        "sampling.check_parser",
        "sampling.cmd_check",
    ),
    "ab": Command(
        "sample a git ref and the working tree interleaved, then judge as check does",
        "Check REF out in a temporary git worktree and sample its target and the working tree's\n"
        "interleaved, each repeat in a random order, so drift hits both alike; then judge as check.",
        "sampling.ab_parser",
        "sampling.cmd_ab",
    ),
    "rescore": Command(
        "re-apply the suite's current scorers to a stored run; never calls the target",
        "",
        "offline.rescore_parser",
        "offline.cmd_rescore",
    ),
    "diff": Command(
        "compare stored runs; never calls the target", "", "offline.diff_parser", "offline.cmd_diff"
    ),
    "report": Command(
        "compare a stored run with its suite's baseline (or --baseline) and write the HTML report; "
        "never calls the target",
        "",
        "offline.report_parser",
        "offline.cmd_report",
    ),
    "baseline": Command(
        "move or list the baseline pointers",
        "",
        "baseline.baseline_parser",
        "baseline.cmd_baseline",
    ),
    "runs": Command(
        "the stored runs, newest first: ids, labels, target versions, baselines",
        "",
        "store.runs_parser",
        "store.cmd_runs",
    ),
    "show": Command(
        "the stored outputs of a run, stderr included", "", "store.show_parser", "store.cmd_show"
    ),
    "scorers": Command(
        "the table of scorers (a suite's own too, given the suite)",
        "",
        "info.scorers_parser",
        "info.cmd_scorers",
    ),
    "schema": Command(
        "the JSON Schema of suite files (or of the JSON report)",
        "",
        "info.schema_parser",
        "info.cmd_schema",
    ),
    "record": Command(
        "the quarantine-lane `record`: run a suite and label the run",
        "",
        "sampling.record_parser",
        "sampling.cmd_run",
    ),
    "compare": Command(
        "the quarantine-lane `compare`: two labelled runs, judged as `check` judges",
        "The default rule is exact, as check's: a significant drop regresses even when the "
        "repeats of a label disagree. The design's triage table is --rule wilson. Under every "
        "rule, a case whose repeats disagree within a label is marked [quarantine: ...], as "
        "information.",
        "offline.compare_parser",
        "offline.cmd_compare",
    ),
    "history": Command(
        "a case across stored runs, and its flakiness; or a suite's runs over time as an HTML page",
        "Each run's pass rate with its 95% Wilson interval, newest first, and the case's "
        "flakiness: the pass rate pooled over the newest runs of the current target version "
        "(each sample once). Read from the ledger; never calls the target.",
        "info.history_parser",
        "info.cmd_history",
    ),
    "explain": Command(
        "what the target said differently in one case: its distinct outputs on both sides, "
        "a diff, and which scorer failed on which repeat; never calls the target",
        "",
        "offline.explain_parser",
        "offline.cmd_explain",
    ),
    "ledger": Command(
        "the SQLite ledger that indexes every sample", "", "store.ledger_parser", "store.cmd_ledger"
    ),
    "store": Command(
        "check the store's files, and repair what can be rebuilt or retaken",
        "",
        "store.store_parser",
        "store.cmd_store",
    ),
    "import": Command(
        "read a store written by the public noisefloor, or Inspect AI logs; never calls the target",
        "",
        "store.import_parser",
        "store.cmd_import",
    ),
    "plan": Command(
        "minimum detectable change and repeats needed, for N, case count and alpha",
        "",
        "info.plan_parser",
        "info.cmd_plan",
    ),
}
