"""The exit-code policy: from a comparison's case verdicts, scorer errors, suite line and the
repeats the infrastructure lost to the exit code, and the finished report that carries it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from noisefloor.errors import ExitCode
from noisefloor.model.summary import quarantine_lane, sort_cases
from noisefloor.model.verdict import Verdict
from noisefloor.settings import RuleSettings

if TYPE_CHECKING:
    from noisefloor.model.records import CaseBand
    from noisefloor.model.report import CaseReport, Report, ScorerReport

__all__ = [
    "Measured",
    "exit_code_for",
    "finished_report",
    "measured_bands",
    "measured_cases",
    "unmeasured_cause",
]


def exit_code_for(
    counts: Counter[str] | dict[str, int], *, strict: bool, harness_fault: bool = False
) -> ExitCode:
    """The process exit code for a set of case verdicts."""
    if harness_fault:
        return ExitCode.HARNESS
    if counts.get(Verdict.BROKEN, 0):
        return ExitCode.BROKEN
    if counts.get(Verdict.REGRESSED, 0):
        return ExitCode.REGRESSED
    if strict and (counts.get(Verdict.INCONCLUSIVE, 0) or counts.get(Verdict.REDEFINED, 0)):
        return ExitCode.REGRESSED
    return ExitCode.OK


def _scorer_errors(scorer: ScorerReport) -> int:
    return (scorer.baseline.scorer_errors or 0) + (scorer.candidate.scorer_errors or 0)


def _named(scorer: ScorerReport) -> str:
    """A scorer in a warning, by its name (`regex`), without the suite's index."""
    return scorer.key.partition(":")[2] or scorer.key


def _never_passing(cases: Sequence[CaseReport], adopted: bool) -> list[tuple[bool, str]]:
    """A warning per scorer that failed every repeat of the baseline (of the run a first check
    adopts), or whose path matched nothing in any of its outputs: such a scorer cannot regress,
    so a typo in its path or needle would pass every check. A target that gave no answer is
    warned of apart (comparison.py).

    Each with whether the path matched nothing: a configuration error (exit 3 under --strict),
    where a scorer that fails a model's every answer may be the truth.
    """
    out: list[tuple[bool, str]] = []
    for case in cases:
        for scorer in case.scorers:
            side = scorer.candidate if adopted else scorer.baseline
            where = "the run adopted as the baseline" if adopted else "the baseline"
            if side.n and side.unmatched:
                out.append(
                    (
                        True,
                        f"case {case.case_id}, scorer {_named(scorer)}: {side.unmatched} in any of "
                        f"the {side.n} outputs of {where}: it passes or fails whatever the "
                        f"answers; fix the path (`noisefloor explain {case.case_id}`)",
                    )
                )
                continue
            if not side.n or side.k or side.target_errors == side.n:
                continue
            why = next(iter(side.details or []), "")
            message = (
                f"case {case.case_id}, scorer {_named(scorer)}: failed all {side.n} repeats of "
                f"{where}"
                + (f" ({why})" if why else "")
                + ": it cannot regress from there; if its parameters are wrong (a path that "
                f"matches nothing, a needle), fix them (`noisefloor explain {case.case_id}`)"
            )
            out.append((False, message))
    return out


def finished_report(
    report: dict[str, Any], settings: RuleSettings, continue_on_scorer_error: bool
) -> Report:
    """The report model from its parts: cases worst first, each marked where its repeats
    disagree within a side (the quarantine lane, which never moves the exit code), counts,
    scorer errors, scorers that never pass (an error under --strict), exit code.

    A report whose candidate the infrastructure left too few valid repeats exits 3, its cause
    in `unmeasured`, whether its repeats were just taken (`check`, `ab`) or are judged again
    from the store (`diff`, `report`, `compare`): a comparison that measured nothing is never
    green (whatever it sampled stays stored)."""
    from noisefloor.model.report import Report  # (a run that compares nothing never builds it)

    cases = sort_cases(report["cases"])
    for case in cases:
        case.quarantine = quarantine_lane(case)
    counts = Counter(c.verdict.value for c in cases)
    scorer_errors = sum(_scorer_errors(s) for c in cases for s in c.scorers)
    warnings = report.setdefault("warnings", [])
    if scorer_errors:
        failed = [(c.case_id, s) for c in cases for s in c.scorers if _scorer_errors(s)]
        affected = sorted({case_id for case_id, _ in failed})
        case_id, first = min(failed, key=lambda pair: pair[0])
        said = first.candidate.scorer_error or first.baseline.scorer_error
        where = f"case {case_id}, scorer {_named(first)}" + (f", {said}" if said else "")
        warnings.append(
            f"{scorer_errors} scorer error(s) in {', '.join(affected[:5])}: a scorer failed "
            f"({where}); that is the scorer's fault, not the target's "
            f"(`noisefloor show RUN --case {case_id}` prints each error's traceback)"
        )
    never = _never_passing(cases, bool(report.get("adopted")))
    warnings.extend(message for _, message in never)
    summary = report.get("suite_summary")
    suite_failed = bool(settings.suite_gate and summary is not None and summary.gate_failed)
    short = unmeasured_cause(measured_cases(cases), settings.min_valid)
    code = exit_code_for(
        counts,
        strict=settings.strict,
        harness_fault=(bool(scorer_errors) and not continue_on_scorer_error)
        or (settings.strict and any(typo for typo, _ in never))
        or short is not None,
    )
    if suite_failed and code == 0:
        code = exit_code_for({Verdict.REGRESSED: 1}, strict=False)
    report.update(
        cases=cases, counts=dict(sorted(counts.items())), exit_code=int(code), unmeasured=short
    )
    report.setdefault("notes", [])
    return Report(**report)


@dataclass(frozen=True)
class Measured:
    """What one case's candidate repeats gave: valid ones, and ones lost to the infrastructure."""

    case_id: str
    valid: int
    infra: int
    first_error: str = ""
    """The first infrastructure error, as its sample says it (`infra: ...`)."""


def _infra_error(details: Sequence[str] | None) -> str:
    return next((d for d in details or [] if d.startswith(("infra:", "config:"))), "")


def measured_cases(cases: Sequence[CaseReport]) -> list[Measured]:
    """Each compared case's candidate repeats, as its first scorer counted them (an
    infrastructure error loses the repeat for every scorer alike)."""
    out = []
    for case in cases:
        side = next((s.candidate for s in case.scorers if not s.candidate.empty), None)
        if side is None or side.n is None:
            continue
        valid = side.n + (side.scorer_errors or 0)
        out.append(
            Measured(case.case_id, valid, side.infra_errors or 0, _infra_error(side.details))
        )
    return out


def measured_bands(bands: Sequence[CaseBand]) -> list[Measured]:
    """Each case's repeats in a run's bands."""
    return [
        Measured(b.case_id, b.valid, b.infra, _infra_error(b.errors)) for b in bands if b.repeats
    ]


def unmeasured_cause(measured: Sequence[Measured], min_valid: int) -> str | None:
    """Why a comparison, a record or an explanation measured nothing it can stand on, in one
    line; None when it did. The one rule every command applies, sampling or reading the store.

    A case is unmeasured when infrastructure errors (after the target's retries) left it fewer
    valid repeats than `min_valid` (or than it took, when it took fewer): such a command exits
    3, never 0, since a green result would rest on nothing (research/quarantine-lane.md:
    invalid repeats alert the owner and blame no one).
    """
    short = [m for m in measured if m.infra and m.valid < min(min_valid, m.valid + m.infra)]
    if not short:
        return None
    failed = sum(m.infra for m in measured)
    total = sum(m.valid + m.infra for m in measured)
    ids = [m.case_id for m in short]
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    first = next((m.first_error for m in short if m.first_error), "infra: unknown")
    return (
        f"{failed} of {total} repeats failed on the infrastructure ({first}), leaving "
        f"{len(short)} case(s) with fewer valid repeats than {min_valid}: {shown}; every sample "
        "taken is kept: run it again once the endpoint answers (it takes only the repeats "
        "it lacks)"
    )
