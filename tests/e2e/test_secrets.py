"""End-to-end through the real CLI: a target's secrets (an endpoint's key on the loopback
OpenAI-compatible server, a command's `env`) are written to no file under the store root, and what
the target printed is rewritten only where it holds one long enough to be a credential, with a
warning; a shorter one is warned of once.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.servers.llm import LlmServer
from noisefloor.settings import SECRET_MIN_CHARS
from tests.builders import CAPITAL, http_suite, paris_case, write_suite

KEY_VARIABLE = "TEST_KEY"


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as srv:
        yield srv


def stored_samples(root: Path) -> list[dict[str, Any]]:
    """Every sample file under the store root, parsed."""
    return [orjson.loads(path.read_bytes()) for path in sorted((root / "samples").rglob("r*.json"))]


def sent_by_id(server: LlmServer) -> dict[str, bytes]:
    """The body of every completion the server sent, by its `id`."""
    return {orjson.loads(body)["id"]: body for body in server.answers}


def files_containing(data: bytes, *dirs: Path) -> list[str]:
    """Every file under `dirs` whose bytes contain `data` (SQLite files included)."""
    return [
        str(path)
        for directory in dirs
        for path in sorted(directory.rglob("*"))
        if path.is_file() and data in path.read_bytes()
    ]


def text_of(path: Path) -> str:
    """A file's text as a reader finds it: an SQLite database's every cell, any other file's
    bytes decoded (the pages of a database hold its numbers as bytes that may read as letters)."""
    data = path.read_bytes()
    if not data.startswith(b"SQLite format 3\x00"):
        return data.decode("utf-8", errors="replace")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        cells = [
            cell
            for table in tables
            for row in db.execute(f'SELECT * FROM "{table}"')
            for cell in row
        ]
    return "\n".join(str(cell) for cell in cells)


def files_holding(word: str, root: Path) -> list[str]:
    """Every file under `root` that holds `word` other than inside a longer word, JSON files by
    their values (their keys are noisefloor's own field names)."""
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        text = text_of(path)
        if path.suffix == ".json":
            text = "\n".join(json_values(orjson.loads(text)))
        if pattern.search(text):
            found.append(str(path))
    return found


def json_values(obj: Any) -> Iterator[str]:
    """Every value of a parsed JSON document, as text."""
    if isinstance(obj, dict):
        for value in obj.values():
            yield from json_values(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from json_values(value)
    else:
        yield str(obj)


def test_a_one_letter_key_rewrites_nothing_the_endpoint_answered_and_is_written_nowhere(
    cli, tmp_path, server, monkeypatch, _isolated_root
):
    key = "k"
    monkeypatch.setenv(KEY_VARIABLE, key)
    # the answers hold the letter everywhere: in `kiosk`, and in every usage key (`tokens`)
    cases = [paris_case("steady"), paris_case("kiosk", f"{CAPITAL} kiosk")]
    suite = http_suite(tmp_path, server.base_url, cases, api_key_env=KEY_VARIABLE)
    checked = cli("check", suite, "--format", "json")
    compared = cli("check", suite, "--format", "json")
    ran = cli("run", suite, "--format", "json")

    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {key}"}
    sent = sent_by_id(server)
    samples = stored_samples(_isolated_root)
    assert samples and len(sent) == len(samples)
    for sample in samples:
        raw = sample["envelope"]["raw"]
        assert raw == orjson.loads(sent[raw["id"]])
        assert sample["output"]["text"] == raw["choices"][0]["message"]["content"]
        assert sample["envelope"]["usage"] == raw["usage"]
        assert sample["redacted"] is None
    kiosk = [s for s in samples if s["case_id"] == "kiosk"]
    assert kiosk and all(s["output"]["text"] == '{"answer": "kiosk"}' for s in kiosk)

    assert checked.code == 0, checked.err
    report = checked.json()
    assert report["usage"]["unreported"] == 0 and report["usage"]["prompt_tokens"] > 0
    assert compared.code == 0, compared.err
    for result in (report, compared.json(), ran.json()):
        short = [w for w in result["warnings"] if "too short to redact" in w]
        assert len(short) == 1, result["warnings"]
        assert KEY_VARIABLE in short[0] and f"{SECRET_MIN_CHARS} characters" in short[0]
    assert files_containing(b"[REDACTED]", _isolated_root) == []
    assert files_holding(key, _isolated_root) == []


def test_a_key_the_endpoint_quotes_is_redacted_where_it_appears_with_a_warning(
    cli, tmp_path, server, monkeypatch, _isolated_root
):
    key = "nf_quoted_key_7Qz91x"
    assert len(key) >= SECRET_MIN_CHARS
    monkeypatch.setenv(KEY_VARIABLE, key)
    # the server answers `[key]` with the bearer token it was sent
    cases = [paris_case("steady"), paris_case("quoted", f"{CAPITAL} [key]")]
    suite = http_suite(tmp_path, server.base_url, cases, repeats=2, api_key_env=KEY_VARIABLE)
    reports = tmp_path / "reports"
    checked = cli("check", suite, "--format", "json", "--output", reports / "check.json")
    ran = cli("run", suite, "--fresh", "--format", "json")

    assert checked.code == ran.code == 0, checked.err + ran.err
    for report in (orjson.loads((reports / "check.json").read_bytes()), ran.json()):
        found = [w for w in report["warnings"] if KEY_VARIABLE in w]
        assert len(found) == 1, report["warnings"]
        assert "2 samples" in found[0] and "[REDACTED]" in found[0]

    sent = sent_by_id(server)
    quoted = [s for s in stored_samples(_isolated_root) if s["case_id"] == "quoted"]
    assert len(quoted) == 4
    for sample in quoted:
        raw = sample["envelope"]["raw"]
        # the key is there, in the answer as sent, and only the key was replaced
        assert key.encode() in sent[raw["id"]]
        assert raw == orjson.loads(sent[raw["id"]].replace(key.encode(), b"[REDACTED]"))
        assert sample["output"]["text"] == '{"answer": "[REDACTED]"}'
        assert sample["redacted"] == [KEY_VARIABLE]
    assert all(
        s["redacted"] is None for s in stored_samples(_isolated_root) if s["case_id"] == "steady"
    )
    assert files_containing(key.encode(), _isolated_root, reports) == []


def test_a_commands_short_secret_leaves_what_it_printed_as_it_was(cli, tmp_path, _isolated_root):
    program = "import json, os; print(json.dumps({'answer': 'Paris ' + os.environ['LOCAL_TOKEN']}))"
    target = {"command": [sys.executable, "-c", program], "env": {"LOCAL_TOKEN": "kiosk"}}
    cases = [{"id": "kiosk", "input": "unused", "scorers": ["json_valid"]}]
    defaults = {"repeats": 2, "baseline_repeats": 2}
    suite = write_suite(
        tmp_path, {"name": "cmd", "target": target, "defaults": defaults, "cases": cases}
    )
    checked = cli("check", suite, "--format", "json")

    assert checked.code == 0, checked.err
    short = [w for w in checked.json()["warnings"] if "too short to redact" in w]
    assert len(short) == 1 and "LOCAL_TOKEN" in short[0], checked.json()["warnings"]
    samples = stored_samples(_isolated_root)
    assert len(samples) == 2
    assert all(s["output"]["text"] == '{"answer": "Paris kiosk"}\n' for s in samples)
    assert files_containing(b"[REDACTED]", _isolated_root) == []
