"""The ledger's `samples` columns come from the target kinds: the built-in kinds give the table as
it always was, and a kind registered from outside adds its own column, even to an existing file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from noisefloor.ledger.ledger import Ledger
from noisefloor.targets import kinds
from noisefloor.targets.kinds import LedgerField, TargetKind

#: The `samples` table as the ledger created it before the kinds declared their columns.
SAMPLES_SQL = """CREATE TABLE samples (
        sample_path TEXT PRIMARY KEY,
        suite TEXT NOT NULL,
        case_id TEXT NOT NULL,
        repeat_idx INTEGER NOT NULL,
        target_key TEXT NOT NULL,
        case_key TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        kind TEXT,
        started_at TEXT,
        model TEXT,
        served_model TEXT,
        base_host TEXT,
        harness_version TEXT,
        outcome TEXT NOT NULL,
        error TEXT,
        exit_code INTEGER,
        latency_ms REAL,
        finish_reason TEXT,
        prompt_sha TEXT,
        request_sha TEXT,
        output_sha TEXT,
        output_text TEXT,
        stderr_text TEXT,
        raw_json TEXT
    )"""


def _samples_sql(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'samples'").fetchone()
    return str(row[0])


def test_the_built_in_kinds_give_the_samples_table_as_it_was(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite"):
        pass
    assert _samples_sql(tmp_path / "ledger.sqlite") == SAMPLES_SQL


class _TaggedKind(TargetKind):
    name = "tagged"
    ledger_fields = (LedgerField("model"), LedgerField("tag", after="kind"))

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        return {"model": "m", "tag": sample["output"]["text"], "served_model": "undeclared"}


def test_a_registered_kind_adds_its_column_to_an_existing_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Ledger(tmp_path / "ledger.sqlite"):
        pass
    monkeypatch.setattr(kinds, "_kinds", dict(kinds._load()))
    monkeypatch.setattr(kinds, "_spec", None)
    kinds.register(_TaggedKind())
    sample = {"kind": "tagged", "outcome": "ok", "output": {"text": "red"}}
    rel = f"samples/s/{'a' * 16}/e0/c/{'b' * 16}/r0.json"
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.index_sample(tmp_path, Path(rel), sample)
    with sqlite3.connect(tmp_path / "ledger.sqlite") as conn:
        row = conn.execute("SELECT model, served_model, tag FROM samples").fetchone()
    assert row == ("m", None, "red")
