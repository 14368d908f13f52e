"""The ledger's rows, read from the store's files: one per sample file, run, label member and
scored repeat (its status from the run's score files); nothing here touches the database."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from noisefloor.errors import StoreError
from noisefloor.ledger.schema import kind_columns
from noisefloor.model.records import (
    CaseRecord,
    RepeatStatus,
    RunRecord,
    ScorerUse,
    repeat_status,
)
from noisefloor.store.layout import has_sample
from noisefloor.store.store import Store
from noisefloor.targets.base import output_sha
from noisefloor.targets.kinds import kind_named

__all__ = [
    "Row",
    "ScoreFiles",
    "label_row",
    "read_sample",
    "relative",
    "run_row",
    "run_sample_rows",
    "sample_files",
    "sample_row",
]

#: Where a run's score of one case by one scorer lies: (store, suite, case, scorer) -> file. The
#: engine names score files; whoever opens the ledger to index runs passes its naming.
ScoreFiles = Callable[[Store, str, CaseRecord, ScorerUse], Path]

_SAMPLE_NAME = re.compile(r"^r(\d+)\.json$")
_EPOCH_NAME = re.compile(r"^e(\d+)$")


Row = dict[str, Any]


def _text(stream: Any) -> str | None:
    return str(stream.get("text", "")) if isinstance(stream, dict) else None


def sample_row(rel: str, sample: dict[str, Any]) -> Row:
    """One `samples` row; the path, not the file's content, says which sample set it belongs to."""
    # samples/<suite>/<target_key>/e<epoch>/<case_id>/<case_key>/r<k>.json (Store.sample_dir)
    parts = rel.split("/")
    name = _SAMPLE_NAME.match(parts[-1])
    epoch = _EPOCH_NAME.match(parts[3]) if len(parts) == 7 else None
    if parts[0] != "samples" or name is None or epoch is None:
        raise StoreError(
            f"{rel} is not a sample file path "
            "(samples/SUITE/TARGET_KEY/eEPOCH/CASE_ID/CASE_KEY/rREPEAT.json)"
        )
    output = _text(sample.get("output")) or ""
    wall_s = sample.get("wall_s")
    # what of its envelope a sample shows is its kind's to say, in the columns it declares; the
    # rest stays NULL
    kind = kind_named(str(sample.get("kind")))
    declared = {field.name for field in kind.ledger_fields}
    shown = dict.fromkeys(kind_columns()) | {
        k: v for k, v in kind.ledger_columns(sample).items() if k in declared
    }
    return {
        "sample_path": rel,
        "suite": parts[1],
        "case_id": parts[4],
        "repeat_idx": int(name.group(1)),
        "target_key": parts[2],
        "case_key": parts[5],
        "epoch": int(epoch.group(1)),
        "kind": sample.get("kind"),
        "started_at": sample.get("started_at") or None,
        **shown,
        "outcome": str(sample.get("outcome", "")),
        "error": sample.get("error"),
        "exit_code": sample.get("exit_code"),
        "latency_ms": round(float(wall_s) * 1000, 3) if wall_s is not None else None,
        # computed from the stored text, so that it always matches the output_text column
        "output_sha": output_sha(output),
        "output_text": output,
        "stderr_text": _text(sample.get("stderr")),
    }


def read_sample(store_root: Path, rel: str) -> Row | None:
    """The ledger row of one sample file; None when it holds no sample: missing, left empty by
    a crash, or corrupt (each counts as missing, and a run takes it again)."""
    path = store_root / rel
    if not has_sample(str(path)):
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("outcome"), str):
        return None  # another shape: no sample's
    return sample_row(rel, data)


def _scorer_key(use: ScorerUse) -> tuple[str, str, bytes, str]:
    # what a score file must hold to be the run's; min_effect and suspect_drop tune the gate,
    # not pass or fail, and are in neither the file nor its name
    params = orjson.dumps(use.params, option=orjson.OPT_SORT_KEYS)
    return use.label, use.name, params, use.impl_hash


class _Graded(NamedTuple):
    """The two fields of a repeat's score that its status reads (`records.Graded`)."""

    status: RepeatStatus
    detail: str


_STATUS = {status.value: status for status in RepeatStatus}


def _read_scores(
    store: Store, suite: str, case: CaseRecord, score_files: ScoreFiles
) -> list[dict[int, _Graded]] | None:
    """Each scorer's repeats of one case, in the case's scorer order; None if any is unscored.

    A score file is named for its sample set and scorer; it must also hold the very scorer the
    run used (label, name, params and code hash).
    """
    if not case.scorers:
        return None
    scores = []
    for use in case.scorers:
        # raw JSON, not validated models: this reads a file per scorer of every case indexed
        try:
            data = orjson.loads(score_files(store, suite, case, use).read_bytes())
            saved = data["scorer"]
            key = (
                saved["label"],
                saved["name"],
                orjson.dumps(saved["params"], option=orjson.OPT_SORT_KEYS),
                saved["impl_hash"],
            )
            repeats = {
                r["repeat"]: _Graded(_STATUS[r["status"]], r.get("detail", ""))
                for r in data["repeats"]
            }
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            # score files are derived: a missing or broken one means "not scored yet"
            return None
        if key != _scorer_key(use):
            return None
        scores.append(repeats)
    return scores


def _repeat_status(
    case: CaseRecord, scores: list[dict[int, _Graded]] | None, repeat: int
) -> tuple[str, str]:
    if scores is None or any(repeat not in s for s in scores):
        return "invalid", "unscored"
    return repeat_status(
        [(use.label, s[repeat]) for use, s in zip(case.scorers, scores, strict=True)]
    )


def run_row(run: RunRecord) -> Row:
    return {
        "run_id": run.run_id,
        "suite": run.suite,
        "label": run.label,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "target_key": run.target.key,
        "target_kind": run.target.kind,
        "harness_version": run.harness_version,
        "calls": run.calls,
        "rescored_from": run.rescored_from,
    }


def label_row(suite: str, label: str, run_id: str) -> Row:
    return {"suite": suite, "label": label, "run_id": run_id}


def run_sample_rows(store: Store, run: RunRecord, score_files: ScoreFiles) -> list[Row]:
    rows = []
    for case in run.cases:
        scores = _read_scores(store, run.suite, case, score_files)
        # the repeats this run took; earlier runs of its label hold the rows of the others
        for repeat in range(case.first_repeat, case.repeats):
            status, reason = _repeat_status(case, scores, repeat)
            rows.append(
                {
                    "run_id": run.run_id,
                    "case_id": case.case_id,
                    "repeat_idx": repeat,
                    "sample_path": f"{case.sample_dir}/r{repeat}.json",
                    "status": status,
                    "reason": reason,
                }
            )
    return rows


def sample_files(store_root: Path) -> list[str]:
    """Every sample file under the root, relative and sorted (temporary files are skipped)."""
    base = store_root / "samples"
    if not base.is_dir():
        return []
    found = [
        path.relative_to(store_root).as_posix()
        for path in base.glob("*/*/e*/*/*/r*.json")
        if _SAMPLE_NAME.match(path.name) and _EPOCH_NAME.match(path.parents[2].name)
    ]
    return sorted(found)


def relative(store_root: Path, path: Path) -> str:
    root = Path(store_root).absolute()
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        raise StoreError(f"{path} is not under the store root {root}") from None
