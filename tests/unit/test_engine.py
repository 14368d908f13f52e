"""The doit adapter's file naming: derived files are found again by what they are computed from."""

from __future__ import annotations

from pathlib import Path

from noisefloor.model.records import CaseRecord, ScorerUse
from noisefloor.pipeline.banding import build_scorer
from noisefloor.pipeline.engine import band_tasks, score_file
from noisefloor.store.store import Store

SUITE = "naming"


def _case(store: Store, use: ScorerUse, case_id: str = "case-1") -> CaseRecord:
    sample_dir = store.sample_dir(SUITE, case_id, "t" * 16, "k" * 16, 0)
    return CaseRecord(
        case_id=case_id,
        case_key="k" * 16,
        input="question",
        repeats=3,
        sample_dir=store.rel(sample_dir),
        scorers=[use],
    )


def _use(needle: str) -> ScorerUse:
    built = build_scorer(
        ScorerUse(label="0:contains", name="contains", params={"needle": needle}, impl_hash="")
    )
    return ScorerUse(
        label="0:contains",
        name="contains",
        params=built.spec.params,
        impl_hash=built.spec.impl_hash,
        min_effect=0.2,
    )


def _score_targets(store: Store, case: CaseRecord) -> list[str]:
    tasks = band_tasks(store, SUITE, [case], {}).tasks
    return [t["targets"][0] for t in tasks if t["name"].startswith("score:")]


def test_score_file_is_where_the_score_task_writes(tmp_path: Path) -> None:
    store = Store(tmp_path)
    case = _case(store, _use("Paris"))
    assert _score_targets(store, case) == [str(score_file(store, SUITE, case, case.scorers[0]))]


def test_score_files_differ_by_scorer_and_case_not_by_gate(tmp_path: Path) -> None:
    store = Store(tmp_path)
    use = _use("Paris")
    paths = {
        str(score_file(store, SUITE, _case(store, use), use)),
        str(score_file(store, SUITE, _case(store, _use("Rome")), _use("Rome"))),
        str(score_file(store, SUITE, _case(store, use, "case-2"), use)),
    }
    assert len(paths) == 3
    # gate thresholds tune verdicts, not scores: editing one finds the same score file
    regated = use.model_copy(update={"min_effect": 0.3, "suspect_drop": 0.5})
    assert score_file(store, SUITE, _case(store, use), regated) == score_file(
        store, SUITE, _case(store, use), use
    )
    # flat: one directory per kind and suite, the case id first
    assert {Path(p).parent for p in paths} == {store.derived_dir("scores", SUITE)}
    assert all(Path(p).name.startswith(("case-1@", "case-2@")) for p in paths)


def test_a_recorded_scorer_names_its_own_file_after_the_code_changed(tmp_path: Path) -> None:
    """The ledger looks a run's scores up by the scorer the run recorded, not today's code."""
    store = Store(tmp_path)
    use = _use("Paris")
    case = _case(store, use)
    stale = use.model_copy(update={"impl_hash": "0" * 16})
    assert score_file(store, SUITE, case, stale) != score_file(store, SUITE, case, use)
    stale_case = case.model_copy(update={"scorers": [stale]})
    # the engine scores with the code as it is now: the file of the current hash
    assert _score_targets(store, stale_case) == [str(score_file(store, SUITE, case, use))]
