"""GitHub Actions' job summary: when GITHUB_STEP_SUMMARY names a file, a comparison's markdown
report is appended to it (earlier steps' summaries stay), whatever format the command printed,
followed by what the target said differently in each regressed or broken case (`explain`)."""

from __future__ import annotations

import os
from pathlib import Path

from noisefloor.errors import NoisefloorError
from noisefloor.model.report import Report
from noisefloor.store.store import Store

__all__ = ["append_step_summary"]

#: Cases explained in a summary, worst first: enough to start from, short enough to read.
EXPLAINED = 5
_FAILING = ("broken", "regressed")


def append_step_summary(report: Report, store: Store) -> None:
    """Append the markdown report to the file GITHUB_STEP_SUMMARY names, if it names one."""
    from noisefloor.report.markdown import render

    named = os.environ.get("GITHUB_STEP_SUMMARY")
    if not named:
        return
    text = render(report) + "".join(_explained(report, store))
    try:
        with Path(named).open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        raise NoisefloorError(
            f"cannot append the summary to GITHUB_STEP_SUMMARY={named!r}: {exc.strerror}",
            hint="point GITHUB_STEP_SUMMARY at a writable file, or unset it",
        ) from None


def _explained(report: Report, store: Store) -> list[str]:
    """A collapsed `explain` section per failing case, worst first (at most `EXPLAINED`)."""
    failing = [c.case_id for c in report.cases if c.verdict in _FAILING]
    if not failing or report.baseline is None or report.candidate is None:
        return []
    from noisefloor.pipeline.explain import explain_case
    from noisefloor.report.explain import render_markdown

    base, cand = store.find_run(report.baseline), store.find_run(report.candidate)
    out = []
    for case_id in failing[:EXPLAINED]:
        try:
            section = render_markdown(explain_case(store, base, cand, case_id))
        except NoisefloorError as exc:  # the verdict stands; say why its outputs are not shown
            section = f"`{case_id}` cannot be explained: {exc.message}\n"
        out.append(
            f"\n<details><summary>What <code>{case_id}</code> said</summary>\n\n{section}\n"
            "</details>\n"
        )
    if len(failing) > EXPLAINED:
        out.append(
            f"\n{len(failing) - EXPLAINED} more failing case(s): "
            f"`noisefloor explain CASE {report.candidate}` shows each\n"
        )
    return out
