"""`noisefloor explain CASE [RUN]`: which runs a case is explained from (the newest run holding
it, against its suite's baseline), with near names when a case or run is not found; and the
failing cases of a comparison explained for its job summary.
"""

from __future__ import annotations

import difflib

from noisefloor.errors import NoisefloorError, StoreError, UsageError
from noisefloor.model.records import RunRecord
from noisefloor.model.report import Report
from noisefloor.operations.resolve import baseline_of, resolve_run
from noisefloor.pipeline.explain import Explanation, explain_case
from noisefloor.settings import RuleSettings
from noisefloor.store.store import ReadOnlyStore, Store

__all__ = ["explain", "explain_failing"]


def explain(
    store: ReadOnlyStore,
    case_id: str,
    run: str | None = None,
    baseline: str | None = None,
    suite: str | None = None,
    *,
    min_valid: int,
) -> Explanation:
    """Explain `case_id` of RUN (default: the newest sampled run holding it, of `suite` when
    given) against the baseline of RUN's suite (or `baseline`, a run id or label), judging it
    unmeasured below `min_valid` valid repeats as a comparison would. Never calls a target."""
    cand = _named_run(store, run, suite) if run else _newest_holding(store, case_id, suite)
    if suite is not None and cand.suite != suite:
        raise UsageError(
            f"run {cand.run_id} belongs to suite {cand.suite!r}, not {suite!r}",
            hint="name a run of that suite, or leave --suite out",
        )
    if all(c.case_id != case_id for c in cand.cases):
        raise UsageError(
            f"run {cand.run_id} has no case {case_id!r}",
            hint=_near(case_id, [c.case_id for c in cand.cases], "its cases"),
        )
    named = _named_run(store, baseline, cand.suite) if baseline else None
    base = baseline_of(store, cand, named, f"explain {case_id!r}")
    return explain_case(store, base, cand, case_id, min_valid=min_valid)


def explain_failing(
    store: Store, report: Report, case_ids: list[str]
) -> dict[str, Explanation | str]:
    """Each of `case_ids` of a comparison explained, in order, or why it cannot be (its outputs
    are gone: the verdict stands). Nothing when the report compared no two runs."""
    if not case_ids or report.baseline is None or report.candidate is None:
        return {}
    base, cand = store.find_run(report.baseline), store.find_run(report.candidate)
    # (a first check's report, which compared nothing, has no settings)
    min_valid = report.settings.min_valid if report.settings else RuleSettings.min_valid
    found: dict[str, Explanation | str] = {}
    for case_id in case_ids:
        try:
            found[case_id] = explain_case(store, base, cand, case_id, min_valid=min_valid)
        except NoisefloorError as exc:
            found[case_id] = exc.message
    return found


def _named_run(store: ReadOnlyStore, ref: str, suite: str | None = None) -> RunRecord:
    """A run id, a unique prefix of one, or a label; unknown ones get the near names."""
    try:
        return resolve_run(store, ref, suite)
    except StoreError as exc:
        names = [run_id for _, run_id in store.runs(suite)]
        names += [label for s, label, _ in store.labels() if suite in (None, s)]
        raise UsageError(exc.message, hint=_near(ref, names, "runs and labels")) from None


def _newest_holding(store: ReadOnlyStore, case_id: str, suite: str | None) -> RunRecord:
    """The newest sampled run (of `suite`, or of any) that has the case; a re-scoring of one
    only when no sampled run has it."""
    seen: dict[str, None] = {}
    rescored: RunRecord | None = None
    for suite_name, run_id in reversed(store.runs(suite)):
        run = store.load_run(suite_name, run_id)
        ids = [c.case_id for c in run.cases]
        if case_id in ids and run.rescored_from is None:
            return run
        if case_id in ids and rescored is None:
            rescored = run
        seen.update(dict.fromkeys(ids))
    if rescored is not None:
        return rescored
    if not seen:
        where = f"of suite {suite!r} " if suite else ""
        raise StoreError(
            f"no runs {where}under {store.root}", hint="`noisefloor run SUITE` makes one"
        )
    raise UsageError(
        f"no stored run has a case {case_id!r}", hint=_near(case_id, list(seen), "cases")
    )


def _near(name: str, names: list[str], what: str) -> str:
    near = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
    if near:
        return "did you mean " + ", ".join(near) + "?"
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return f"{what}: {shown}" if names else f"there are no {what}"
