"""The cases of a suite as a run records them: each case's sample directory (its cache key, from
its id and input) and its scorers, at the target version and epoch being sampled.
"""

from __future__ import annotations

from noisefloor.executors.redaction import Redactor
from noisefloor.model.records import CaseRecord, ScorerUse
from noisefloor.store.layout import short_hash
from noisefloor.store.store import Store
from noisefloor.suite.model import Case, Suite
from noisefloor.targets.source import BuiltTarget

__all__ = ["case_key", "case_records", "scorer_uses"]


def scorer_uses(case: Case) -> list[ScorerUse]:
    """The scorers of a case as a run records them."""
    return [
        ScorerUse(
            label=b.label,
            name=b.scorer.name,
            params=b.scorer.spec.params,
            impl_hash=b.scorer.spec.impl_hash,
            min_effect=b.min_effect,
            suspect_drop=b.suspect_drop,
        )
        for b in case.scorers
    ]


def case_key(case: Case, taken: str | None = None) -> str:
    """The cache key of what the target receives for a case: its id and input (`taken`, the
    input its samples were taken with, when that is not the suite's, as an import's may be)."""
    return short_hash({"case_id": case.id, "input": case.input if taken is None else taken})


def case_records(
    store: Store,
    suite: Suite,
    built: BuiltTarget,
    epoch: int,
    repeats: int | None = None,
    redactor: Redactor | None = None,
) -> list[CaseRecord]:
    """Each case as a run records it: its sample directory (the cache key) and its scorers."""
    redactor = redactor or Redactor(suite.redact, built.secrets)
    key = built.record.key
    cases = []
    for case in suite.cases:
        key_of_case = case_key(case)
        sample_dir = store.sample_rel(suite.name, case.id, key, key_of_case, epoch)
        cases.append(
            CaseRecord(
                case_id=case.id,
                case_key=key_of_case,
                input=redactor.text(case.input),
                repeats=repeats or case.repeats,
                sample_dir=sample_dir,
                tags=list(case.tags),
                scorers=scorer_uses(case),
                line=case.line,
            )
        )
    return cases
