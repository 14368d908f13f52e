"""The SQLite ledger: every sample file, run and scored repeat as rows, queryable across runs.

An index only: the JSON files stay the source of truth and rebuild it (ledger_rows reads them).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from noisefloor.errors import StoreError
from noisefloor.ledger.rows import (
    Row,
    ScoreFiles,
    label_row,
    read_sample,
    relative,
    run_row,
    run_sample_rows,
    sample_files,
    sample_row,
)
from noisefloor.ledger.schema import (
    SCHEMA_VERSION,
    UPSERT_LABEL_RUN,
    UPSERT_RUN,
    UPSERT_RUN_SAMPLE,
    kind_columns,
    schema,
    upsert_sample,
)
from noisefloor.model.records import (
    RunRecord,
)
from noisefloor.store.sqlite import Database, transaction
from noisefloor.store.store import Store

__all__ = ["LEDGER_FILE", "Ledger", "SCHEMA_VERSION", "ScoreFiles", "ledger_path"]

#: The ledger's file name under the store root (ignored by the store's .gitignore).
LEDGER_FILE = "ledger.sqlite"

_OUTPUT_CHARS = 200


def ledger_path(store_root: Path) -> Path:
    """Where the ledger of a store lives.

    Args:
        store_root: The store root.

    Returns:
        `<store root>/ledger.sqlite`.
    """
    return Path(store_root) / LEDGER_FILE


class Ledger(Database):
    """An open ledger: WAL mode, a 30 s busy timeout, one commit per batch of samples.

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
        # a ledger file cut to nothing opens as a new one, and forgot its runs just as a
        # corrupt one does
        blank = os.path.isfile(path) and os.path.getsize(path) == 0
        super().__init__(path, schema(), SCHEMA_VERSION)
        self._score_files = score_files
        try:
            self._add_kind_columns()
            if (self.recreated or blank) and self.path.name == LEDGER_FILE:
                # an older schema or a corrupt file was dropped: index the store's files again,
                # in place (upserts), so that no command sees a ledger that forgot its runs
                _fill(self._db(), Store(self.path.parent), self._scores())
        except BaseException:
            self.close()
            raise

    def _add_kind_columns(self) -> None:
        """Add to `samples` the columns of kinds registered since the file was made (at its end):
        the schema's version counts the built-in kinds alone."""
        conn = self._db()

        def missing() -> list[str]:
            have = {row[1] for row in conn.execute("PRAGMA table_info(samples)")}
            return [name for name in kind_columns() if name not in have]

        if not missing():
            return
        with transaction(conn):
            for name in missing():  # again under the write lock: another process may have
                conn.execute(f'ALTER TABLE samples ADD COLUMN "{name}" TEXT')

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
        """Upsert the row of one sample file and commit at once (`index_samples` of one).

        Args:
            store_root: The store root.
            path: The sample file, absolute or relative to the root.
            sample: The sample as written (`RawSample.model_dump(mode="json")`, redacted).

        Raises:
            StoreError: The path is not a sample file path under the root.
        """
        self.index_samples(store_root, [(path, sample)])

    def index_samples(
        self, store_root: Path, samples: Sequence[tuple[Path, dict[str, Any]]]
    ) -> None:
        """Upsert the rows of sample files in one commit (a commit each cost ~0.5 ms here,
        a quarter of launching a small program).

        Args:
            store_root: The store root.
            samples: Each sample file (absolute or relative to the root) and its sample as
                written (`RawSample.model_dump(mode="json")`, redacted).

        Raises:
            StoreError: A path is not a sample file path under the root.
        """
        rows = [sample_row(relative(store_root, path), sample) for path, sample in samples]

        def work(conn: sqlite3.Connection) -> None:
            conn.executemany(upsert_sample(), rows)

        self.write(work)

    def index_run(self, store_root: Path, run: RunRecord) -> None:
        """Upsert a run, the status of each repeat it took and its samples, in one transaction.

        The status comes from the run's score files; a repeat without one is `invalid`
        (`unscored`). A run that rests on what an indexed run rests on (`_twin`: a check that
        changed nothing) takes that run's statuses instead. Sample files that are missing are
        skipped. A labelled run also refreshes which runs its label names (`--replace` drops the
        earlier ones from the label's rows).

        Args:
            store_root: The store root.
            run: The completed run.

        Raises:
            StoreError: A sample file is corrupt.
        """
        store = Store(store_root)
        record = run_row(run)
        score_files = self._scores()
        twin = self._twin(store, run)
        links: list[Row] = []
        if twin is None:
            links = run_sample_rows(store, run, score_files)
            # sample files never change once written: read only those not indexed yet (a
            # no-op check of 2,000 cases x 5 repeats otherwise rereads 10,000 files)
            known = {
                row[0]
                for row in self._db().execute(
                    "SELECT sample_path FROM samples WHERE suite = ?", (run.suite,)
                )
            }
            unread = [r["sample_path"] for r in links if r["sample_path"] not in known]
        else:
            unread = [row[0] for row in self._db().execute(_UNINDEXED_SAMPLES, (twin,))]
        # files are read before the transaction, so the write lock is held only for the writes
        samples = [s for s in (read_sample(store.root, rel) for rel in unread) if s]

        members = (
            [label_row(run.suite, run.label, r) for r in store.label_runs(run.suite, run.label)]
            if run.label
            else []
        )

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(UPSERT_RUN, record)
            conn.execute("DELETE FROM run_samples WHERE run_id = ?", (run.run_id,))
            if twin is None:
                conn.executemany(UPSERT_RUN_SAMPLE, links)
            else:
                conn.execute(_COPY_RUN_SAMPLES, (run.run_id, twin))
            conn.executemany(upsert_sample(), samples)
            if run.label:
                conn.execute(
                    "DELETE FROM label_runs WHERE suite = ? AND label = ?", (run.suite, run.label)
                )
                conn.executemany(UPSERT_LABEL_RUN, members)

        self.write(work)

    def _twin(self, store: Store, run: RunRecord) -> str | None:
        """An indexed run whose rows this run's would repeat: the newest other run of its suite,
        target version and harness version, resting on the same repeats of the same sample sets
        with the same scorers, every repeat of it scored. None when there is none.

        A score file is named for what it is computed from, so such a run's statuses are this
        run's: a no-op check copies them instead of reading a score file per case.
        """
        db = self._db()
        found = db.execute(
            _NEWEST_OTHER_RUN, (run.suite, run.target.key, run.harness_version, run.run_id)
        ).fetchone()
        if found is None:
            return None
        twin_id = found[0]
        rows, unscored = db.execute(_SCORED_ROWS, (twin_id,)).fetchone()
        if unscored or rows != sum(c.repeats - c.first_repeat for c in run.cases):
            return None
        try:
            # its file as JSON, not a validated record: any other shape is simply no twin
            cases = store.read_json(store.run_path(run.suite, twin_id))["cases"]
            inputs = [
                (
                    c["case_id"],
                    c["sample_dir"],
                    c.get("start", 0),
                    c.get("first_repeat", 0),
                    c["repeats"],
                    [(u["label"], u["name"], u["params"], u["impl_hash"]) for u in c["scorers"]],
                )
                for c in cases
            ]
        except (StoreError, LookupError, TypeError, AttributeError):  # gone or damaged: none
            return None
        return twin_id if inputs == _row_inputs(run) else None

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

    def history(self, case_id: str | None, suite: str | None = None) -> list[Row]:
        """Every scored repeat of a case (or of a suite's cases) across runs, oldest run first.

        Args:
            case_id: The case; None for every case (then give `suite`).
            suite: Only runs of this suite; None for every suite with such a case.

        Returns:
            Per repeat: run_id, suite, label, started_at, target_key, model, case_id, case_key
            (None when the sample file is gone), repeat_idx, status, reason, output_text cut to
            200 characters, and sample_path.
        """
        sql = (
            "SELECT l.run_id, l.suite, l.label, l.started_at, l.target_key, l.model, l.case_id, "
            "s.case_key, l.repeat_idx, l.status, l.reason, l.output_text, l.sample_path "
            "FROM ledger AS l LEFT JOIN samples AS s ON s.sample_path = l.sample_path WHERE 1"
        )
        params: tuple[str, ...] = ()
        for column, value in (("case_id", case_id), ("suite", suite)):
            if value is not None:
                sql += f" AND l.{column} = ?"
                params += (value,)
        sql += " ORDER BY l.started_at, l.run_id, l.case_id, l.repeat_idx"
        rows = [dict(row) for row in self._db().execute(sql, params)]
        for row in rows:
            row["output_text"] = _cut(row["output_text"])
        return rows


#: The newest other indexed run of a suite and target version taken by this harness version
#: (and so indexed by code that reads score files as this code does) (`Ledger._twin`).
_NEWEST_OTHER_RUN = (
    "SELECT run_id FROM run_records "
    "WHERE suite = ? AND target_key = ? AND harness_version = ? AND run_id != ? "
    "ORDER BY started_at DESC, run_id DESC LIMIT 1"
)
#: A run's rows, and how many of them found no score file.
_SCORED_ROWS = (
    "SELECT count(*), coalesce(sum(reason = 'unscored'), 0) FROM run_samples WHERE run_id = ?"
)
#: The sample files a run's rows name that the `samples` table does not hold.
_UNINDEXED_SAMPLES = (
    "SELECT rs.sample_path FROM run_samples AS rs "
    "LEFT JOIN samples AS s ON s.sample_path = rs.sample_path "
    "WHERE rs.run_id = ? AND s.sample_path IS NULL"
)
#: One run's rows copied under another run's id.
_COPY_RUN_SAMPLES = (
    "INSERT OR REPLACE INTO run_samples "
    "(run_id, case_id, repeat_idx, sample_path, status, reason) "
    "SELECT ?, case_id, repeat_idx, sample_path, status, reason "
    "FROM run_samples WHERE run_id = ?"
)


def _row_inputs(run: RunRecord) -> list[tuple[object, ...]]:
    """What a run's `run_samples` rows are computed from (`run_sample_rows`): each case's
    sample set, the repeats the run took, and its scorers as the score files name them."""
    return [
        (
            c.case_id,
            c.sample_dir,
            c.start,
            c.first_repeat,
            c.repeats,
            [(u.label, u.name, u.params, u.impl_hash) for u in c.scorers],
        )
        for c in run.cases
    ]


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= _OUTPUT_CHARS:
        return text
    return text[: _OUTPUT_CHARS - 3] + "..."


def _fill(conn: sqlite3.Connection, store: Store, score_files: ScoreFiles) -> dict[str, int]:
    """Upsert the rows of every sample file, run record and label under the root."""
    read = (read_sample(store.root, rel) for rel in sample_files(store.root))
    samples = [row for row in read if row]
    runs = [store.load_run(suite, run_id) for suite, run_id in store.runs()]
    links = [row for run in runs for row in run_sample_rows(store, run, score_files)]
    members = [label_row(suite, label, r) for suite, label, ids in store.labels() for r in ids]
    # files are read before the transaction, so the write lock is held only for the writes
    with transaction(conn):
        conn.executemany(upsert_sample(), samples)
        conn.executemany(UPSERT_RUN, [run_row(run) for run in runs])
        conn.executemany(UPSERT_RUN_SAMPLE, links)
        conn.executemany(UPSERT_LABEL_RUN, members)
    return {"samples": len(samples), "runs": len(runs), "run_samples": len(links)}
