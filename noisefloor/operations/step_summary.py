"""GitHub Actions' job summary: when GITHUB_STEP_SUMMARY names a file, a comparison's summary is
appended to it (earlier steps' summaries stay), whatever format the command printed.
"""

from __future__ import annotations

import os
from pathlib import Path

from noisefloor.errors import NoisefloorError
from noisefloor.model.report import Report
from noisefloor.operations.explain import explain_failing
from noisefloor.report import step_summary
from noisefloor.store.store import Store

__all__ = ["EXPLAINED", "append_step_summary"]

#: Cases explained in a summary, worst first: enough to start from, short enough to read.
EXPLAINED = 5


def append_step_summary(report: Report, store: Store) -> None:
    """Append the summary to the file GITHUB_STEP_SUMMARY names, if it names one."""
    named = os.environ.get("GITHUB_STEP_SUMMARY")
    if not named:
        return
    failing = [c.case_id for c in report.cases if c.verdict in step_summary.FAILING]
    text = step_summary.render(report, explain_failing(store, report, failing[:EXPLAINED]))
    try:
        with Path(named).open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        raise NoisefloorError(
            f"cannot append the summary to GITHUB_STEP_SUMMARY={named!r}: {exc.strerror}",
            hint="point GITHUB_STEP_SUMMARY at a writable file, or unset it",
        ) from None
