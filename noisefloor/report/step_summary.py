"""GitHub Actions' job summary as text: a comparison's markdown report followed by what the target
said differently in each failing case explained (`explain`), and how many more there are."""

from __future__ import annotations

from collections.abc import Mapping

from noisefloor.model.report import Report
from noisefloor.pipeline.explain import Explanation
from noisefloor.report.explain import render_markdown
from noisefloor.report.markdown import render as render_markdown_report

__all__ = ["FAILING", "render"]

#: The verdicts whose cases a summary explains.
FAILING = ("broken", "regressed")


def render(report: Report, explained: Mapping[str, Explanation | str]) -> str:
    """The markdown report, then a collapsed section per explained case, worst first: what it
    said, or why it cannot be explained (a string). Empty `explained`: the report alone."""

    return render_markdown_report(report) + "".join(_explained(report, explained))


def _explained(report: Report, explained: Mapping[str, Explanation | str]) -> list[str]:

    if not explained:
        return []
    out = []
    for case_id, found in explained.items():
        section = (
            f"`{case_id}` cannot be explained: {found}\n"
            if isinstance(found, str)
            else render_markdown(found)
        )
        out.append(
            f"\n<details><summary>What <code>{case_id}</code> said</summary>\n\n{section}\n"
            "</details>\n"
        )
    failing = sum(1 for c in report.cases if c.verdict in FAILING)
    if failing > len(explained):
        out.append(
            f"\n{failing - len(explained)} more failing case(s): "
            f"`noisefloor explain CASE {report.candidate}` shows each\n"
        )
    return out
