"""End-to-end through the real CLI against the loopback endpoint: labels that pool every run
recorded under them, `--replace`, and the design's own SQL over the ledger's `runs` relation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.servers.llm import LlmServer
from noisefloor.ledger.ledger import ledger_path
from tests.builders import http_suite, write_cases
from tests.e2e.test_http_gate import (
    CAPITAL_GRADER,
    CAPITAL_WORD,
    INVOICE,
    INVOICE_GRADER,
    sha256,
)

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


def _label_file(root: Path, label: str) -> dict[str, Any]:
    return orjson.loads((root / "labels" / "http" / f"{label}.json").read_bytes())


def _sides(report: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per case: the baseline's and the candidate's valid repeats of the first scorer."""
    return {
        case["case_id"]: (case["scorers"][0]["baseline"]["n"], case["scorers"][0]["candidate"]["n"])
        for case in report["cases"]
    }


def test_a_label_recorded_twice_pools_both_runs(cli, tmp_path, server, _isolated_root, monkeypatch):
    suite = _design_suite(tmp_path, server.base_url)
    assert cli("record", suite, "--label", "before", "--jobs", "2").code == 0
    assert len(server.requests) == 6
    again = cli("record", suite, "--label", "before", "--jobs", "2")
    assert again.code == 0, again.err
    # every record calls the endpoint: three new repeats per case, after the ones held
    assert len(server.requests) == 12
    runs = _label_file(_isolated_root, "before")["runs"]
    assert len(runs) == 2
    newest = orjson.loads((_isolated_root / "runs" / "http" / f"{runs[1]}.json").read_bytes())
    assert newest["pooled_runs"] == runs[:1] and newest["calls"] == 6
    assert {(c["first_repeat"], c["repeats"]) for c in newest["cases"]} == {(3, 6)}
    assert cli("record", suite, "--label", "after", "--jobs", "2").code == 0

    result = cli("compare", "--baseline", "before", "--current", "after", "--format", "json")
    assert result.code == 0, result.out
    report = result.json()
    assert _sides(report) == {"capital_word": (6, 3), "invoice_json": (6, 3)}
    assert report["runs"]["baseline"]["rests_on"] == [
        {"run_id": runs[0], "repeats": 3},
        {"run_id": runs[1], "repeats": 3},
    ]
    assert report["runs"]["baseline"]["repeats"] == 6
    after = _label_file(_isolated_root, "after")["runs"]
    assert report["runs"]["candidate"]["rests_on"] == [{"run_id": after[0], "repeats": 3}]

    monkeypatch.setenv("COLUMNS", "300")  # each of the statistics' lines whole
    terminal = cli("compare", "--baseline", "before", "--current", "after", "-v")
    assert terminal.code == 0
    assert (
        f"  baseline before: 6 repeats per case from 2 runs: {runs[0]} (3), {runs[1]} (3)"
        in terminal.out
    )
    assert f"  candidate after: 3 repeats per case from 1 run: {after[0]} (3)" in terminal.out

    # the design's query sees the pool: each repeat once, under its label
    rows = _query(_isolated_root, BY_LABEL, "before")
    assert len(rows) == 12
    assert _query(_isolated_root, PASS_RATE)[1][0::2] == ("before", 12)

    # a label names its pool wherever a run is named
    diff = cli("diff", "after", "--baseline", "before", "--format", "json")
    assert diff.code == 0, diff.out
    assert _sides(diff.json()) == {"capital_word": (6, 3), "invoice_json": (6, 3)}


def test_a_label_of_another_target_version_is_refused_until_replaced(
    cli, tmp_path, server, _isolated_root
):
    suite = _design_suite(tmp_path, server.base_url)
    first = cli("record", suite, "--label", "nightly", "--jobs", "2")
    assert first.code == 0, first.err
    old = _label_file(_isolated_root, "nightly")["runs"]
    # --fresh would drop the pool the label holds
    fresh = cli("record", suite, "--label", "nightly", "--fresh")
    assert fresh.code == 3
    assert "--fresh would start label 'nightly' over" in fresh.err and "--replace" in fresh.err

    alone = cli("run", suite, "--replace")
    assert alone.code == 3 and "--replace starts a label over: it needs --label NAME" in alone.err

    other = http_suite(
        tmp_path,
        server.base_url,
        repeats=3,
        cases_file="cases.jsonl",
        model="nf-other-model",
    )
    refused = cli("record", other, "--label", "nightly")
    assert refused.code == 3
    assert "label 'nightly' holds runs of target version" in refused.err
    assert "record under another label, or pass --replace" in refused.err
    assert len(server.requests) == 6  # refused before any call

    replaced = cli("record", other, "--label", "nightly", "--replace", "--jobs", "2")
    assert replaced.code == 0, replaced.err
    assert len(server.requests) == 12
    new = _label_file(_isolated_root, "nightly")["runs"]
    assert len(new) == 1 and new != old
    assert (_isolated_root / "runs" / "http" / f"{old[0]}.json").exists()
    assert {
        r[0] for r in _query(_isolated_root, "SELECT run_id FROM runs WHERE label = ?", "nightly")
    } == set(new)

    # --replace under the same version starts over too: new samples, not the cached ones
    again = cli("record", other, "--label", "nightly", "--replace", "--jobs", "2")
    assert again.code == 0, again.err
    assert len(server.requests) == 18
    assert len(_label_file(_isolated_root, "nightly")["runs"]) == 1


def test_check_under_a_label_compares_the_pool(cli, tmp_path, server, _isolated_root):
    suite = _design_suite(tmp_path, server.base_url)
    assert cli("check", suite, "--jobs", "2").code == 0  # adopts the baseline
    assert cli("check", suite, "--label", "pr", "--jobs", "2").code == 0
    # a deep baseline of up to 30 repeats (the suite adopts at 3)
    deep = ("--baseline-repeats", "30")
    second = cli("check", suite, "--label", "pr", "--jobs", "2", *deep, "--format", "json")
    assert second.code == 0, second.out
    report = second.json()
    # the label's runs took repeats of the baseline's own target version: they deepen the
    # baseline as well, so both sides rest on the six repeats its sample sets now hold
    assert _sides(report) == {"capital_word": (6, 6), "invoice_json": (6, 6)}
    assert [r["repeats"] for r in report["runs"]["candidate"]["rests_on"]] == [3, 3]
    # the label's first run reused the baseline's cached samples; its second took new ones
    assert len(server.requests) == 12


def test_a_case_whose_input_changed_under_a_label_starts_its_pool_over(
    cli, tmp_path, server, _isolated_root, monkeypatch
):
    suite = _design_suite(tmp_path, server.base_url)
    assert cli("record", suite, "--label", "before", "--jobs", "2").code == 0
    edited = [
        {"id": "invoice_json", "prompt": INVOICE, **INVOICE_GRADER},
        {"id": "capital_word", "prompt": f"{CAPITAL_WORD} Paris", **CAPITAL_GRADER},
    ]
    write_cases(tmp_path, edited)
    assert cli("record", suite, "--label", "before", "--jobs", "2").code == 0
    assert cli("record", suite, "--label", "after", "--jobs", "2").code == 0

    result = cli("compare", "--baseline", "before", "--current", "after", "--format", "json")
    assert result.code == 0, result.out
    report = result.json()
    # the old input's repeats answered another prompt: they are not pooled with the new ones
    assert _sides(report) == {"capital_word": (3, 3), "invoice_json": (6, 3)}
    assert report["runs"]["baseline"]["repeats"] == [3, 6]
    assert [r["repeats"] for r in report["runs"]["baseline"]["rests_on"]] == [3, 3]
    monkeypatch.setenv("COLUMNS", "300")  # each of the statistics' lines whole
    terminal = cli("compare", "--baseline", "before", "--current", "after", "-v")
    assert "  baseline before: 3-6 repeats per case from 2 runs: " in terminal.out
