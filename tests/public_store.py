"""A writer of stores in the public noisefloor tool's layout, shaped like its RAG capture, and a fake
RAG program that answers the capture's five questions the way the capture did."""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests import builders

SUITE = "rag-knowledge-agent"
SUITE_HASH = "3dbc2f926a2ebd29"

SPECS = "sample_corpus/product-specs.md"
FAQ = "sample_corpus/faq.md"
RUNBOOK = "sample_corpus/runbook.md"

#: Case id -> (question, answer, confidence, citations as (source, score)), as the capture answered.
ANSWERS: dict[str, tuple[str, str, str, list[tuple[str, float]]]] = {
    "offline-behaviour": (
        "What happens to a robot when the fleet server goes offline?",
        "When the fleet server is unreachable the robot keeps working offline: it finishes its "
        "current task, then parks at the nearest dock [sample_corpus/runbook.md].",
        "high",
        [(RUNBOOK, 0.6121), (SPECS, 0.4417)],
    ),
    "charging-bays": (
        "How many charging bays should we provision for a two-shift operation?",
        "For a two-shift operation, provision one bay for every two robots "
        "[sample_corpus/product-specs.md].",
        "high",
        [(SPECS, 0.5965)],
    ),
    "error-code-409": (
        "What does error code 409 mean on the dock display?",
        "Error 409 means the dock refused the robot because another robot holds the bay "
        "[sample_corpus/faq.md].",
        "medium",
        [(FAQ, 0.5512)],
    ),
    "refuses-parental-leave": (
        "What is the parental leave policy?",
        "I don't know: the documents cover robots, not HR policies.",
        "low",
        [],
    ),
    "refuses-off-domain": (
        "How much flour goes into a sourdough loaf?",
        "I don't know: that is outside the documents I can search.",
        "low",
        [],
    ),
}

#: A suite file in the public tool's schema (which ours reads as it is).
SCORERS: dict[str, list[Any]] = {
    "offline-behaviour": [
        "json_valid",
        {"type": "json_path_in", "path": "confidence", "values": ["high", "medium"]},
        {
            "type": "json_path_subset",
            "path": "citations[].source",
            "allowed": [SPECS, FAQ, RUNBOOK],
        },
        {"type": "contains", "needle": "offline"},
    ],
    "charging-bays": [
        "json_valid",
        {"type": "json_path_in", "path": "confidence", "values": ["high", "medium"]},
        {"type": "json_path_number", "path": "citations[].score", "min": 0.35, "aggregate": "min"},
    ],
    "error-code-409": [
        "json_valid",
        {"type": "contains", "needle": "409"},
        {
            "type": "json_path_subset",
            "path": "citations[].source",
            "allowed": [SPECS, FAQ, RUNBOOK],
        },
    ],
    "refuses-parental-leave": [
        "json_valid",
        {"type": "contains", "needle": "I don't know"},
        {"type": "json_path_equals", "path": "confidence", "value": "low"},
    ],
    "refuses-off-domain": [
        "json_valid",
        {"type": "json_path_equals", "path": "confidence", "value": "low"},
        {"type": "not_contains", "needle": "flour"},
    ],
}

FAKE_RAG = '''\
"""Answers like the captured RAG agent; RAG_FAKE_BREAK=<case id> makes that case go wrong,
RAG_FAKE_LOG=<file> logs each call."""
import json, os, sys

ANSWERS = json.loads(%r)
case_id = sys.argv[1]
if os.environ.get("RAG_FAKE_LOG"):
    with open(os.environ["RAG_FAKE_LOG"], "a") as log:
        log.write(case_id + "\\n")
question, answer, confidence, citations = ANSWERS[case_id]
if os.environ.get("RAG_FAKE_BREAK") == case_id:
    answer, confidence = "Use 500 g of flour and 350 g of water.", "high"
print(json.dumps({
    "answer": answer,
    "citations": [{"source": s, "score": v, "heading": s} for s, v in citations],
    "confidence": confidence,
}, indent=2))
'''


def write_suite(
    directory: Path,
    cases: list[str] | None = None,
    *,
    inputs: dict[str, str] | None = None,
    command: list[str] | None = None,
    **extra: Any,
) -> Path:
    """Our suite file for the capture: the public suite's cases and scorers, a fake RAG target;
    `inputs` edits cases' inputs, `command` the target's, `extra` adds top-level keys."""
    (directory / "rag_fake.py").write_text(FAKE_RAG % json.dumps(ANSWERS), encoding="utf-8")
    suite = {
        "name": SUITE,
        "target": {
            "command": command or [sys.executable, "rag_fake.py", "{{case_id}}", "{{input}}"],
            "output": "json",
            "timeout_s": 30,
            "fingerprint": ["rag_fake.py"],
        },
        "defaults": {"repeats": 3, "baseline_repeats": 3},
        "cases": [
            {"id": cid, "input": (inputs or {}).get(cid, ANSWERS[cid][0]), "scorers": SCORERS[cid]}
            for cid in (cases or list(ANSWERS))
        ],
        **extra,
    }
    return builders.write_suite(directory, suite)


def _dump(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n", "utf-8")


def invocation(
    case_id: str, repeat: int, argv: list[str], *, broken: str | None = None, flour: bool = False
) -> dict[str, Any]:
    """One call as the public tool stores it; `broken` is an outcome such as `error:exit`."""
    question, answer, confidence, citations = ANSWERS[case_id]
    if flour:
        answer, confidence = "Use 500 g of flour and 350 g of water.", "high"
    parsed = {
        "answer": answer,
        "citations": [{"heading": s, "score": v, "source": s} for s, v in citations],
        "confidence": confidence,
    }
    stdout = json.dumps(parsed, indent=2, ensure_ascii=False) + "\n"
    record: dict[str, Any] = {
        "argv": argv,
        "case_id": case_id,
        "duration_s": 7.5 + 3.1 * repeat + len(case_id) / 10,
        "exit_code": 0,
        "outcome": "ok",
        "parsed": parsed,
        "repeat": repeat,
        "stderr": "",
        "stdout": stdout,
    }
    if broken == "error:exit":
        record.update(
            exit_code=1,
            outcome="error:exit",
            parsed=None,
            stdout="",
            stderr="anthropic.APIStatusError: 529 overloaded\n",
        )
    elif broken == "error:parse":
        record.update(outcome="error:parse", parsed=None, stdout="Traceback: not JSON\n")
    return record


def definition_hash(case_id: str, question: str | None = None) -> str:
    """The public tool's hash of a case: its input and its scorers as the suite writes them."""
    scorers = [{"type": s} if isinstance(s, str) else s for s in SCORERS[case_id]]
    payload = json.dumps(
        {"input": ANSWERS[case_id][0] if question is None else question, "scorers": scorers},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _score_list(record: dict[str, Any], case_id: str) -> list[dict[str, Any]]:
    """What the public tool's scores.json holds for one repeat (nothing for a failed call)."""
    if record["outcome"] != "ok":
        return []
    out = []
    for index, scorer in enumerate(SCORERS[case_id]):
        kind = scorer if isinstance(scorer, str) else scorer["type"]
        out.append(
            {
                "detail": "",
                "direction": "higher_is_better",
                "key": f"{index}:{kind}",
                "kind": "continuous" if kind == "json_path_number" else "binary",
                "passed": True,
                "reliable": True,
                "type": kind,
                "value": 1.0,
            }
        )
    return out


def write_run(
    root: Path,
    started: datetime,
    *,
    command: list[str],
    cwd: str = ".",
    repeats: int = 3,
    suite: str = SUITE,
    broken: dict[str, str] | None = None,
    flour: set[str] | frozenset[str] = frozenset(),
    cases: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """One run in the public layout: run.json, scores.json, cases/<case>/<repeat>.json; `env`
    is the target's environment as the public tool records it."""
    run_id = f"{started.strftime('%Y%m%dT%H%M%S.%fZ')}-{suite}-{SUITE_HASH[:8]}"
    run_dir = root / "runs" / run_id
    entries, scores = [], {}
    for case_id in cases or list(ANSWERS):
        records = []
        for repeat in range(repeats):
            argv = [a.replace("{{case_id}}", case_id) for a in command]
            argv = [a.replace("{{input}}", ANSWERS[case_id][0]) for a in argv]
            rec = invocation(
                case_id,
                repeat,
                argv,
                broken=(broken or {}).get(case_id),
                flour=case_id in flour,
            )
            _dump(run_dir / "cases" / case_id / f"{repeat}.json", rec)
            records.append(rec)
        ok = sum(r["outcome"] == "ok" for r in records)
        entries.append(
            {
                "case_id": case_id,
                "definition_hash": definition_hash(case_id),
                "outcome": "error" if ok == 0 else "ok" if ok == repeats else "degraded",
                "repeats": repeats,
            }
        )
        scores[case_id] = [_score_list(r, case_id) for r in records]
    finished = started + timedelta(minutes=3, seconds=9)
    _dump(
        run_dir / "run.json",
        {
            "cases": entries,
            "env": env or {},
            "finished_at": finished.isoformat(),
            "git_sha": "ee4aa5d",
            "harness_version": "0.1.0",
            "jobs": 1,
            "repeats": repeats,
            "run_id": run_id,
            "started_at": started.isoformat(),
            "suite_hash": SUITE_HASH,
            "suite_name": suite,
            "target_command": command,
            "target_cwd": cwd,
        },
    )
    _dump(run_dir / "scores.json", scores)
    return run_id


def write_pointer(root: Path, run_id: str, suite: str = SUITE) -> None:
    """baselines/<suite>.json as the public tool writes it."""
    _dump(
        root / "baselines" / f"{suite}.json",
        {"run_id": run_id, "set_at": "2026-09-03T01:48:17.403450+00:00"},
    )


BASE_TIME = datetime(2026, 9, 3, 1, 45, 8, 400182, tzinfo=UTC)
CAND_TIME = datetime(2026, 9, 3, 1, 48, 35, 696525, tzinfo=UTC)


def write_capture(root: Path, command: list[str], **candidate: Any) -> tuple[str, str]:
    """The capture: a baseline run, a candidate run (with what `candidate` plants), the pointer."""
    base = write_run(root, BASE_TIME, command=command)
    cand = write_run(root, CAND_TIME, command=command, **candidate)
    write_pointer(root, base)
    return base, cand
