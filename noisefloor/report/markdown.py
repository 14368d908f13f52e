"""The markdown report, for pull-request comments: a headline, the suite line, one table row per
scorer with its numbers, worst cases first."""

from __future__ import annotations

from typing import Any

from noisefloor.report._evidence import (
    calls_text,
    counts_line,
    evidence_line,
    quoted_examples,
    side_text,
)

__all__ = ["render"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report: dict[str, Any]) -> str:
    """The comparison report as GitHub-flavoured markdown."""
    title = f"`{report['baseline']}` → `{report['candidate']}`"
    if report.get("adopted"):
        title = "adopted as the baseline"
    elif report["baseline"] is None:
        title = "not adopted as the baseline"
    out = [f"### noisefloor: {report['suite']}, {title}", ""]
    out.append(
        f"**{counts_line(report['counts'])}**, rule `{report['rule']}`, "
        f"{calls_text(report)}, exit {report['exit_code']}"
    )
    rule = report.get("rule_summary") or {}
    if rule.get("thresholds"):
        out.append(
            f"\nalpha {report['settings']['alpha']} family-wise; Tarone K={rule['K']['regress']}, "
            f"threshold {rule['thresholds']['regress']}"
        )
    summary = report.get("suite_summary") or {}
    if summary.get("cases") and summary.get("ci95"):
        lo, hi = summary["ci95"]
        out.append(
            f"\nsuite: mean pass-rate change {summary['mean_diff']:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] "
            f"over {summary['cases']} cases"
        )
    out += [
        "",
        "| verdict | case | scorer | baseline | candidate | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for case in report["cases"]:
        first = True
        scorers = case["scorers"] or [
            {"key": "", "verdict": "", "baseline": {}, "candidate": {}, "evidence": {}}
        ]
        for s, example in zip(scorers, quoted_examples({**case, "scorers": scorers}), strict=True):
            verdict = f"**{case['verdict']}**" if first else ""
            name = _cell(f"{case['case_id']}: {case['reason']}") if first else ""
            evidence = evidence_line(s.get("evidence") or {}) or s.get("reason", "")
            if example is not None:
                evidence += f"; {example}"
            out.append(
                f"| {verdict} | {name} | `{s['key']}` {s['verdict']} | {_cell(side_text(s['baseline']))} | "
                f"{_cell(side_text(s['candidate']))} | {_cell(evidence)} |"
            )
            first = False
    for warning in report.get("warnings", []):
        out.append(f"\n> warning: {_cell(warning)}")
    return "\n".join(out) + "\n"
