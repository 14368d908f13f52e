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
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.comparison import require_samples
from noisefloor.pipeline.engine import band_tasks, run_tasks
from noisefloor.rules.exit_policy import measured_bands, unmeasured_cause
from noisefloor.store.store import Store
from noisefloor.targets.base import Outcome, RawSample

__all__ = ["Explanation", "Miss", "Said", "ScorerCounts", "SideExplained", "explain_case"]

EXPLAIN_VERSION = 1
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
    """One scorer's passing repeats out of the valid ones, on each side."""

    scorer: str
    baseline: tuple[int, int] | None
    """(passed, valid) on the baseline; None when the baseline has no such case."""
    candidate: tuple[int, int]


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
    unmeasured: str | None = None
    """Why the candidate's repeats are too few to judge, in one line, in the words a comparison
    uses: infrastructure errors left it fewer valid repeats than `min_valid` (`explain` then
    exits 3)."""


def explain_case(
    store: Store, base: RunRecord, cand: RunRecord, case_id: str, *, min_valid: int
) -> Explanation:
    """Explain `case_id` of `cand` against `base`: both scored with the candidate's scorers;
    the candidate judged unmeasured as a comparison judges it, by `min_valid`."""
    cand_case = next(c for c in cand.cases if c.case_id == case_id)
    base_case = next((c for c in base.cases if c.case_id == case_id), None)
    cases = [cand_case] if base_case is None else [cand_case, base_case]
    require_samples(store, cases)
    uses = {case_id: cand_case.scorers}
    cand_bands = band_tasks(store, cand.suite, [cand_case], uses)
    base_bands = band_tasks(store, base.suite, cases[1:], uses)
    run_tasks(store, cand_bands.tasks + base_bands.tasks)
    candidate, cand_whole = _side(store, cand, cand_case, cand_bands.scores[case_id])
    baseline: SideExplained | None = None
    base_whole: list[_Whole] = []
    if base_case is not None:
        baseline, base_whole = _side(store, base, base_case, base_bands.scores[case_id])
    diff_of, diff = _diff(baseline, candidate, base_whole, cand_whole)
    band = store.read_model(cand_bands.bands[case_id], CaseBand)
    return Explanation(
        suite=cand.suite,
        case_id=case_id,
        baseline=baseline,
        candidate=candidate,
        scorers=_counts(cand_case.scorers, baseline, candidate),
        diff_of=diff_of,
        diff=diff[:DIFF_LINES],
        diff_cut=max(0, len(diff) - DIFF_LINES),
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
    uses: Sequence[ScorerUse], baseline: SideExplained | None, candidate: SideExplained
) -> list[ScorerCounts]:
    def count(side: SideExplained, label: str) -> tuple[int, int]:
        missed = [m for m in side.misses if m.scorer in (label, "")]
        invalid = sum(
            m.status in (RepeatStatus.INFRA_ERROR, RepeatStatus.SCORER_ERROR) for m in missed
        )
        return side.repeats - len(missed), side.repeats - invalid

    return [
        ScorerCounts(
            scorer=use.label,
            baseline=count(baseline, use.label) if baseline is not None else None,
            candidate=count(candidate, use.label),
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
