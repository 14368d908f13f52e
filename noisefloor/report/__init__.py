"""Renderers of reports and runs: terminal, json, markdown, junit and html, one module each.

A report is a `noisefloor.model.report.Report` (`noisefloor.pipeline.comparison` and
`noisefloor.operations.check` build it); every renderer prints the numbers behind a verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from noisefloor.model.repeats import SideRepeats
    from noisefloor.model.report import Report
    from noisefloor.model.run import RunSummary
    from noisefloor.report._console import Screen

__all__ = [
    "ALL_FORMATS",
    "FORMATS",
    "Format",
    "formats",
    "register_format",
    "render_report",
    "render_run",
]

#: The formats rendered from the report model alone.
FORMATS = ("terminal", "json", "markdown", "junit")
#: And html, which also lists the repeats behind each verdict and needs the `html` extra.
ALL_FORMATS = (*FORMATS, "html")


class Format(Protocol):
    """A report format registered from outside the package: a comparison and a run, each as text
    read from its model alone (`repeats` is given for the formats that list them, else None)."""

    def report(self, report: Report, repeats: Mapping[str, list[SideRepeats]] | None) -> str:
        """A comparison's report."""
        ...

    def run(self, summary: RunSummary) -> str:
        """A run's summary (no comparison)."""
        ...


_REGISTERED: dict[str, Format] = {}


def register_format(name: str, fmt: Format) -> None:
    """Make `--format NAME` render with `fmt`.

    Raises:
        ValueError: The name is taken (by a built-in format or one registered before).
    """
    if name in ALL_FORMATS or name in _REGISTERED:
        raise ValueError(f"a report format named {name!r} exists already")
    _REGISTERED[name] = fmt


def formats() -> tuple[str, ...]:
    """Every format `--format` takes: the built-in ones, then those registered, in order."""
    return (*ALL_FORMATS, *_REGISTERED)


def render_report(
    report: Report,
    fmt: str,
    repeats: Mapping[str, list[SideRepeats]] | None = None,
    *,
    screen: Screen | None = None,
    verbosity: int = 0,
) -> str:
    """A comparison report in one format, every one of them read from the same model.

    Given the repeats behind each verdict (read from the store), the html page lists them; the
    terminal's is drawn for `screen` (80 columns, no colour by default) at `verbosity`.
    """
    if fmt in _REGISTERED:
        return _REGISTERED[fmt].report(report, repeats)
    if fmt == "html":
        from noisefloor.report.html import render as render_html

        return render_html(report, repeats)
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

    return render_terminal(report, screen, verbosity)


def render_run(
    summary: RunSummary, fmt: str, *, screen: Screen | None = None, verbosity: int = 0
) -> str:
    """A run (no comparison) in one format, every one of them read from the same summary."""
    if fmt in _REGISTERED:
        return _REGISTERED[fmt].run(summary)
    if fmt == "html":
        from noisefloor.report.html import render_run as render_run_html

        return render_run_html(summary)
    if fmt == "json":
        from noisefloor.report.json import render

        return render(summary.dump())
    if fmt == "junit":
        from noisefloor.report.junit import render_run as render_run_junit

        return render_run_junit(summary)
    from noisefloor.report.terminal import render_run as render_run_terminal

    text = render_run_terminal(summary, None if fmt == "markdown" else screen, verbosity)
    return f"```\n{text}```\n" if fmt == "markdown" else text
