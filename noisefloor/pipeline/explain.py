"""What a target said differently in one case: each side's distinct outputs with their counts, a
diff between the two, which scorer failed on which repeat and why, and whether the infrastructure
left the candidate too few valid repeats to judge. Never calls a target.

`explain_case` builds an `Explanation` from two stored runs; `noisefloor.report.explain` renders it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noisefloor.model.records import (
    CaseBand,
    CaseRecord,
    RepeatScore,
    RepeatStatus,
    RunRecord,
    ScoreFile,
    ScorerUse,
    repeat_status,
)
from noisefloor.model.verdict import scorer_title
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.comparison import require_samples
from noisefloor.pipeline.engine import band_tasks, run_tasks
from noisefloor.rules.exit_policy import measured_bands, unmeasured_cause
from noisefloor.store.store import Store
from noisefloor.targets.base import Outcome, RawSample

__all__ = [
    "ControlCounts",
    "Explanation",
    "Miss",
    "Said",
    "ScorerCounts",
    "SideExplained",
    "explain_case",
]

#: Raised when a field changes meaning: 2 counts a sequential check's candidate over the repeats
#: its verdict rests on, its baseline over the deep pool it was judged against.
EXPLAIN_VERSION = 2
#: Characters of one distinct output that an explanation keeps; the diff reads whole outputs.
SHOWN_CHARS = 2000
#: Lines of the diff an explanation keeps.
DIFF_LINES = 200
#: Characters of one diff line an explanation keeps.
DIFF_LINE_CHARS = 500


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Said(_Model):
    """One distinct output of one side, with the repeats that printed it."""

    text: str
    """The output (a command's stdout, an endpoint's message), cut to `SHOWN_CHARS`; when the
    call failed and printed nothing, its outcome and error in brackets."""
    chars: int
    """The output's whole length: more than `len(text)` when it was cut."""
    repeats: list[int]
    """The repeats that printed it, numbered as stored (`noisefloor show RUN --case ID` prints
    each whole)."""
    failing: list[int]
    """Those of `repeats` that failed: a scorer's fail, or the call's own error."""

    @property
    def count(self) -> int:
        """How many repeats printed it."""
        return len(self.repeats)


class Miss(_Model):
    """A repeat that a scorer did not pass, and why."""

    repeat: int
    scorer: str
    """The scorer's label (`1:contains`); empty when the call itself failed, for every scorer."""
    status: RepeatStatus
    detail: str
    """The scorer's detail, or the call's error."""


class ScorerCounts(_Model):
    """One scorer's passing repeats out of the valid ones, on each side, over the repeats the
    check's verdict rests on (a sequential check's own windows: the deep baseline's, and the
    candidate's before any concurrent control)."""

    scorer: str
    baseline: tuple[int, int] | None
    """(passed, valid) on the baseline; None when the baseline has no such case."""
    candidate: tuple[int, int]
    title: str = ""
    """The scorer as a person reads it (`contains "Paris" at answer`)."""


class ControlCounts(_Model):
    """A concurrent control the check took for the case: repeats of the baseline's version
    re-run beside as many fresh ones of the candidate, each scorer counted on both."""

    repeats: int
    """Repeats of the baseline's version the control took."""
    candidate_repeats: int
    """Repeats of the candidate taken beside it (counted apart from `Explanation.scorers`)."""
    scorers: list[ScorerCounts]
    """Per scorer: `baseline` the control's counts, `candidate` those of the repeats beside it."""


class SideExplained(_Model):
    """What one run's repeats of the case said."""

    run_id: str
    label: str | None
    input: str
    repeats: int
    passed: int
    """Repeats that passed every scorer."""
    failed: int
    """Repeats that failed (a scorer's fail or the call's error); the rest were invalid."""
    outputs: list[Said]
    """The distinct outputs, most common first."""
    misses: list[Miss]
    """Every scorer that did not pass a repeat, by repeat."""


class Explanation(_Model):
    """One case of a run against the suite's baseline, in the outputs themselves."""

    version: int = EXPLAIN_VERSION
    suite: str
    case_id: str
    baseline: SideExplained | None
    """None when the baseline run has no such case (the case was added since)."""
    candidate: SideExplained
    scorers: list[ScorerCounts]
    """The candidate's scorers, applied to both sides as the code is now."""
    diff_of: str
    """Which two outputs the diff compares, in words."""
    diff: list[str]
    """A unified diff, one line per item; empty when the two outputs are the same. JSON outputs
    are compared pretty-printed, so that a changed field is a changed line."""
    diff_cut: int = 0
    """Lines of the diff left out past `DIFF_LINES`."""
    control: ControlCounts | None = None
    """The concurrent control the check took for this case, if it took one."""
    unmeasured: str | None = None
    """Why the candidate's repeats are too few to judge, in one line, in the words a comparison
    uses: infrastructure errors left it fewer valid repeats than `min_valid` (`explain` then
    exits 3)."""


def _windows(
    cand: RunRecord, case_id: str
) -> tuple[tuple[int, int, int, int] | None, tuple[int, int, int, int] | None]:
    """A sequential check's windows of a case: those of the look its verdict comes from (the
    candidate's first and end repeat, then the deep baseline's), and its concurrent control's
    (the candidate's beside it, then the control's in the baseline's directory)."""
    record = cand.sequential
    if record is None or case_id not in record.last_look:
        return None, None
    look = record.looks[record.last_look[case_id]]
    return look.windows.get(case_id), record.controls.get(case_id)


def _window(case: CaseRecord, start: int, end: int) -> CaseRecord:
    return case.model_copy(update={"start": start, "repeats": end})


def explain_case(
    store: Store, base: RunRecord, cand: RunRecord, case_id: str, *, min_valid: int
) -> Explanation:
    """Explain `case_id` of `cand` against `base`: both scored with the candidate's scorers;
    the candidate judged unmeasured as a comparison judges it, by `min_valid`. A sequential
    check's case is counted over the repeats its verdict rests on (the deep baseline's pool,
    the candidate's repeats before its control), and its concurrent control apart."""
    cand_case = next(c for c in cand.cases if c.case_id == case_id)
    base_case = next((c for c in base.cases if c.case_id == case_id), None)
    windows, control = _windows(cand, case_id)
    if base_case is not None and windows is not None:
        base_case = _window(base_case, windows[2], windows[3])
    cases = [cand_case] if base_case is None else [cand_case, base_case]
    control_case = None
    if base_case is not None and control is not None:
        control_case = _window(base_case, control[2], control[3])
        cases.append(control_case)
    require_samples(store, cases)
    uses = {case_id: cand_case.scorers}
    # one case per band_tasks call: the control is the baseline's case over another window
    runs = (cand, base, base)[: len(cases)]
    sides = [band_tasks(store, r.suite, [c], uses) for r, c in zip(runs, cases, strict=True)]
    run_tasks(store, [task for side in sides for task in side.tasks])
    cand_bands = sides[0]
    candidate, cand_whole = _side(store, cand, cand_case, cand_bands.scores[case_id])
    baseline: SideExplained | None = None
    base_whole: list[_Whole] = []
    controlled: ControlCounts | None = None
    if base_case is not None:
        baseline, base_whole = _side(store, base, base_case, sides[1].scores[case_id])
        if control is not None and control_case is not None:
            beside, _ = _side(store, base, control_case, sides[2].scores[case_id])
            controlled = ControlCounts(
                repeats=control[3] - control[2],
                candidate_repeats=control[1] - control[0],
                scorers=_counts(cand_case.scorers, beside, candidate, (control[0], control[1])),
            )
    diff_of, diff = _diff(baseline, candidate, base_whole, cand_whole)
    band = store.read_model(cand_bands.bands[case_id], CaseBand)
    judged = (windows[0], windows[1]) if windows is not None else None
    return Explanation(
        suite=cand.suite,
        case_id=case_id,
        baseline=baseline,
        candidate=candidate,
        scorers=_counts(cand_case.scorers, baseline, candidate, judged),
        diff_of=diff_of,
        diff=diff[:DIFF_LINES],
        diff_cut=max(0, len(diff) - DIFF_LINES),
        control=controlled,
        unmeasured=unmeasured_cause(measured_bands([band]), min_valid),
    )


def _said(sample: RawSample) -> str:
    text = sample.output.text.rstrip()
    if not text and sample.outcome is not Outcome.OK:
        return f"[{sample.outcome.value}: {sample.error or 'no output'}]"
    return text


#: A distinct output whole, with the first sample that printed it (what the diff reads).
_Whole = tuple[str, RawSample]


def _side(
    store: Store, run: RunRecord, case: CaseRecord, score_paths: Sequence[str]
) -> tuple[SideExplained, list[_Whole]]:
    """One side, and each of its distinct outputs whole, in the order of `outputs`."""
    files = [store.read_model(Path(p), ScoreFile) for p in score_paths]
    paths = store.sample_paths(case)
    groups: dict[str, list[int]] = {}
    failing: set[int] = set()
    samples: dict[str, RawSample] = {}
    misses: list[Miss] = []
    passed = 0
    for index, path in enumerate(paths):
        repeat = case.start + index  # a window may start past r0 (a deep baseline's newest repeats)
        sample = read_sample(path)
        text = _said(sample)
        groups.setdefault(text, []).append(repeat)
        samples.setdefault(text, sample)
        scores = [(f.scorer.label, f.repeats[index]) for f in files]
        status, _ = repeat_status(scores)
        passed += status == "pass"
        if status == "fail":
            failing.add(repeat)
        misses += _misses(repeat, scores)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    outputs = [
        Said(
            text=text[:SHOWN_CHARS],
            chars=len(text),
            repeats=repeats,
            failing=[r for r in repeats if r in failing],
        )
        for text, repeats in ordered
    ]
    side = SideExplained(
        run_id=run.run_id,
        label=run.label,
        input=case.input,
        repeats=len(paths),
        passed=passed,
        failed=len(failing),
        outputs=outputs,
        misses=misses,
    )
    return side, [(text, samples[text]) for text, _ in ordered]


def _misses(repeat: int, scores: Sequence[tuple[str, RepeatScore]]) -> list[Miss]:
    """The scorers that did not pass one repeat; a failed call once, not once per scorer."""
    for _, score in scores:
        if score.status in (RepeatStatus.TARGET_ERROR, RepeatStatus.INFRA_ERROR):
            return [Miss(repeat=repeat, scorer="", status=score.status, detail=score.detail)]
    return [
        Miss(repeat=repeat, scorer=label, status=score.status, detail=score.detail)
        for label, score in scores
        if score.status is not RepeatStatus.PASS
    ]


def _counts(
    uses: Sequence[ScorerUse],
    baseline: SideExplained | None,
    candidate: SideExplained,
    window: tuple[int, int] | None = None,
) -> list[ScorerCounts]:
    """Each scorer's (passed, valid) on both sides; the candidate's over `window`'s repeats
    (first, end) when given, else over all of them."""

    def count(side: SideExplained, label: str, span: tuple[int, int] | None) -> tuple[int, int]:
        missed = [m for m in side.misses if m.scorer in (label, "")]
        total = side.repeats
        if span is not None:
            missed = [m for m in missed if span[0] <= m.repeat < span[1]]
            total = span[1] - span[0]
        invalid = sum(
            m.status in (RepeatStatus.INFRA_ERROR, RepeatStatus.SCORER_ERROR) for m in missed
        )
        return total - len(missed), total - invalid

    return [
        ScorerCounts(
            scorer=use.label,
            title=scorer_title(use.name, use.params),
            baseline=count(baseline, use.label, None) if baseline is not None else None,
            candidate=count(candidate, use.label, window),
        )
        for use in uses
    ]


def _comparable(text: str, sample: RawSample) -> list[str]:
    """The lines a diff compares: JSON pretty-printed, so that a changed field is one line."""
    if sample.parsed is not None and sample.outcome is Outcome.OK:
        text = json.dumps(sample.parsed, indent=2, ensure_ascii=False)
    return text.splitlines()


def _diff(
    baseline: SideExplained | None,
    candidate: SideExplained,
    base_whole: Sequence[_Whole],
    cand_whole: Sequence[_Whole],
) -> tuple[str, list[str]]:
    """The baseline's most common output against the candidate's most common failing one (its
    most common one when none failed); when those two are the same, the baseline's most common
    passing output instead, if it has one."""
    if baseline is None or not baseline.outputs or not candidate.outputs:
        return "no diff: the baseline has no output of this case", []
    outputs = candidate.outputs

    def rank(i: int) -> tuple[bool, bool, int]:
        # failing first; among those, what a call that ended well said before a failed call's
        # error; then the most repeats (`outputs` is sorted by count, so ties go to the first)
        said = outputs[i]
        return bool(said.failing), cand_whole[i][1].outcome is Outcome.OK, len(said.failing)

    index = max(range(len(outputs)), key=rank)
    if not outputs[index].failing:
        index, which = 0, "most common output (none failed)"
    else:
        which = "most common failing output"
    mine, whose = 0, "most common output"
    passing = [i for i, o in enumerate(baseline.outputs) if len(o.failing) < o.count]
    if base_whole[0][0] == cand_whole[index][0] and passing and passing[0] != 0:
        # the same output failed on both sides: show what the baseline said when it passed
        mine, whose = passing[0], "most common passing output"
    ours, theirs = baseline.outputs[mine], outputs[index]
    lines = difflib.unified_diff(
        _comparable(*base_whole[mine]),
        _comparable(*cand_whole[index]),
        fromfile=f"baseline {baseline.run_id} r{ours.repeats[0]}",
        tofile=f"candidate {candidate.run_id} r{theirs.repeats[0]}",
        lineterm="",
    )
    return f"the baseline's {whose} -> the candidate's {which}", [_cut(line) for line in lines]


def _cut(line: str) -> str:
    return line if len(line) <= DIFF_LINE_CHARS else line[: DIFF_LINE_CHARS - 3] + "..."
