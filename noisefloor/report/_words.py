"""The plain words of a verdict, shared by every report a person reads: a verdict's word, a
scorer's title, the pass counts a person checks, what an unchanged case ruled out, the gist of a
failing output, and which cases stopped with a drop that matters still possible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from noisefloor.stats import TOL, newcombe

if TYPE_CHECKING:
    from noisefloor.model.report import CaseReport, Report, ScorerReport, Side

__all__ = [
    "FAILING",
    "Doubt",
    "Failing",
    "Phrase",
    "VERDICT_WORDS",
    "against_control",
    "candidate_split",
    "case_words",
    "control_words",
    "doubt_text",
    "doubts",
    "failing_outputs",
    "headline",
    "passed",
    "plain_detail",
    "possible_drop",
    "repeats_to_rule_out",
    "scorer_name",
    "scorer_title",
]

#: The verdicts a person must act on: their cases quote what the target said.
FAILING = ("regressed", "broken", "invalid")

#: A verdict as the reports a person reads print it: the failing ones shout.
VERDICT_WORDS = {
    "broken": "BROKEN",
    "regressed": "REGRESSED",
    "invalid": "INVALID",
}

#: The outcome prefix of a failed call's detail (`error:exit: exited with status 1`).
_OUTCOME = re.compile(r"^error:[a-z_]+: ")


def scorer_title(s: ScorerReport) -> str:
    """A scorer as a person reads it: its title (`contains "Paris" at answer`), or, for a
    report written before titles, its name without the suite's index."""
    return s.title or s.key.partition(":")[2] or s.key


def scorer_name(s: ScorerReport) -> str:
    """The scorer's name alone (`contains`): its title when there is no room for more."""
    return scorer_title(s).split(" ", 1)[0]


def passed(side: Side) -> str:
    """`3 of 5 passed`."""
    return f"{side.k} of {side.n} passed"


def plain_detail(detail: str) -> str:
    """A failure's detail without the outcome code a failed call's detail starts with."""
    return _OUTCOME.sub("", detail)


def against_control(case: CaseReport) -> bool:
    """Whether a case's scorers compare its candidate with its concurrent control (the baseline's
    version re-run beside it in this check) rather than with the deep baseline: they do once the
    control took repeats, except for a case the deep baseline decided as regressed and the
    control confirmed, which keeps the deep baseline's evidence
    (`operations.concurrent_control.confirmed`)."""
    seq = case.sequential
    if seq is None or seq.control is None or not seq.control.repeats:
        return False
    return not (seq.stopped == "decided" and seq.control.verdict == "regressed")


def candidate_split(case: CaseReport) -> tuple[int, int] | None:
    """For a case whose check took a concurrent control: the candidate's repeats judged against
    the deep baseline (r0 up), then those taken beside the control; None without a control."""
    seq = case.sequential
    if seq is None or seq.control is None or not seq.control.candidate_repeats:
        return None
    beside = seq.control.candidate_repeats
    return seq.candidate_repeats - beside, beside


def control_words(case: CaseReport) -> str:
    """What the concurrent control took and found, in words (`confirmed: worse than the
    baseline's version re-run beside it, 10 repeats each`), or "" without one."""
    seq = case.sequential
    if seq is None or seq.control is None or not seq.control.repeats:
        return ""
    control = seq.control
    each = (
        f"{control.repeats} repeats each"
        if control.repeats == control.candidate_repeats
        else f"{control.repeats} repeats, {control.candidate_repeats} of the candidate"
    )
    if not against_control(case):
        return f"confirmed against the baseline's version re-run beside it: {each}"
    return f"judged against the baseline's version re-run beside it: {each}"


def _same(case: CaseReport) -> bool:
    """A case whose candidate is the baseline's own version and input: the same samples, so no
    drop is possible whatever its interval says."""
    return case.sequential is not None and case.sequential.stopped == "same"


def possible_drop(s: ScorerReport) -> float | None:
    """The largest drop in pass rate a scorer's 95% interval of change leaves possible (0 when
    it excludes any drop), or None when the rule computed no interval."""
    interval = s.evidence.newcombe
    if not interval or interval[0] is None:
        return None
    return max(0.0, -interval[0])


def _deciding(case: CaseReport) -> ScorerReport | None:
    """The scorer a case's line speaks of: the first with the case's verdict; for an unchanged
    case, the one whose interval leaves the largest drop possible."""
    if not case.scorers:
        return None
    if case.verdict == "unchanged":
        return max(case.scorers, key=lambda s: possible_drop(s) or 0.0)
    if case.verdict == "added":
        rated = [s for s in case.scorers if s.candidate.n]
        return min(rated, key=lambda s: (s.candidate.k or 0) / (s.candidate.n or 1), default=None)
    same = [s for s in case.scorers if s.verdict == case.verdict]
    moved = [s for s in case.scorers if s.verdict != "unchanged"]
    return (same or moved or case.scorers)[0]


def _numbers(case: CaseReport, s: ScorerReport) -> str:
    """The counts behind a scorer's verdict: `0 of 5 passed, was 100 of 100`; a continuous
    scorer's means; against a control, the control's counts."""
    b, c = s.baseline, s.candidate
    if c.mean is not None and b.mean is not None and s.evidence.values is not None:
        return f"mean {c.mean:.4g}, was {b.mean:.4g}"
    if c.k is None or c.n is None:
        return "not measured"
    if b.k is None or b.n is None:
        return passed(c)
    if against_control(case):
        return f"{passed(c)}, the re-run baseline {b.k} of {b.n}"
    return f"{passed(c)}, was {b.k} of {b.n}"


@dataclass(frozen=True)
class Phrase:
    """What a case's line says after its id: a scorer's title (cut first when the line is too
    long), then the words a person checks."""

    title: str
    name: str
    words: str


def case_words(case: CaseReport) -> Phrase:
    """The phrase of a case's one line, in plain words with its numbers."""
    seq = case.sequential
    if case.verdict == "broken" and case.valid is not None:
        (ok_b, n_b), (ok_c, n_c) = case.valid.baseline, case.valid.candidate
        return Phrase("", "", f"{ok_c} of {n_c} repeats gave a valid result, was {ok_b} of {n_b}")
    if case.verdict == "unchanged" and seq is not None and seq.stopped == "same":
        return Phrase(
            "", "", f"the baseline's own version: the same {seq.baseline_repeats} repeats"
        )
    s = _deciding(case)
    if s is None or case.verdict in ("removed", "unmeasured") or s.candidate.empty:
        return Phrase("", "", case.reason)
    if case.verdict == "added" and all(x.candidate.k == x.candidate.n for x in case.scorers):
        return Phrase("", "", f"every scorer passed all {s.candidate.n} repeats")
    if case.verdict == "unchanged":
        drop = possible_drop(s)
        if drop is not None:
            where = " beside the re-run baseline" if against_control(case) else ""
            return Phrase(
                "", "", f"no drop over {drop:.2f} found in {s.candidate.n} repeats{where}"
            )
    return Phrase(scorer_title(s), scorer_name(s), _numbers(case, s))


@dataclass(frozen=True)
class Failing:
    """One failing output of a case: why it failed (each scorer's detail), and its gist."""

    repeat: int
    why: str
    gist: str


def failing_outputs(case: CaseReport) -> list[Failing]:
    """The failing outputs a regressed or broken case quotes, each once with every reason its
    scorers gave: those of the scorers that regressed (a broken case: of any scorer)."""
    if case.verdict not in FAILING:
        return []
    found: dict[tuple[int, str, str], list[str]] = {}
    for s in case.scorers:
        example = s.candidate.example
        if example is None or (case.verdict != "broken" and s.verdict not in FAILING):
            continue
        why = found.setdefault((example.repeat, example.output, example.stderr), [])
        detail = plain_detail(example.detail)
        if detail not in why:
            why.append(detail)
    out = []
    for (repeat, output, stderr), why in found.items():
        gist = output or (f"stderr: {stderr}" if stderr else "(no output)")
        out.append(Failing(repeat, "; ".join(why), gist))
    return out


@dataclass(frozen=True)
class Doubt:
    """An unchanged case that stopped with a drop that matters still possible: how large a drop
    its interval leaves, the drop that matters (the scorer's `suspect_drop`), and the repeats
    per case a fixed check would need to rule that out if its pass rates held (None: the
    baseline's depth limits it)."""

    case_id: str
    drop: float
    matters: float
    repeats: int | None


def repeats_to_rule_out(k_b: int, n_b: int, k_c: int, n_c: int, drop: float) -> int | None:
    """The fewest candidate repeats, doubling from `n_c` up to 1,000, whose 95% interval of
    change would exclude a drop of `drop` if the candidate kept its pass rate; None when the
    baseline's own repeats keep the interval that wide."""
    rate = k_c / n_c
    n = n_c
    while n < 1000:
        n = min(1000, 2 * n)
        low, _ = newcombe(k_b, n_b, round(rate * n), n)
        if -low < drop - TOL:
            return n
    return None


def doubts(report: Report) -> list[Doubt]:
    """The unchanged cases whose interval of change still reaches a drop that matters, most
    doubtful first: a futility stop or a fixed design called them unchanged, and more repeats
    would tell."""
    out = []
    for case in report.cases:
        if case.verdict != "unchanged" or _same(case):
            continue
        worst: Doubt | None = None
        for s in case.scorers:
            drop, matters = possible_drop(s), s.evidence.suspect_drop
            if drop is None or matters is None or drop < matters - TOL:
                continue
            if worst is None or drop > worst.drop:
                b, c = s.baseline, s.candidate
                assert b.k is not None and b.n and c.k is not None and c.n
                repeats = repeats_to_rule_out(b.k, b.n, c.k, c.n, matters)
                worst = Doubt(case.case_id, drop, matters, repeats)
        if worst is not None:
            out.append(worst)
    return sorted(out, key=lambda d: (-d.drop, d.case_id))


def doubt_text(report: Report, *, short: bool = False) -> str | None:
    """The unchanged cases that stopped with a drop that matters still possible, and what would
    rule it out: the repeats, if the pass rates hold, or a deeper baseline when its own repeats
    keep the interval open. `short`: in one line of a terminal (the case lines name the drops)."""
    found = doubts(report)
    if not found:
        return None
    matters = min(d.matters for d in found)
    needed = [d.repeats for d in found]
    most = max(n for n in needed if n is not None) if all(needed) else None
    cases = "1 case" if len(found) == 1 else f"{len(found)} cases"
    if short:
        fix = f"`--repeats {most}`" if most is not None else "a deeper baseline"
        return f"{cases} may hide a drop over {matters:.2f}: {fix} could rule it out"
    named = ", ".join(f"{d.case_id} (up to {d.drop:.2f})" for d in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    text = f"a drop over {matters:.2f} is still possible in {cases}: {named}{more}; "
    if most is not None:
        return text + f"`check --repeats {most}` would rule it out if the pass rates hold"
    return text + (
        "the baseline's repeats keep it open: `noisefloor baseline deepen SUITE`, then check "
        "again (`noisefloor plan SUITE` weighs the cost)"
    )


def headline(report: Report, counts: str) -> str:
    """`1 regressed, 1 unchanged · exit 1 · 35 calls`: the outcome, then what it took."""
    parts = [counts, f"exit {report.exit_code}", f"{report.calls} call{'s' * (report.calls != 1)}"]
    usage = report.usage
    if (
        usage is not None
        and usage.prompt_tokens is not None
        and usage.completion_tokens is not None
    ):
        parts[-1] += f", {usage.prompt_tokens + usage.completion_tokens:,} tokens"
        if usage.cost is not None:
            from noisefloor.report._usage import amount

            parts[-1] += f", cost {amount(usage.cost, usage.currency)}"
    return " · ".join(parts)
