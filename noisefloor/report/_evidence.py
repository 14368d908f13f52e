"""The words and numbers behind one scorer's verdict, shared by the text renderers.

One function per kind of evidence, so that terminal and markdown print the same figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noisefloor.model.verdict import SEVERITY
from noisefloor.report._usage import amount, usage_text

if TYPE_CHECKING:
    from noisefloor.model.records import FailingExample
    from noisefloor.model.report import CaseReport, Evidence, Report, ScorerReport, Side
    from noisefloor.model.verdict import Verdict

__all__ = [
    "calls_text",
    "counts_line",
    "evidence_line",
    "example_line",
    "quoted_examples",
    "repeats_tag",
    "sequential_line",
    "side_text",
    "suite_change",
]


def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
    return str(x)


def _interval(pair: list[Any] | None) -> str:
    return f"[{_num(pair[0])}, {_num(pair[1])}]" if pair else ""


def side_text(s: Side) -> str:
    """One side of a scorer: `k/n [wilson]`, plus the value band for continuous scorers."""
    if s.empty:
        return "-"
    text = f"{s.k}/{s.n}"
    if s.wilson:
        text += f" {_interval(s.wilson)}"
    if s.mean is not None:
        text += (
            f"; mean {_num(s.mean)} sd {_num(s.sd)}, {_num(s.median)} [{_num(s.min)}-{_num(s.max)}]"
        )
    counted = (
        ("target_errors", s.target_errors),
        ("infra_errors", s.infra_errors),
        ("scorer_errors", s.scorer_errors),
    )
    errors = [f"{n} {k.replace('_', ' ')}" for k, n in counted if n]
    if errors:
        text += f" ({', '.join(errors)})"
    return text


def evidence_line(e: Evidence) -> str:
    """The test statistics of one scorer, empty when the rule computed none."""
    parts = []
    if "p_regress" in e.model_fields_set:
        parts.append(f"diff {_num(e.diff)} {_interval(e.newcombe)}")
        parts.append(f"p={_num(e.p_regress)} vs {_num(e.threshold)}")
        mde = e.min_detectable_drop
        parts.append(
            f"smallest detectable drop {_num(mde)}"
            if mde is not None
            else "no drop detectable at this N"
        )
    values = e.values
    if values is not None:
        if values.deterministic:
            parts.append(f"values constant on both sides, diff {_num(values.diff)}")
        else:
            parts.append(
                f"mean diff {_num(values.diff)} {_interval(values.welch_ci)}, "
                f"Welch p={_num(values.p_worse)} vs {_num(values.threshold)}"
            )
    if e.scorer_redefined is not None:
        parts.append(
            "scorer redefined since the baseline: baseline samples re-scored"
            if e.scorer_redefined.baseline
            else "scorer added since the baseline: baseline samples scored with it"
        )
    return "; ".join(parts)


def counts_line(counts: dict[str, int]) -> str:
    """`2 unchanged, 1 regressed` worst first."""

    order = {v.value: i for i, v in enumerate(SEVERITY)}
    items = sorted(counts.items(), key=lambda kv: order.get(kv[0], 99))
    return ", ".join(f"{n} {v}" for v, n in items) or "no cases"


def calls_text(report: Report) -> str:
    """The target calls this command made and what they used, then what the compared runs took
    when they were made.

    `diff` and `compare` call nothing: their stored runs' calls are a cost paid earlier.
    """
    text = f"{report.calls} target calls"
    if report.usage is not None:
        text += f" using {usage_text(report.usage)}"
    runs = report.runs
    if runs.baseline is not None:
        text += (
            f" (runs' own calls: baseline {runs.baseline.calls}, candidate {runs.candidate.calls})"
        )
    return text


def sequential_line(report: Report) -> str | None:
    """What a sequential check did and spent, beside what a fixed design would have."""
    seq = report.sequential
    if seq is None:
        return None
    shown = ", ".join(
        f"{look.repeats} ({look.cases} case(s), alpha {_num(look.alpha)})" for look in seq.looks
    )
    text = (
        f"sequential: {seq.screened} case(s) against {seq.baseline_repeats} baseline repeats, "
        f"looks at {shown}; stopped: " + ", ".join(f"{n} {why}" for why, n in seq.stops.items())
    )
    if seq.budget_stopped:
        given = [f"--max-calls {seq.max_calls}"] if seq.max_calls is not None else []
        if seq.max_cost is not None:
            given.append(f"--max-cost {amount(seq.max_cost)}")
        text += f" ({' or '.join(given)})"
    text += f"; {seq.calls} sample(s) taken"
    if seq.fixed_calls is not None and seq.power is not None:
        text += (
            f"; a fixed design with the same power against {seq.reference} "
            f"({100 * seq.power:.0f}%) takes {seq.fixed_repeats} repeats per case: "
            f"{seq.fixed_calls} samples"
        )
    return text


def suite_change(report: Report) -> str | None:
    """The suite line of the markdown and html reports: the mean pass-rate change across cases
    with its interval, or None without one (a single case has no interval)."""
    summary = report.suite_summary
    if summary is None or not summary.cases or not summary.ci95:
        return None
    lo, hi = summary.ci95
    return (
        f"suite: mean pass-rate change {summary.mean_diff:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] "
        f"over {summary.cases} cases"
    )


def repeats_tag(case: CaseReport) -> str:
    """`(repeats 100 vs 20, looks 5/10/20; clear)`: what a sequential verdict rests on, and the
    concurrent control of a case the deep baseline called regressed or left in doubt (`; control
    80 vs 80`)."""
    seq = case.sequential
    if seq is None:
        return ""
    if seq.stopped == "same":
        return f"(the baseline's own version: {seq.baseline_repeats} repeats)"
    looks = f", looks {'/'.join(map(str, seq.looks))}" if len(seq.looks) > 1 else ""
    control = ""
    if seq.control is not None and seq.control.repeats:
        control = f"; control {seq.control.repeats} vs {seq.control.candidate_repeats}"
    elif seq.control is not None:
        control = "; no control"
    return (
        f"(repeats {seq.baseline_repeats} vs {seq.verdict_repeats}{looks}; {seq.stopped}{control})"
    )


def example_line(example: FailingExample) -> str:
    """`r3: <output, one line> (<why it failed>)`: a failing repeat of the candidate, quoted."""
    said = example.output or "(no output)"
    if example.stderr:
        said += f" stderr: {example.stderr}"
    return f"r{example.repeat}: {said} ({example.detail})"


def quoted_examples(verdict: Verdict, scorers: list[ScorerReport]) -> list[str | None]:
    """Per scorer of a case, the example line to print under it, or None.

    A regressed scorer quotes its first failing repeat; a broken case quotes what the target
    said once, not once per scorer.
    """
    out: list[str | None] = []
    seen: set[str] = set()
    for s in scorers:
        example = s.candidate.example
        failing = s.verdict in _QUOTED or verdict in _QUOTED
        line = example_line(example) if example and failing else None
        out.append(line if line not in seen else None)
        if line is not None:
            seen.add(line)
    return out


_QUOTED = ("regressed", "broken")
