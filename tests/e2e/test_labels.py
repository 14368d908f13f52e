"""End-to-end through the real CLI against the loopback endpoint: labels that pool every run
recorded under them, `--replace`, and the design's own SQL over the ledger's `runs` relation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noisefloor.ledger import ledger_path
from tests.e2e.test_http_gate import (
    CAPITAL_GRADER,
    CAPITAL_WORD,
    INVOICE,
    INVOICE_GRADER,
    http_suite,
    sha256,
    write_cases,
)
from tests.llm_server import LlmServer

#: The design's ledger row, in its order.
DESIGN_COLUMNS = [
    "run_id",
    "label",
    "started_at",
    "model",
    "base_host",
    "harness_version",
    "case_id",
    "repeat_idx",
    "status",
    "reason",
    "latency_ms",
    "finish_reason",
    "prompt_sha",
    "output_sha",
    "output_text",
    "raw_json",
]

#: The design's queries, verbatim.
BY_LABEL = "SELECT case_id, status, reason FROM runs WHERE label = ? ORDER BY case_id, repeat_idx"
PASS_RATE = (
    "SELECT label, SUM(status = 'pass') * 1.0 / COUNT(*) AS pass_rate, COUNT(*) AS n "
    "FROM runs GROUP BY label ORDER BY label"
)


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as srv:
        yield srv


def _query(root: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(ledger_path(root))
    try:
        return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


def _design_suite(tmp_path: Path, base_url: str, repeats: int = 3) -> Path:
    rows = [
        {"id": "invoice_json", "prompt": INVOICE, **INVOICE_GRADER},
        # the stand-in cycles Paris / "Paris, France" / "It is Paris." / Lyon per prompt
        {"id": "capital_word", "prompt": f"{CAPITAL_WORD} [sample]", **CAPITAL_GRADER},
    ]
    return http_suite(tmp_path, base_url, repeats=repeats, cases_file=write_cases(tmp_path, rows))


def test_the_designs_queries_run_unchanged_on_the_ledger(cli, tmp_path, server, _isolated_root):
    suite = _design_suite(tmp_path, server.base_url)
    assert cli("record", suite, "--label", "before", "--jobs", "1").code == 0
    assert cli("record", suite, "--label", "after", "--jobs", "1", "--fresh").code == 0

    columns = [row[1] for row in _query(_isolated_root, "PRAGMA table_info(runs)")]
    assert columns == DESIGN_COLUMNS
    # the stand-in's fourth answer to a prompt is Lyon
    assert _query(_isolated_root, BY_LABEL, "before") == [
        ("capital_word", "pass", "ok"),
        ("capital_word", "pass", "ok"),
        ("capital_word", "fail", "0:must_include: missing:Paris"),
        ("invoice_json", "pass", "ok"),
        ("invoice_json", "pass", "ok"),
        ("invoice_json", "pass", "ok"),
    ]
    after = _query(_isolated_root, BY_LABEL, "after")
    assert [(case_id, status) for case_id, status, _ in after] == [
        ("capital_word", "pass"),
    ] * 3 + [("invoice_json", "pass")] * 3
    assert _query(_isolated_root, PASS_RATE) == [("after", 1.0, 6), ("before", 5 / 6, 6)]

    # the prompt's hash is the prompt text's; the whole exchange's has a column of its own
    full = _query(
        _isolated_root,
        "SELECT r.case_id, r.prompt_sha, l.request_sha, l.raw_json, r.raw_json, r.model, "
        "r.base_host, r.finish_reason FROM runs AS r JOIN ledger AS l "
        "ON l.run_id = r.run_id AND l.case_id = r.case_id AND l.repeat_idx = r.repeat_idx",
    )
    assert len(full) == 12
    prompts = {"invoice_json": INVOICE, "capital_word": f"{CAPITAL_WORD} [sample]"}
    for case_id, prompt_sha, request_sha, ledger_raw, raw, model, host, finish in full:
        assert prompt_sha == sha256(prompts[case_id])
        assert request_sha is not None and request_sha != prompt_sha
        assert raw == ledger_raw and '"choices"' in raw
        assert (model, host, finish) == ("nf-test-model", server.base_url.split("/")[2], "stop")
