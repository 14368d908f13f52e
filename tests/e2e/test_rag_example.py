"""The RAG example's pipeline (examples/rag/ask.py) without a model: BM25 ranks the handbook page
that holds each answer first, and the answer step talks to a stand-in OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from bench.servers.llm import LlmServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag"
ASK = EXAMPLE / "ask.py"


def _load_ask() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rag_example_ask", ASK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # a dataclass looks its module up while it is being defined
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ask() -> ModuleType:
    return _load_ask()


@pytest.fixture(scope="module")
def retriever(ask: ModuleType) -> Any:
    return ask.Retriever()


def _expected_top_docs() -> dict[str, str]:
    """Question -> the doc id the suite expects its top citation to be."""
    suite = yaml.safe_load((EXAMPLE / "suite.yaml").read_text(encoding="utf-8"))
    expected = {}
    for case in suite["cases"]:
        for scorer in case["scorers"]:
            if isinstance(scorer, dict) and scorer.get("path") == "citations[0].doc_id":
                expected[case["input"]] = scorer["value"]
    return expected


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ASK), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_handbook_is_a_few_dozen_short_documents(retriever: Any) -> None:
    ids = [doc["id"] for doc in retriever.docs]
    assert 30 <= len(ids) <= 40
    assert len(set(ids)) == len(ids)
    for doc in retriever.docs:
        assert doc["title"] and 60 < len(doc["text"]) < 400, doc["id"]


def test_the_suite_checks_the_top_citation_of_every_answerable_question() -> None:
    assert len(_expected_top_docs()) == 6


@pytest.mark.parametrize("question,doc_id", sorted(_expected_top_docs().items()))
def test_the_page_that_holds_the_answer_ranks_first(
    retriever: Any, question: str, doc_id: str
) -> None:
    passages = retriever.search(question, 3)
    assert [p.doc_id for p in passages][0] == doc_id, passages
    scores = [p.score for p in passages]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0


def test_stemming_matches_other_forms_of_a_word(retriever: Any) -> None:
    """Stems meet: `blinked` finds `blinks` and `blinking`, `lifting` finds `lifted`."""
    assert retriever.search("blinked", 1)[0].doc_id == "status-light"
    assert retriever.search("lifting the mower", 1)[0].doc_id == "safety"


def test_a_question_the_handbook_does_not_touch_retrieves_nothing(retriever: Any) -> None:
    assert retriever.search("What is the capital of Australia?", 3) == []
    assert retriever.search("What is it?", 3) == []


def test_retrieve_only_prints_the_citations_as_json() -> None:
    done = _run("--retrieve-only", "Which Wi-Fi band does the mower support?")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["question"] == "Which Wi-Fi band does the mower support?"
    assert "answer" not in result
    assert [c["doc_id"] for c in result["citations"]][:2] == ["wifi", "firmware"]
    assert all(set(c) == {"doc_id", "score"} for c in result["citations"])


def test_the_answer_comes_from_the_endpoint_with_the_passages_in_the_prompt() -> None:
    with LlmServer(served_model="stand-in-model") as server:
        done = _run("--base-url", server.base_url, "-k", "2", "What does error E12 mean?")
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # the stand-in answers with the last word of the prompt, which ends with the question
    assert json.loads(result["answer"]) == {"answer": "mean"}
    assert result["model"] == "stand-in-model"
    assert result["finish_reason"] == "stop"
    assert [c["doc_id"] for c in result["citations"]] == ["error-e12", "status-light"]
    body = request["body"]
    assert body["seed"] == -1 and body["temperature"] == 0.8
    system, user = body["messages"]
    assert "I don't know." in system["content"]
    assert user["content"].startswith("Passages:\n[1] Error E12: no loop signal: E12 means")
    assert "\n[2] What the status light means: " in user["content"]
    assert user["content"].endswith("\n\nQuestion: What does error E12 mean?")


def test_a_question_with_no_passage_still_asks_the_model() -> None:
    with LlmServer() as server:
        done = _run("--base-url", server.base_url, "What is the capital of Australia?")
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["citations"] == []
    assert request["body"]["messages"][1]["content"].startswith("(no passage matched)")


def test_an_unreachable_endpoint_fails_with_a_message_and_no_output() -> None:
    with LlmServer() as server:
        url = server.base_url
    done = _run("--base-url", url, "--timeout", "5", "What does error E12 mean?")
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"ask.py: no answer from {url}" in done.stderr


def test_the_examples_own_scorer_scores_the_capture_offline(tmp_path: Path) -> None:
    """`cites_handbook` (examples/rag/checks.py, a plugin of the suite) on the recorded run."""
    root = tmp_path / "capture"
    shutil.copytree(EXAMPLE / "capture", root)
    proc = subprocess.run(
        [sys.executable, "-m", "noisefloor", "--root", str(root), "rescore", "-v"]
        + [str(EXAMPLE / "suite.yaml"), "first"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "0 target calls" in proc.stdout
    scored = [line.strip() for line in proc.stdout.splitlines() if "cites_handbook" in line]
    assert len(scored) == 7
    assert all(line.endswith(":cites_handbook: 5/5") for line in scored), scored
