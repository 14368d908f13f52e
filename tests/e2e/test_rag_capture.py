"""The committed capture of the RAG example (examples/rag), replayed through the real CLI.

Two runs of the pipeline against Qwen2.5-Coder-0.5B-Instruct, recorded with nothing changed in
between, are stored in `examples/rag/capture/`. These tests copy that store and check, without any
model, that `diff` and the HTML report read it and reach the verdicts it reached when recorded,
and that its citations are what the example's retrieval gives today.

An optional test runs the pipeline against a live endpoint: set NOISEFLOOR_TEST_LLM_URL (for
example `http://127.0.0.1:8765/v1`, served by `examples/local-llm/serve.py`) to run it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser import needs_chromium, open_page
from tests.capture_checks import committed_files, gitignore_problems, leaks
from tests.e2e.test_rag_example import _load_ask
from tests.screenshot import rag_capture_png

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag"
CAPTURE = EXAMPLE / "capture"
SUITE = "rag"
MODEL = "qwen2.5-coder-0.5b"
REPEATS = 5
SPEC = yaml.safe_load((EXAMPLE / "suite.yaml").read_text(encoding="utf-8"))
CASES = [case["id"] for case in SPEC["cases"]]

#: Passes of each case's first scorer (the one on the answer) in (first, second).
ANSWER_PASSES = {
    "charge-time": (5, 5),
    "rain-delay": (5, 5),
    "error-e12": (5, 4),
    "battery-warranty": (1, 2),
    "wifi-band": (5, 5),
    "steepest-slope": (5, 4),
    "refuses-price": (3, 1),
    "refuses-off-topic": (5, 3),
}
MOVED = ("error-e12", "refuses-off-topic", "refuses-price", "steepest-slope")
#: What each rule concluded on the capture: exit code, counts, and the cases not `unchanged`.
VERDICTS: dict[str, tuple[int, dict[str, int], dict[str, str]]] = {
    "exact": (0, {"inconclusive": 4, "unchanged": 4}, dict.fromkeys(MOVED, "inconclusive")),
    "band": (1, {"regressed": 4, "unchanged": 4}, dict.fromkeys(MOVED, "regressed")),
    "wilson": (
        0,
        {"quarantine": 5, "unchanged": 3},
        dict.fromkeys((*MOVED, "battery-warranty"), "quarantine"),
    ),
}


@pytest.fixture(scope="module")
def replay_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the capture for the module: derived files are computed once, then reused."""
    root = tmp_path_factory.mktemp("rag") / "capture"
    shutil.copytree(CAPTURE, root)
    return root


def run_records() -> dict[str, Any]:
    records = [json.loads(p.read_text()) for p in (CAPTURE / "runs" / SUITE).glob("*.json")]
    return {record["label"]: record for record in records}


def samples(label: str) -> dict[str, list[dict[str, Any]]]:
    """The stored samples of one labelled run, per case, in repeat order."""
    found = {}
    for case in run_records()[label]["cases"]:
        paths = sorted((CAPTURE / case["sample_dir"]).glob("r*.json"))
        found[case["case_id"]] = [json.loads(path.read_text()) for path in paths]
    return found


# -- the capture itself ---------------------------------------------------------------------


def test_the_capture_holds_two_labelled_runs_of_every_case() -> None:
    records = run_records()
    assert sorted(records) == ["first", "second"]
    baseline = json.loads((CAPTURE / "baselines" / f"{SUITE}.json").read_text())
    assert baseline["run_id"] == records["first"]["run_id"]
    for label, record in records.items():
        assert record["calls"] == len(CASES) * REPEATS
        assert [case["case_id"] for case in record["cases"]] == CASES
        for case_id, stored in samples(label).items():
            assert [s["repeat"] for s in stored] == list(range(REPEATS)), case_id
            assert all(s["outcome"] == "ok" for s in stored), case_id


def test_every_sample_is_the_pipelines_json_from_the_real_model() -> None:
    for label in ("first", "second"):
        for case_id, stored in samples(label).items():
            for sample in stored:
                parsed = sample["parsed"]
                assert set(parsed) == {"question", "answer", "model", "finish_reason", "citations"}
                assert parsed["model"] == MODEL, (label, case_id)
                assert parsed["answer"].strip(), (label, case_id)


def test_the_stored_citations_are_what_the_retrieval_gives_today() -> None:
    """Retrieval is deterministic: a handbook or tokenizer change would make the capture stale."""
    retriever = _load_ask().Retriever()
    for case in SPEC["cases"]:
        want = [
            {"doc_id": p.doc_id, "score": round(p.score, 4)}
            for p in retriever.search(case["input"], 3)
        ]
        for label in ("first", "second"):
            for sample in samples(label)[case["id"]]:
                assert sample["parsed"]["citations"] == want, (label, case["id"])


def test_no_committed_file_holds_a_machine_path_or_a_secret() -> None:
    assert len(committed_files(CAPTURE)) > 2 * len(CASES) * REPEATS
    assert leaks(CAPTURE) == []


def test_the_capture_gitignore_keeps_both_runs() -> None:
    assert gitignore_problems(CAPTURE) == []


# -- replaying it ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", sorted(VERDICTS))
def test_every_rule_replays_its_recorded_verdict(cli: Any, replay_root: Path, rule: str) -> None:
    result = cli("--root", replay_root, "diff", "--rule", rule, "--format", "json")
    report = json.loads(result.out)
    want_code, want_counts, want_cases = VERDICTS[rule]
    assert result.code == report["exit_code"] == want_code, result.err
    assert report["counts"] == want_counts
    verdicts = {case["case_id"]: case["verdict"] for case in report["cases"]}
    assert verdicts == {case: want_cases.get(case, "unchanged") for case in CASES}
    for case in report["cases"]:
        answer = case["scorers"][0]
        counts = (answer["baseline"]["k"], answer["candidate"]["k"])
        assert counts == ANSWER_PASSES[case["case_id"]], case["case_id"]
        assert answer["baseline"]["n"] == answer["candidate"]["n"] == REPEATS


def test_the_top_citation_scores_replay_as_constant_values(cli: Any, replay_root: Path) -> None:
    """BM25 is deterministic: each case's top score is one number, the same in every repeat."""
    result = cli("--root", replay_root, "diff", "--format", "json")
    retriever = _load_ask().Retriever()
    checked = 0
    for case in json.loads(result.out)["cases"]:
        for scorer in case["scorers"]:
            if scorer["key"] != "2:json_path_number":
                continue
            (spec,) = [c for c in SPEC["cases"] if c["id"] == case["case_id"]]
            top = round(retriever.search(spec["input"], 1)[0].score, 4)
            for side in ("baseline", "candidate"):
                assert scorer[side]["values"] == [top] * REPEATS, case["case_id"]
            assert scorer["evidence"]["values"]["deterministic"] is True
            assert scorer["verdict"] == "unchanged"
            checked += 1
    assert checked == 6


def test_the_markdown_report_names_every_case(cli: Any, replay_root: Path) -> None:
    result = cli("--root", replay_root, "diff", "--format", "markdown")
    assert result.code == VERDICTS["exact"][0]
    for case in CASES:
        assert case in result.out


@needs_chromium
def test_the_html_report_opens_in_a_browser_worst_case_first(
    cli: Any, replay_root: Path, tmp_path: Path
) -> None:
    page_file = tmp_path / "rag.html"

    result = cli("--root", replay_root, "diff", "--format", "html", "--output", page_file)

    assert result.code == VERDICTS["exact"][0]
    page = open_page(page_file)
    assert page.console == []
    assert sorted(case for case, _ in page.cases) == sorted(CASES)
    verdicts = [verdict for _, verdict in page.cases]
    assert verdicts == ["inconclusive"] * 4 + ["unchanged"] * 4
    assert sorted(case for case, _ in page.cases[:4]) == sorted(MOVED)


@needs_chromium
def test_the_readme_screenshot_can_be_made_again(tmp_path: Path) -> None:
    png = tmp_path / "rag.png"
    before = sorted(CAPTURE.rglob("*"))

    assert rag_capture_png(png) == 0

    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
    assert sorted(CAPTURE.rglob("*")) == before, "the screenshot must replay a copy"


# -- optional: a live endpoint --------------------------------------------------------------

LIVE_URL = os.environ.get("NOISEFLOOR_TEST_LLM_URL")


@pytest.mark.skipif(not LIVE_URL, reason="set NOISEFLOOR_TEST_LLM_URL to sample a live endpoint")
def test_live_pipeline_check_twice(cli: Any, tmp_path: Path) -> None:
    assert LIVE_URL is not None
    work = tmp_path / "rag"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("capture"))
    doc = dict(SPEC)
    doc["target"] = dict(SPEC["target"])
    doc["target"]["command"] = [
        LIVE_URL if arg == "http://127.0.0.1:8765/v1" else arg for arg in SPEC["target"]["command"]
    ]
    doc["cases"] = [c for c in SPEC["cases"] if c["id"] in ("wifi-band", "refuses-off-topic")]
    suite = work / "suite.yaml"
    suite.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    root = tmp_path / "store"

    first = cli("--root", root, "check", suite, "--repeats", "2", "--format", "json")
    second = cli("--root", root, "check", suite, "--repeats", "2", "--fresh", "--format", "json")

    assert first.code in (0, 1) and json.loads(first.out)["adopted"] is True, first.err
    assert second.code in (0, 1) and json.loads(second.out)["calls"] == 2 * 2, second.err
    stored = [json.loads(p.read_text()) for p in (root / "samples").rglob("r*.json")]
    assert len(stored) == 2 * 2 * 2
    for sample in stored:
        assert sample["outcome"] == "ok", sample["stderr"]
        assert sample["parsed"]["answer"] and sample["parsed"]["model"]
