"""`noisefloor show`: the stored outputs of a run, stdout and stderr, exactly as the target printed,
and its scorers' errors with their tracebacks. Bytes that were not UTF-8 are flagged as such.
"""

from __future__ import annotations

from noisefloor.model.outputs import RunOutputs, StreamOutput

__all__ = ["render_show"]


def render_show(run: RunOutputs) -> str:
    """Every repeat of every case shown with its outcome, timing and output."""
    out = [
        f"{run.run_id}  suite {run.suite}  target {run.kind} {run.target_key}  "
        f"epoch {run.epoch}  {run.calls} calls"
    ]
    for case in run.cases:
        out.append(f"\n== {case.case_id}  input: {case.input!r}")
        for r in case.repeats:
            if r.outcome is None:
                out.append(f"-- repeat {r.repeat}: (no sample: the run was interrupted before it)")
                continue
            cpu = f", cpu {r.cpu_s:.3f}s" if r.cpu_s is not None else ""
            code = f", exit {r.exit_code}" if r.exit_code is not None else ""
            out.append(f"-- repeat {r.repeat} [{r.outcome}] {r.wall_s:.3f}s{cpu}{code}")
            if r.error:
                out.append(f"   error: {r.error}")
            for stream in r.streams:
                out.append(f"   {stream.name}{_notes(stream)}:")
                out.extend(f"   | {line}" for line in stream.text.splitlines())
            for error in r.scorer_errors:
                out.append(f"   scorer error ({error.label}): {error.detail}")
                out.extend(f"   ! {line}" for line in (error.traceback or "").splitlines())
    return "\n".join(out) + "\n"


def _notes(stream: StreamOutput) -> str:
    notes = []
    if stream.not_utf8:
        notes.append("not valid UTF-8; exact bytes kept in the sample file")
    if stream.truncated:
        notes.append(f"truncated: {stream.size} bytes produced")
    return f" ({'; '.join(notes)})" if notes else ""
