"""Which stored runs a command means (a run id, a unique prefix of one, or a label), and the
comparisons of stored runs that resolve them: `diff` and the quarantine-lane `compare`.
"""

from __future__ import annotations

from noisefloor.errors import BaselineMissing, StoreError, UsageError
from noisefloor.model.records import RunRecord
from noisefloor.model.report import Report
from noisefloor.operations.sequential_check import rejudge
from noisefloor.pipeline.comparison import compare_runs
from noisefloor.rules.exit_policy import finished_report
from noisefloor.settings import RuleName, RuleSettings
from noisefloor.store.store import Store

__all__ = ["compare_labels", "diff_runs", "newest_sampled", "resolve_run"]


def baseline_of(store: Store, cand: RunRecord, named: RunRecord | None, verb: str) -> RunRecord:
    """What `cand` is compared with: the `named` run, else its suite's baseline; never `cand`
    itself, which leaves nothing to `verb`."""
    base = named
    if base is None:
        pointer = store.baseline(cand.suite)
        if pointer is None:
            raise BaselineMissing(
                f"no baseline for suite {cand.suite!r} to {verb} against",
                hint="pass --baseline RUN or set one with `noisefloor baseline set RUN`",
            )
        base = store.load_run(cand.suite, pointer.run_id)
    if base.run_id == cand.run_id:
        raise UsageError(
            f"run {cand.run_id} is the baseline of {cand.suite!r} itself: nothing to {verb}",
            hint="run the suite again, or name an earlier run with --baseline RUN",
        )
    return base


def resolve_run(store: Store, ref: str, suite: str | None = None) -> RunRecord:
    """A run id, a unique prefix of one, or a label."""
    labelled = store.find_label(ref, suite) if _is_name(ref) else None
    return labelled or store.find_run(ref)


def newest_sampled(store: Store, suite: str | None = None) -> RunRecord | None:
    """The newest run (of one suite, or of any) that sampled its target: a `rescore` is a
    re-scored copy of another run, which would otherwise be compared with its own baseline
    by surprise. The newest run of all when every one is a re-scoring."""
    found = store.runs(suite)
    for suite_name, run_id in reversed(found):
        run = store.load_run(suite_name, run_id)
        if run.rescored_from is None:
            return run
    return store.load_run(*found[-1]) if found else None


def _is_name(text: str) -> bool:
    return bool(text) and all(ch.isalnum() or ch in "._-" for ch in text)


def diff_runs(
    store: Store,
    candidate: str | None,
    baseline: str | None,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
    continue_on_scorer_error: bool = False,
) -> Report:
    """Compare stored runs: the newest sampled run (or CANDIDATE) against the baseline (or
    --baseline).

    A run a sequential check took is judged by that check's looks under rule exact, against
    the baseline the check used (the pointer may have moved since) unless --baseline names
    another; so a borderline verdict does not flip between `check` and `diff` or `report`.
    """
    cand = resolve_run(store, candidate) if candidate else newest_sampled(store)
    if cand is None:
        raise StoreError(f"no runs under {store.root}", hint="`noisefloor run SUITE` makes one")
    named = resolve_run(store, baseline, cand.suite) if baseline else None
    base = baseline_of(store, cand, named, "compare")
    judged = cand.sequential
    if judged is not None and settings.rule is RuleName.EXACT:
        # a sequential check's run is judged again by its own looks, against the baseline it
        # was checked against unless another is named: the same flags give its verdicts
        if named is None and base.run_id != judged.baseline:
            base = store.load_run(cand.suite, judged.baseline)
        if base.run_id == judged.baseline:
            parts = rejudge(store, base, cand, settings, allow_target_change=allow_target_change)
            return finished_report(parts, settings, continue_on_scorer_error)
    return compare_runs(
        store,
        base,
        cand,
        settings,
        allow_target_change=allow_target_change,
        continue_on_scorer_error=continue_on_scorer_error,
    )


def compare_labels(
    store: Store,
    baseline: str,
    current: str,
    settings: RuleSettings,
    *,
    suite: str | None = None,
    allow_target_change: bool = False,
) -> Report:
    """The quarantine-lane `compare`: two labelled runs."""
    found = []
    for label in (baseline, current):
        run = store.find_label(label, suite)
        if run is None:
            raise StoreError(
                f"no run is labelled {label!r}",
                hint="`noisefloor record SUITE --label NAME` makes one",
            )
        found.append(run)
    return compare_runs(
        store,
        found[0],
        found[1],
        settings,
        allow_target_change=allow_target_change,
        continue_on_scorer_error=True,
    )
