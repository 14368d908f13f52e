"""`noisefloor history CASE` as text: each run, newest first, with its pass rate and Wilson
interval, then the case's flakiness line; in the terminal, as markdown or as JSON.

The figures come from `noisefloor.rules.history`; the suite's page over time is `report/history_html.py`.
"""

from __future__ import annotations

from typing import Any

from noisefloor.report.json import render as render_json
from noisefloor.rules.history import CaseHistory, Flakiness, RunRate

__all__ = ["flakiness_line", "render", "short_key", "to_dict"]

#: Characters of a target version shown in text (the JSON keeps all of it).
_SHORT_KEY = 8


def short_key(target_key: str) -> str:
    """A target version as text shows it."""
    return target_key[:_SHORT_KEY]


def _rate(passes: int, valid: int, interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "no valid repeat"
    low, high = interval
    return f"{passes / valid:.2f} [{low:.2f}, {high:.2f}]"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def flakiness_line(f: Flakiness) -> str:
    """What the case's flakiness rests on, and whether it is flaky."""
    notes = []
    if f.invalid:
        notes.append(f"{_plural(f.invalid, 'invalid repeat')} left out")
    if f.shared:
        notes.append(f"{_plural(f.shared, 'sample')} shared by several runs, each counted once")
    text = (
        f"flakiness: {_rate(f.passes, f.valid, f.interval)}, {f.passes}/{f.valid} passed over "
        f"{_plural(f.valid, 'repeat')} from {_plural(f.runs, 'run')} of target version "
        f"{short_key(f.target_key)}" + (f" ({'; '.join(notes)})" if notes else "")
    )
    if f.flaky:
        return f"{text}: FLAKY"
    if not f.valid:
        return f"{text}: not measured"
    return f"{text}: not flaky (every repeat {'passed' if f.passes else 'failed'})"


def _passed(run: RunRate) -> str:
    return f"{run.passes}/{run.valid}" + (f" ({run.invalid} invalid)" if run.invalid else "")


def _header(h: CaseHistory) -> str:
    if len(h.runs) == h.total_runs:
        shown = _plural(h.total_runs, "run")
    elif len(h.runs) == 1:
        shown = f"the newest run of {h.total_runs}"
    else:
        shown = f"the newest {len(h.runs)} of {h.total_runs} runs"
    return f"history of case {h.case_id!r} in suite {h.suite!r}: {shown}, newest first"


def _terminal(h: CaseHistory, outputs: bool) -> str:
    out = [_header(h)]
    for run in h.runs:
        extra = "".join(
            f"  {name} {value}"
            for name, value in (("label", run.label), ("model", run.model))
            if value
        )
        out.append(
            f"  {run.run_id}  {run.started_at[:19].replace('T', ' ')}  {_passed(run)} passed  "
            f"{_rate(run.passes, run.valid, run.interval)}  target {short_key(run.target_key)}"
            + extra
        )
        for rep in run.repeats if outputs else ():
            text = (rep["output_text"] or "").replace("\n", " ")
            out.append(
                f"      r{rep['repeat_idx']} {rep['status']:<7} {rep['reason'] or ''}  | {text}"
            )
    out.append(flakiness_line(h.flakiness))
    return "\n".join(out) + "\n"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown(h: CaseHistory, outputs: bool) -> str:
    out = [
        f"### noisefloor history: `{h.case_id}` in `{h.suite}`",
        "",
        f"{_header(h)}.",
        "",
        "| run | started (UTC) | target | label | model | passed | rate | 95% CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in h.runs:
        rate = _rate(run.passes, run.valid, run.interval).split(" ", 1)
        out.append(
            f"| `{run.run_id}` | {run.started_at[:19].replace('T', ' ')} | "
            f"`{short_key(run.target_key)}` | {_cell(run.label or '-')} | {_cell(run.model or '-')} "
            f"| {_passed(run)} | {rate[0]} | {rate[1] if len(rate) > 1 else '-'} |"
        )
    out += ["", f"**{flakiness_line(h.flakiness)}**"]
    for run in h.runs if outputs else ():
        out += ["", f"#### repeats of `{run.run_id}`", "", "| repeat | status | reason | output |"]
        out.append("|---|---|---|---|")
        out += [
            f"| r{rep['repeat_idx']} | {rep['status']} | {_cell(rep['reason'] or '')} | "
            f"{_cell(rep['output_text'] or '')} |"
            for rep in run.repeats
        ]
    return "\n".join(out) + "\n"


def _interval(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval is not None else None


def to_dict(h: CaseHistory, outputs: bool = False) -> dict[str, Any]:
    """The history as the JSON output holds it; each run's repeats only with `outputs`."""
    runs = []
    for run in h.runs:
        entry: dict[str, Any] = {
            "run_id": run.run_id,
            "suite": run.suite,
            "label": run.label,
            "started_at": run.started_at,
            "target_key": run.target_key,
            "model": run.model,
            "passes": run.passes,
            "valid": run.valid,
            "invalid": run.invalid,
            "rate": run.rate,
            "wilson": _interval(run.interval),
        }
        if outputs:
            entry["repeats"] = [
                {k: rep[k] for k in ("repeat_idx", "status", "reason", "output_text")}
                for rep in run.repeats
            ]
        runs.append(entry)
    f = h.flakiness
    return {
        "suite": h.suite,
        "case_id": h.case_id,
        "total_runs": h.total_runs,
        "runs": runs,
        "flakiness": {
            "target_key": f.target_key,
            "runs": f.runs,
            "passes": f.passes,
            "valid": f.valid,
            "invalid": f.invalid,
            "shared": f.shared,
            "rate": f.rate,
            "wilson": _interval(f.interval),
            "flaky": f.flaky,
        },
    }


def render(h: CaseHistory, fmt: str, outputs: bool = False) -> str:
    """The history in one format: terminal, markdown or json."""
    if fmt == "json":
        return render_json(to_dict(h, outputs))
    if fmt == "markdown":
        return _markdown(h, outputs)
    return _terminal(h, outputs)
