"""GitHub Actions' job summary: when GITHUB_STEP_SUMMARY names a file, a comparison's markdown
report is appended to it (earlier steps' summaries stay), whatever format the command printed."""

from __future__ import annotations

import os
from pathlib import Path

from noisefloor.errors import NoisefloorError
from noisefloor.report.model import Report

__all__ = ["append_step_summary"]


def append_step_summary(report: Report) -> None:
    """Append the markdown report to the file GITHUB_STEP_SUMMARY names, if it names one."""
    from noisefloor.report.markdown import render

    named = os.environ.get("GITHUB_STEP_SUMMARY")
    if not named:
        return
    try:
        with Path(named).open("a", encoding="utf-8") as handle:
            handle.write(render(report) + "\n")
    except OSError as exc:
        raise NoisefloorError(
            f"cannot append the summary to GITHUB_STEP_SUMMARY={named!r}: {exc.strerror}",
            hint="point GITHUB_STEP_SUMMARY at a writable file, or unset it",
        ) from None
