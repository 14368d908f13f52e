"""What the commands print: text to stdout (and to --output), and a comparison's report with
its warnings and step summary.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from noisefloor.errors import UsageError

if TYPE_CHECKING:
    from noisefloor.model.report import Report
    from noisefloor.report._console import Screen
    from noisefloor.store.store import Store

# The renderers and what a report's page needs load when a command prints.

__all__ = ["emit", "report_out", "screen_of", "verbosity_of"]


def screen_of(stream: TextIO, environ: Mapping[str, str] = os.environ) -> Screen:
    """The screen a stream shows: its width (COLUMNS, else the terminal's, else 80 when it is no
    terminal) and whether it takes colour (a terminal, unless NO_COLOR is set or TERM is dumb;
    FORCE_COLOR colours anything but where NO_COLOR is set)."""
    from noisefloor.report._console import DEFAULT_WIDTH, Screen

    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or wrapped stream
        terminal = False
    width = 0
    columns = environ.get("COLUMNS", "")
    if columns.isdigit():
        width = int(columns)
    elif terminal:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):
            width = 0
    no_color = environ.get("NO_COLOR", "") != ""
    force = environ.get("FORCE_COLOR", "") != ""
    dumb = environ.get("TERM", "") == "dumb"
    color = not no_color and (force or (terminal and not dumb))
    return Screen(width=width if width > 0 else DEFAULT_WIDTH, color=color)


def verbosity_of(args: argparse.Namespace) -> int:
    """1 with -v, -1 with -q, else 0."""
    verbose, quiet = getattr(args, "verbose", False), getattr(args, "quiet", False)
    if verbose and quiet:
        command = getattr(args, "command", None) or "COMMAND"
        raise UsageError(
            "-v and -q contradict each other",
            hint=f"give one of them (`noisefloor {command} --help` lists both)",
        )
    return 1 if verbose else -1 if quiet else 0


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
    verbosity, screen = verbosity_of(args), screen_of(sys.stdout)
    if args.output is not None:
        # the file gets --format; the screen, the terminal's report
        terminal = render_report(report, "terminal", screen=screen, verbosity=verbosity)
        emit(terminal, args, render_report(report, args.format, repeats, verbosity=verbosity))
    else:
        emit(render_report(report, args.format, repeats, screen=screen, verbosity=verbosity), args)
    if args.format != "terminal":
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if report.unmeasured:
            print(f"error: {report.unmeasured}", file=sys.stderr)
    append_step_summary(report, store)
    return report.exit_code
