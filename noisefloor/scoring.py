"""From stored samples to score files and bands: pure, deterministic, never calls a target.

A scorer that raises is recorded as a scorer error beside the scores, never as the target's fault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import orjson

from noisefloor.records import (
    CaseBand,
    RepeatScore,
    RepeatStatus,
    ScoreFile,
    ScorerBand,
    ScorerUse,
)
from noisefloor.scorers import REGISTRY, ScoreInput, Scorer
from noisefloor.targets.base import Outcome, RawSample

__all__ = ["band_case", "build_scorer", "read_sample", "score_case", "scorer_config"]


@lru_cache(maxsize=4096)
def _read_sample(path: str, mtime_ns: int) -> RawSample:
    return RawSample.model_validate(orjson.loads(Path(path).read_bytes()))


def read_sample(path: Path) -> RawSample:
    """Read one sample file (cached: sample files never change once written)."""
    return _read_sample(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=1024)
def _build(name: str, params_json: bytes) -> Scorer:
    return REGISTRY.build(name, orjson.loads(params_json))


def build_scorer(use: ScorerUse) -> Scorer:
    """The scorer a stored spec names, as the code is now (cached: scorers are immutable)."""
    return _build(use.name, orjson.dumps(use.params, option=orjson.OPT_SORT_KEYS))


def scorer_config(use: ScorerUse) -> dict[str, object]:
    """What a score file depends on besides the samples: the scorer as the code is now."""
    built = build_scorer(use)
    return {"name": use.name, "params": built.spec.params, "impl_hash": built.spec.impl_hash}


def _brief(sample: RawSample) -> str:
    text = sample.error or sample.outcome.value
    return text if len(text) <= 200 else text[:197] + "..."


def score_case(case_id: str, use: ScorerUse, sample_paths: Sequence[Path]) -> ScoreFile:
    """Apply one scorer to every repeat of one case."""
    scorer = build_scorer(use)
    current = use.model_copy(
        update={"impl_hash": scorer.spec.impl_hash, "params": scorer.spec.params}
    )
    repeats: list[RepeatScore] = []
    for repeat, path in enumerate(sample_paths):
        sample = read_sample(path)
        if sample.outcome is Outcome.INFRA:
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.INFRA_ERROR,
                    outcome=sample.outcome.value,
                    detail=_brief(sample),
                )
            )
            continue
        if sample.outcome is not Outcome.OK:
            detail = f"{sample.outcome.value}: {_brief(sample)}"
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.TARGET_ERROR,
                    outcome=sample.outcome.value,
                    detail=detail,
                )
            )
            continue
        try:
            result = scorer(ScoreInput.from_sample(sample))
        except Exception as exc:  # a scorer bug: kept apart from the target's results
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.SCORER_ERROR,
                    detail=f"{type(exc).__name__}: {exc}",
                )
            )
            continue
        repeats.append(
            RepeatScore(
                repeat=repeat,
                status=RepeatStatus.PASS if result.passed else RepeatStatus.FAIL,
                value=result.value,
                detail=result.detail,
                reliable=result.reliable,
            )
        )
    return ScoreFile(
        case_id=case_id,
        scorer=current,
        kind=scorer.kind,
        direction=scorer.direction,
        repeats=repeats,
    )


def _top(details: Sequence[str], limit: int = 5) -> list[str]:
    counts = Counter(d for d in details if d)
    return [d for d, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def band_case(case_id: str, case_key: str, scores: Sequence[ScoreFile]) -> CaseBand:
    """Collapse every scorer's repeats of one case into counts and values.

    Every score file records each repeat's outcome, so the case's outcomes come from the first.
    """
    first = scores[0].repeats if scores else []
    outcomes = Counter(r.outcome for r in first)
    errors = _top([r.detail for r in first if r.outcome != Outcome.OK.value])
    bands = []
    for score in scores:
        counts = Counter(r.status for r in score.repeats)
        values = [
            r.value
            for r in score.repeats
            if r.status in (RepeatStatus.PASS, RepeatStatus.FAIL) and r.value is not None
        ]
        failing = [r.detail for r in score.repeats if r.status is not RepeatStatus.PASS]
        use = score.scorer
        bands.append(
            ScorerBand(
                label=use.label,
                name=use.name,
                kind=score.kind,
                direction=score.direction,
                impl_hash=use.impl_hash,
                params=use.params,
                min_effect=use.min_effect,
                suspect_drop=use.suspect_drop,
                n=counts[RepeatStatus.PASS]
                + counts[RepeatStatus.FAIL]
                + counts[RepeatStatus.TARGET_ERROR],
                k=counts[RepeatStatus.PASS],
                target_errors=counts[RepeatStatus.TARGET_ERROR],
                infra_errors=counts[RepeatStatus.INFRA_ERROR],
                scorer_errors=counts[RepeatStatus.SCORER_ERROR],
                values=[float(v) for v in values],
                reliable=all(r.reliable for r in score.repeats),
                details=_top(failing),
            )
        )
    return CaseBand(
        case_id=case_id,
        case_key=case_key,
        repeats=len(first),
        outcomes=dict(sorted(outcomes.items())),
        errors=errors,
        scorers=bands,
    )
