"""The repeats behind each verdict of a report, read back from the store for the HTML page: how
each repeat counted, which scorers failed it and why, and what the target printed, cut to a bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from noisefloor.model.records import CaseRecord, RepeatScore, RepeatStatus, ScoreFile, ScorerUse
from noisefloor.model.records import repeat_status as _repeat_status
from noisefloor.model.repeats import Repeat, Shown, SideRepeats
from noisefloor.model.report import Report
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.engine import compared_score_file
from noisefloor.report.html import CASES_IN_DETAIL
from noisefloor.store.store import Store
from noisefloor.targets.base import Stream
from noisefloor.targets.kinds import kind_named

__all__ = ["OUTPUT_CHARS", "REPEATS_SHOWN", "repeats_behind", "side_repeats"]

#: Characters of one stream a report shows; `noisefloor show` prints the rest.
OUTPUT_CHARS = 2000
#: Repeats of one side a report lists, failing ones first; a page for big suites stays small.
REPEATS_SHOWN = 30


def _shown(name: str, stream: Stream | None) -> Shown | None:
    if stream is None or (not stream.text and not stream.size):
        return None
    notes = []
    text = stream.text
    if len(text) > OUTPUT_CHARS:
        notes.append(f"cut to {OUTPUT_CHARS} of {len(text)} characters")
        text = text[:OUTPUT_CHARS]
    if stream.b64 is not None:
        notes.append("not valid UTF-8: shown with replacement characters")
    if stream.truncated:
        notes.append(f"the target printed {stream.size} bytes; the store kept the first ones")
    return Shown(name, text, tuple(notes))


def _scores(
    store: Store, suite: str, case: CaseRecord, uses: Sequence[ScorerUse]
) -> list[tuple[str, list[RepeatScore]]]:
    out = []
    for use in uses:
        path = compared_score_file(store, suite, case, use)
        if path.exists():
            out.append((use.label, store.read_model(path, ScoreFile).repeats))
    return out


def side_repeats(
    store: Store, suite: str, case: CaseRecord, uses: Sequence[ScorerUse]
) -> tuple[list[Repeat], int]:
    """The repeats of one side of a case scored with `uses`, and how many there are in all.

    At most `REPEATS_SHOWN`, failing and invalid ones first, listed in repeat order.
    """
    scores = _scores(store, suite, case, uses)
    paths = store.sample_paths(case)
    judged = []
    for index in range(len(paths)):
        repeat = case.start + index  # a window may start past r0 (a deep baseline's newest repeats)
        of_repeat = [(label, rs[index]) for label, rs in scores if index < len(rs)]
        status, reason = _repeat_status(of_repeat)
        failures = tuple(
            (label, score.detail)
            for label, score in of_repeat
            if score.status is not RepeatStatus.PASS
        )
        judged.append((repeat, status, reason, failures))
    shown = sorted(judged, key=lambda r: (r[1] == "pass", r[0]))[:REPEATS_SHOWN]
    repeats = []
    for repeat, status, reason, failures in sorted(shown):
        path = paths[repeat - case.start]
        if not path.exists():
            continue
        sample = read_sample(path)
        streams = (
            _shown(kind_named(sample.kind).output_name, sample.output),
            _shown("stderr", sample.stderr),
            Shown("error", sample.error, ()) if sample.error else None,
        )
        repeats.append(
            Repeat(
                repeat=repeat,
                status=status,
                reason=reason,
                failures=failures,
                outcome=sample.outcome.value,
                streams=tuple(s for s in streams if s is not None),
            )
        )
    return repeats, len(paths)


def repeats_behind(store: Store, report: Report) -> dict[str, list[SideRepeats]]:
    """Both sides' repeats of each case the HTML page shows in detail and that is not unchanged,
    by case id (an adopted run is its own baseline: its repeats are listed once)."""

    base_cases = _cases(store, report.suite, report.baseline)
    cand_cases = _cases(store, report.suite, report.candidate)
    base_run = None if report.adopted else report.baseline
    found = {}
    for case in report.cases[:CASES_IN_DETAIL]:
        if case.verdict == "unchanged":
            continue
        cand, base = cand_cases.get(case.case_id), base_cases.get(case.case_id)
        either = cand or base
        uses: list[ScorerUse] = either.scorers if either is not None else []
        sides = []
        for name, run_id, record in (
            ("baseline", base_run, base),
            ("candidate", report.candidate, cand),
        ):
            if record is None or run_id is None:
                continue
            shown, total = side_repeats(store, report.suite, record, uses)
            sides.append(SideRepeats(name, run_id, shown, total))
        found[case.case_id] = sides
    return found


def _cases(store: Store, suite: str, run_id: str | None) -> dict[str, CaseRecord]:
    if run_id is None:
        return {}
    return {c.case_id: c for c in store.load_run(suite, run_id).cases}
