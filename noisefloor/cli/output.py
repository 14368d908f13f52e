"""What the commands print: text to stdout (and to --output), a comparison's report with its
warnings and step summary, and the summary of a run that sampled or re-scored.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from noisefloor.cli.inputs import store_of

if TYPE_CHECKING:
    from noisefloor.model.report import Report
    from noisefloor.operations.run import RunResult

__all__ = ["emit", "report_out", "run_summary"]


def emit(text: str, args: argparse.Namespace, rendered_for_file: str | None = None) -> None:
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


def report_out(report: Report, args: argparse.Namespace) -> int:
    from noisefloor.report import render_report, step_summary

    store = store_of(args, read_only=True)
    if args.output is not None:
        emit(render_report(report, "terminal"), args, render_report(report, args.format, store))
    else:
        emit(render_report(report, args.format, store), args)
    for warning in report.warnings if args.format != "terminal" else []:
        print(f"warning: {warning}", file=sys.stderr)
    step_summary.append_step_summary(report, store)
    return report.exit_code


def run_summary(result: RunResult) -> dict[str, Any]:
    from noisefloor.model.verdict import side

    return {
        "run": result.run.model_dump(
            mode="json", include={"run_id", "suite", "label", "cases", "rescored_from"}
        ),
        **result.spending(),
        "pending": result.pending,
        "warnings": result.warnings,
        "unmeasured": result.unmeasured,
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
