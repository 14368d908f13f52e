"""Hostile endpoints through the real CLI: the CI-sized fault trial, a 100 MB answer against the
check's memory, and an answer whose fields have the wrong types against the ledger."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.fault_trials import has_traceback, hostile
from bench.servers.faults import FaultServer
from noisefloor.ledger.ledger import Ledger, ledger_path
from tests.builders import http_suite


def test_one_trial_of_every_fault_is_clean(tmp_path: Path) -> None:
    [tally] = hostile.trials(1, tmp_path)
    assert tally.trials == 1
    assert tally.clean, tally.notes


def _suite(directory: Path, base_url: str, fault: str) -> Path:
    """One case whose prompt names `fault`, no retries, a short timeout."""
    case = {"id": fault, "input": f"[fault:{fault}]", "scorers": ["json_valid"]}
    return http_suite(
        directory,
        base_url,
        [case],
        name=fault,
        model="m",
        repeats=2,
        max_retries=0,
        retry_budget=None,
        timeout_s=10,
    )


def test_a_100_mb_answer_keeps_the_check_under_150_mb(tmp_path: Path) -> None:
    with FaultServer() as server:
        suite = _suite(tmp_path, server.base_url, "huge_chunked")
        check = hostile.finish(
            hostile.spawn("check", suite, root=tmp_path / "store", env={}, logs=tmp_path), 60
        )
    # every call failed on the infrastructure: nothing measured, exit 3 (never 0)
    assert check.code == 3 and not has_traceback(check.err), check.err
    assert check.rss_mb < hostile.CHECK_RSS_LIMIT_MB, f"peak RSS {check.rss_mb:.0f} MB"
    assert "1 inconclusive" in check.out + check.err, check.out


def test_an_answer_with_fields_of_the_wrong_types_reaches_the_ledger(
    cli: Callable[..., Any], tmp_path: Path, _isolated_root: Path
) -> None:
    with FaultServer() as server:
        result = cli("check", _suite(tmp_path, server.base_url, "odd_types"))
    assert result.code == 3, result.err  # nothing measured: every answer was malformed
    with Ledger(ledger_path(_isolated_root)) as ledger:
        rows = ledger.ledger_rows()
    assert len(rows) == 2
    for row in rows:
        assert row["status"] == "invalid" and row["served_model"] is None
        assert "finish_reason is not a string" in row["reason"]
