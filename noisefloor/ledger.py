"""The SQLite ledger: every sample file, run and scored repeat as rows, queryable across runs.

An index only: the JSON files under the store root stay the source of truth and can rebuild it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from noisefloor.errors import StoreError
from noisefloor.ledger_schema import (
    KIND_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    UPSERT_LABEL_RUN,
    UPSERT_RUN,
    UPSERT_RUN_SAMPLE,
    UPSERT_SAMPLE,
)
from noisefloor.records import (
    CaseRecord,
    RepeatScore,
    RepeatStatus,
    RunRecord,
    ScorerUse,
    repeat_status,
)
from noisefloor.sqlite_db import Database, transaction
from noisefloor.store import Store, has_sample
from noisefloor.targets.base import output_sha
from noisefloor.targets.kinds import kind_named

__all__ = ["LEDGER_FILE", "Ledger", "SCHEMA_VERSION", "ScoreFiles", "ledger_path"]

#: The ledger's file name under the store root (ignored by the store's .gitignore).
LEDGER_FILE = "ledger.sqlite"

#: Where a run's score of one case by one scorer lies: (store, suite, case, scorer) -> file. The
#: engine names score files; whoever opens the ledger to index runs passes its naming.
ScoreFiles = Callable[[Store, str, CaseRecord, ScorerUse], Path]

_OUTPUT_CHARS = 200

_SAMPLE_NAME = re.compile(r"^r(\d+)\.json$")
_EPOCH_NAME = re.compile(r"^e(\d+)$")


Row = dict[str, Any]


def ledger_path(store_root: Path) -> Path:
    """Where the ledger of a store lives.

    Args:
        store_root: The store root.

    Returns:
        `<store root>/ledger.sqlite`.
    """
    return Path(store_root) / LEDGER_FILE


# -- rows from files -------------------------------------------------------------------------


def _text(stream: Any) -> str | None:
    return str(stream.get("text", "")) if isinstance(stream, dict) else None


def _sample_row(rel: str, sample: dict[str, Any]) -> Row:
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
    # what of its envelope a sample shows is its kind's to say; the rest stays NULL
    shown = dict.fromkeys(KIND_COLUMNS) | {
        k: v
        for k, v in kind_named(str(sample.get("kind"))).ledger_columns(sample).items()
        if k in KIND_COLUMNS
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


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise StoreError(
            f"corrupt file {path}: {exc}",
            hint="delete it; samples are re-taken and derived files rebuilt on the next run",
        ) from None


def _read_sample(store_root: Path, rel: str) -> Row | None:
    path = store_root / rel
    if not has_sample(str(path)):  # missing, or left empty by a crash: taken again by a run
        return None
    data = _read_json(path)
    if not isinstance(data, dict):
        raise StoreError(f"corrupt sample file {path}: not a JSON object")
    return _sample_row(rel, data)


def _scorer_key(use: ScorerUse) -> tuple[str, str, bytes, str]:
    # what a score file must hold to be the run's; min_effect and suspect_drop tune the gate,
    # not pass or fail, and are in neither the file nor its name
    params = orjson.dumps(use.params, option=orjson.OPT_SORT_KEYS)
    return use.label, use.name, params, use.impl_hash


def _read_scores(
    store: Store, suite: str, case: CaseRecord, score_files: ScoreFiles
) -> list[dict[int, RepeatScore]] | None:
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
                r["repeat"]: RepeatScore.model_construct(
                    **{**r, "status": RepeatStatus(r["status"])}
                )
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
    case: CaseRecord, scores: list[dict[int, RepeatScore]] | None, repeat: int
) -> tuple[str, str]:
    if scores is None or any(repeat not in s for s in scores):
        return "invalid", "unscored"
    return repeat_status(
        [(use.label, s[repeat]) for use, s in zip(case.scorers, scores, strict=True)]
    )


def _run_row(run: RunRecord) -> Row:
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


def _label_row(suite: str, label: str, run_id: str) -> Row:
    return {"suite": suite, "label": label, "run_id": run_id}


def _run_sample_rows(store: Store, run: RunRecord, score_files: ScoreFiles) -> list[Row]:
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


def _sample_files(store_root: Path) -> list[str]:
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


class Ledger(Database):
    """An open ledger: WAL mode, a 30 s busy timeout, one commit per sample.

    Every open ledger holds a shared lock on `<file>.lock`; `rebuild` takes it exclusively, because
    swapping the database file under a live WAL connection would corrupt it.

    Attributes:
        path: The database file.
        recreated: True when an older-version or corrupt file was replaced on open; a ledger
            at a store root (`ledger_path`) is then filled again from the JSON files.
    """

    def __init__(self, path: Path, score_files: ScoreFiles | None = None) -> None:
        """Open (creating if needed) the ledger at `path`.

        Args:
            path: The database file, normally `ledger_path(store_root)`.
            score_files: Where score files lie, to index runs (`index_run`, `rebuild`, and the
                refill of a recreated ledger); a ledger opened without it only reads and
                indexes samples.

        Raises:
            StoreError: The file was written by a newer noisefloor, or stays locked.
        """
        super().__init__(path, SCHEMA, SCHEMA_VERSION)
        self._score_files = score_files
        try:
            if self.recreated and self.path.name == LEDGER_FILE:
                # an older schema or a corrupt file was dropped: index the store's files again,
                # in place (upserts), so that no command sees a ledger that forgot its runs
                _fill(self._db(), Store(self.path.parent), self._scores())
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Ledger:
        """Use the ledger in a `with` block that closes it."""
        return self

    def _scores(self) -> ScoreFiles:
        if self._score_files is None:
            raise StoreError(
                f"the ledger {self.path} was opened to read: it cannot index runs",
                hint="a bug in noisefloor; `noisefloor ledger rebuild` indexes every run",
            )
        return self._score_files

    # -- writing -----------------------------------------------------------------------------
    def index_sample(self, store_root: Path, path: Path, sample: dict[str, Any]) -> None:
        """Upsert the row of one sample file and commit at once.

        One commit per sample: a run killed halfway keeps every sample it took in the ledger.

        Args:
            store_root: The store root.
            path: The sample file, absolute or relative to the root.
            sample: The sample as written (`RawSample.model_dump(mode="json")`, redacted).

        Raises:
            StoreError: The path is not a sample file path under the root.
        """
        row = _sample_row(_relative(store_root, path), sample)

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(UPSERT_SAMPLE, row)

        self.write(work)

    def index_run(self, store_root: Path, run: RunRecord) -> None:
        """Upsert a run, the status of each repeat it took and its samples, in one transaction.

        The status comes from the run's score files; a repeat without one is `invalid`
        (`unscored`). Sample files that are missing are skipped. A labelled run also refreshes
        which runs its label names (`--replace` drops the earlier ones from the label's rows).

        Args:
            store_root: The store root.
            run: The completed run.

        Raises:
            StoreError: A sample file is corrupt.
        """
        store = Store(store_root)
        run_row = _run_row(run)
        links = _run_sample_rows(store, run, self._scores())
        # sample files never change once written: read only those not indexed yet (a no-op
        # check of 2,000 cases x 5 repeats otherwise rereads 10,000 files)
        known = {
            row[0]
            for row in self._db().execute(
                "SELECT sample_path FROM samples WHERE suite = ?", (run.suite,)
            )
        }
        # files are read before the transaction, so the write lock is held only for the writes
        samples = [
            s
            for s in (
                _read_sample(store.root, r["sample_path"])
                for r in links
                if r["sample_path"] not in known
            )
            if s
        ]

        members = (
            [_label_row(run.suite, run.label, r) for r in store.label_runs(run.suite, run.label)]
            if run.label
            else []
        )

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(UPSERT_RUN, run_row)
            conn.execute("DELETE FROM run_samples WHERE run_id = ?", (run.run_id,))
            conn.executemany(UPSERT_RUN_SAMPLE, links)
            conn.executemany(UPSERT_SAMPLE, samples)
            if run.label:
                conn.execute(
                    "DELETE FROM label_runs WHERE suite = ? AND label = ?", (run.suite, run.label)
                )
                conn.executemany(UPSERT_LABEL_RUN, members)

        self.write(work)

    def rebuild(self, store_root: Path) -> dict[str, int]:
        """Recreate the ledger from every sample file and run record under the root.

        The new ledger is written beside the old one and swapped in with `os.replace`, so a
        rebuild that fails leaves the old ledger as it was. Waits up to `sqlite_db.EXCLUSIVE_WAIT_S` for
        other open ledgers to close.

        Args:
            store_root: The store root.

        Returns:
            Rows written: `{"samples": n, "runs": n, "run_samples": n}`.

        Raises:
            StoreError: A sample or run file is corrupt, or the ledger stays open elsewhere.
        """
        store = Store(store_root)
        score_files = self._scores()
        return self.replace_with(lambda conn: _fill(conn, store, score_files))

    # -- reading -----------------------------------------------------------------------------
    def ledger_rows(self, run_id: str | None = None) -> list[Row]:
        """Rows of the `ledger` view, of one run or of all, by run, case and repeat.

        Args:
            run_id: Only this run's rows; None for every run.

        Returns:
            One dict per scored repeat, keyed by the view's column names.
        """
        sql = "SELECT * FROM ledger"
        params: tuple[str, ...] = ()
        if run_id is not None:
            sql += " WHERE run_id = ?"
            params = (run_id,)
        sql += " ORDER BY run_id, case_id, repeat_idx"
        return [dict(row) for row in self._db().execute(sql, params)]

    def history(self, case_id: str, suite: str | None = None) -> list[Row]:
        """One case across runs, oldest run first: pass and valid counts, and each repeat.

        Args:
            case_id: The case.
            suite: Only runs of this suite; None for every suite with such a case.

        Returns:
            Per run: run_id, suite, label, started_at, target_key, model, passes, valid (pass +
            fail), and repeats (repeat_idx, status, reason, output_text cut to 200 characters).
        """
        sql = (
            "SELECT run_id, suite, label, started_at, target_key, model, repeat_idx, status, "
            "reason, output_text FROM ledger WHERE case_id = ?"
        )
        params: tuple[str, ...] = (case_id,)
        if suite is not None:
            sql += " AND suite = ?"
            params += (suite,)
        sql += " ORDER BY started_at, run_id, repeat_idx"
        runs: dict[str, Row] = {}
        for row in self._db().execute(sql, params):
            entry = runs.get(row["run_id"])
            if entry is None:
                entry = runs[row["run_id"]] = {
                    "run_id": row["run_id"],
                    "suite": row["suite"],
                    "label": row["label"],
                    "started_at": row["started_at"],
                    "target_key": row["target_key"],
                    "model": row["model"],
                    "passes": 0,
                    "valid": 0,
                    "repeats": [],
                }
            entry["passes"] += row["status"] == "pass"
            entry["valid"] += row["status"] in ("pass", "fail")
            entry["model"] = entry["model"] or row["model"]
            entry["repeats"].append(
                {
                    "repeat_idx": row["repeat_idx"],
                    "status": row["status"],
                    "reason": row["reason"],
                    "output_text": _cut(row["output_text"]),
                }
            )
        return list(runs.values())


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= _OUTPUT_CHARS:
        return text
    return text[: _OUTPUT_CHARS - 3] + "..."


def _relative(store_root: Path, path: Path) -> str:
    root = Path(store_root).absolute()
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        raise StoreError(f"{path} is not under the store root {root}") from None


def _fill(conn: sqlite3.Connection, store: Store, score_files: ScoreFiles) -> dict[str, int]:
    """Upsert the rows of every sample file, run record and label under the root."""
    read = (_read_sample(store.root, rel) for rel in _sample_files(store.root))
    samples = [row for row in read if row]
    runs = [store.load_run(suite, run_id) for suite, run_id in store.runs()]
    links = [row for run in runs for row in _run_sample_rows(store, run, score_files)]
    members = [_label_row(suite, label, r) for suite, label, ids in store.labels() for r in ids]
    # files are read before the transaction, so the write lock is held only for the writes
    with transaction(conn):
        conn.executemany(UPSERT_SAMPLE, samples)
        conn.executemany(UPSERT_RUN, [_run_row(run) for run in runs])
        conn.executemany(UPSERT_RUN_SAMPLE, links)
        conn.executemany(UPSERT_LABEL_RUN, members)
    return {"samples": len(samples), "runs": len(runs), "run_samples": len(links)}
