"""What the commands print: text to stdout (and to --output), and a comparison's report with
its warnings and step summary.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noisefloor.model.report import Report
    from noisefloor.store.store import Store

# The renderers and what a report's page needs load when a command prints.

__all__ = ["emit", "report_out"]


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


def report_out(report: Report, args: argparse.Namespace, store: Store) -> int:
    """Print a comparison's report in --format (and to --output), its warnings, and the job
    summary; `store` is the one the comparison read. Returns the report's exit code.

    The terminal report holds its warnings and the cause of an unmeasured comparison; any other
    format puts them on stderr too, so a log shows them whatever stdout went into."""
    from noisefloor.operations.step_summary import append_step_summary
    from noisefloor.report import render_report

    repeats = None
    if args.format == "html":
        from noisefloor.operations.repeats import repeats_behind

        repeats = repeats_behind(store, report)
    if args.output is not None:
        emit(render_report(report, "terminal"), args, render_report(report, args.format, repeats))
    else:
        emit(render_report(report, args.format, repeats), args)
    if args.format != "terminal":
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if report.unmeasured:
            print(f"error: {report.unmeasured}", file=sys.stderr)
    append_step_summary(report, store)
    return report.exit_code
