"""Renderers of reports and runs: terminal, json, markdown and junit, one module each.

A report is a `noisefloor.report.model.Report` (`noisefloor.comparison` and
`noisefloor.operations.check` build it); every renderer prints the numbers behind a verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from noisefloor.report.model import Report

__all__ = ["FORMATS", "render_report", "render_run"]

FORMATS = ("terminal", "json", "markdown", "junit")


def render_report(report: Report, fmt: str) -> str:
    """A comparison report in one format, every one of them read from the same model."""
    if fmt == "json":
        from noisefloor.report.json import render

        return render(report.dump())
    if fmt == "markdown":
        from noisefloor.report.markdown import render as render_md

        return render_md(report)
    if fmt == "junit":
        from noisefloor.report.junit import render as render_junit

        return render_junit(report)
    from noisefloor.report.terminal import render as render_terminal

    return render_terminal(report)


def render_run(summary: dict[str, Any], fmt: str) -> str:
    """A run (no comparison) in one format."""
    if fmt == "json":
        from noisefloor.report.json import render

        return render(summary)
    from noisefloor.report.terminal import render_run as render_run_terminal

    text = render_run_terminal(summary)
    return f"```\n{text}```\n" if fmt == "markdown" else text
