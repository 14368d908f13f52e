"""`noisefloor show`: the stored outputs of a run, stdout and stderr, exactly as the target printed,
and its scorers' errors with their tracebacks. Bytes that were not UTF-8 are flagged as such.
"""

from __future__ import annotations

from noisefloor.errors import StoreError
from noisefloor.model.records import CaseRecord, RepeatStatus, RunRecord, ScoreFile
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.engine import score_file
from noisefloor.store.store import Store
from noisefloor.targets.kinds import kind_named

__all__ = ["render_show"]


def render_show(store: Store, run: RunRecord, case_id: str | None = None) -> str:
    """Every repeat of every case (or of one case) with its outcome, timing and output."""

    cases = [c for c in run.cases if case_id is None or c.case_id == case_id]
    if case_id is not None and not cases:
        known = ", ".join(c.case_id for c in run.cases[:10])
        raise StoreError(f"run {run.run_id} has no case {case_id!r}", hint=f"its cases: {known}")
    out = [
        f"{run.run_id}  suite {run.suite}  target {run.target.kind} {run.target.key}  "
        f"epoch {run.epoch}  {run.calls} calls"
    ]
    for case in cases:
        out.append(f"\n== {case.case_id}  input: {case.input!r}")
        errors = _scorer_errors(store, run.suite, case)
        for repeat, path in enumerate(store.sample_paths(case), case.start):
            if not path.exists():
                out.append(f"-- repeat {repeat}: (no sample: the run was interrupted before it)")
                continue
            s = read_sample(path)
            cpu = f", cpu {s.cpu_s:.3f}s" if s.cpu_s is not None else ""
            code = f", exit {s.exit_code}" if s.exit_code is not None else ""
            out.append(f"-- repeat {repeat} [{s.outcome.value}] {s.wall_s:.3f}s{cpu}{code}")
            if s.error:
                out.append(f"   error: {s.error}")
            out_name = kind_named(s.kind).output_name
            for name, stream in ((out_name, s.output), ("stderr", s.stderr)):
                if stream is None or (not stream.text and not stream.size):
                    continue
                notes = []
                if stream.b64 is not None:
                    notes.append("not valid UTF-8; exact bytes kept in the sample file")
                if stream.truncated:
                    notes.append(f"truncated: {stream.size} bytes produced")
                note = f" ({'; '.join(notes)})" if notes else ""
                out.append(f"   {name}{note}:")
                out.extend(f"   | {line}" for line in stream.text.splitlines())
            for label, detail, trace in errors.get(repeat, []):
                out.append(f"   scorer error ({label}): {detail}")
                out.extend(f"   ! {line}" for line in (trace or "").splitlines())
    return "\n".join(out) + "\n"


def _scorer_errors(
    store: Store, suite: str, case: CaseRecord
) -> dict[int, list[tuple[str, str, str | None]]]:
    """The scorer errors of a case's repeats, from the run's own score files (by the scorers as
    it recorded them, so no plugin is imported): label, detail and traceback by repeat."""

    found: dict[int, list[tuple[str, str, str | None]]] = {}
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
                found.setdefault(r.repeat, []).append((use.label, r.detail, r.traceback))
    return found
