"""The RAG example's own scorer, loaded by `plugins: [checks.py]` in suite.yaml: the passages the
model was given (its citations) are handbook documents, each once, best first."""

from __future__ import annotations

import json
from pathlib import Path

import noisefloor

HANDBOOK = Path(__file__).resolve().with_name("handbook.jsonl")
DOC_IDS = frozenset(
    json.loads(line)["id"] for line in HANDBOOK.read_text(encoding="utf-8").splitlines() if line
)


@noisefloor.scorer("cites_handbook", depends_on=["handbook.jsonl"])
def cites_handbook(inp: noisefloor.ScoreInput, params: object) -> noisefloor.ScoreResult:
    """Passes when every citation is a handbook document, cited once, best score first."""
    ids = [c["doc_id"] for c in inp.json()["citations"]]
    scores = [c["score"] for c in inp.json()["citations"]]
    stray = [doc_id for doc_id in ids if doc_id not in DOC_IDS]
    if stray:
        return noisefloor.ScoreResult(0.0, False, f"not in the handbook: {', '.join(stray)}")
    if len(set(ids)) < len(ids):
        return noisefloor.ScoreResult(0.0, False, f"cited twice: {ids}")
    if scores != sorted(scores, reverse=True):
        return noisefloor.ScoreResult(0.0, False, f"not best first: {scores}")
    return noisefloor.ScoreResult(1.0, True, f"{len(ids)} handbook passage(s)")
