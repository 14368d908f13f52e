"""`noisefloor show`: a run's stored outputs read back from its sample files, and its scorers'
errors from its own score files, for the renderer to print.
"""

from __future__ import annotations

from noisefloor.errors import StoreError
from noisefloor.model.outputs import (
    CaseOutputs,
    RepeatOutput,
    RunOutputs,
    ScorerError,
    StreamOutput,
)
from noisefloor.model.records import CaseRecord, RepeatStatus, RunRecord, ScoreFile
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.engine import score_file
from noisefloor.store.store import Store
from noisefloor.targets.kinds import kind_named

__all__ = ["run_outputs"]


def run_outputs(store: Store, run: RunRecord, case_id: str | None = None) -> RunOutputs:
    """Every repeat of every case of `run` (or of the case `case_id`) as stored.

    Raises:
        StoreError: The run has no case `case_id`.
    """
    cases = [c for c in run.cases if case_id is None or c.case_id == case_id]
    if case_id is not None and not cases:
        known = ", ".join(c.case_id for c in run.cases[:10])
        raise StoreError(f"run {run.run_id} has no case {case_id!r}", hint=f"its cases: {known}")
    return RunOutputs(
        run_id=run.run_id,
        suite=run.suite,
        kind=run.target.kind,
        target_key=run.target.key,
        epoch=run.epoch,
        calls=run.calls,
        cases=tuple(_case(store, run.suite, case) for case in cases),
    )


def _case(store: Store, suite: str, case: CaseRecord) -> CaseOutputs:
    errors = _scorer_errors(store, suite, case)
    repeats = []
    for repeat, path in enumerate(store.sample_paths(case), case.start):
        if not path.exists():
            repeats.append(RepeatOutput(repeat, None))
            continue
        s = read_sample(path)
        named = ((kind_named(s.kind).output_name, s.output), ("stderr", s.stderr))
        streams = tuple(
            StreamOutput(name, stream.text, stream.b64 is not None, stream.truncated, stream.size)
            for name, stream in named
            if stream is not None and (stream.text or stream.size)
        )
        repeats.append(
            RepeatOutput(
                repeat,
                s.outcome.value,
                s.wall_s,
                s.cpu_s,
                s.exit_code,
                s.error,
                streams,
                tuple(errors.get(repeat, [])),
            )
        )
    return CaseOutputs(case.case_id, case.input, tuple(repeats))


def _scorer_errors(store: Store, suite: str, case: CaseRecord) -> dict[int, list[ScorerError]]:
    """The scorer errors of a case's repeats, from the run's own score files (by the scorers as
    it recorded them, so no plugin is imported), by repeat."""
    found: dict[int, list[ScorerError]] = {}
    for use in case.scorers:
        path = score_file(store, suite, case, use)
        if not path.is_file():
            continue
        try:
            scores = store.read_model(path, ScoreFile)
        except StoreError:  # a damaged score file is made again by the next run
            continue
        for r in scores.repeats:
            if r.status is RepeatStatus.SCORER_ERROR:
                found.setdefault(r.repeat, []).append(ScorerError(use.label, r.detail, r.traceback))
    return found
