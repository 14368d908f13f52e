"""The per-repeat status rule: one repeat across every scorer of its case, as the ledger and the
design's `runs` relation record it."""

from __future__ import annotations

from noisefloor.model.records import RepeatScore, RepeatStatus, repeat_status


def _score(status: RepeatStatus, detail: str = "") -> RepeatScore:
    return RepeatScore(repeat=0, status=status, detail=detail)


def test_infrastructure_then_scorer_errors_make_a_repeat_invalid_before_anything_else() -> None:
    fail = ("0:contains", _score(RepeatStatus.FAIL, "missing:Paris"))
    infra = ("1:json_valid", _score(RepeatStatus.INFRA_ERROR, "connection refused"))
    grader = ("2:regex", _score(RepeatStatus.SCORER_ERROR, "ValueError: boom"))
    assert repeat_status([fail, grader, infra]) == ("invalid", "infra:connection refused")
    assert repeat_status([fail, grader]) == ("invalid", "grader:ValueError: boom")


def test_a_target_error_fails_with_its_own_detail_before_a_scorer_fail() -> None:
    fail = ("0:contains", _score(RepeatStatus.FAIL, "missing:Paris"))
    target = ("1:json_valid", _score(RepeatStatus.TARGET_ERROR, "error:exit: 1"))
    assert repeat_status([fail, target]) == ("fail", "error:exit: 1")
    assert repeat_status([fail]) == ("fail", "0:contains: missing:Paris")


def test_a_repeat_passes_when_every_scorer_passed() -> None:
    assert repeat_status(
        [("0:x", _score(RepeatStatus.PASS)), ("1:y", _score(RepeatStatus.PASS))]
    ) == (
        "pass",
        "ok",
    )
