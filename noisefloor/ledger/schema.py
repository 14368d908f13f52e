"""The ledger's schema: its tables (`samples` with the columns the target kinds declare), its views
(the quarantine-lane design's `runs` relation among them), their version, and the upserts.

Rows come from `ledger/rows.py`; opening, locking and transactions from `store/sqlite.py`.
"""

from __future__ import annotations

from noisefloor.targets.kinds import ledger_fields

__all__ = [
    "SCHEMA_VERSION",
    "UPSERT_LABEL_RUN",
    "UPSERT_RUN",
    "UPSERT_RUN_SAMPLE",
    "kind_columns",
    "schema",
    "upsert_sample",
]

#: Bump whenever a table or a view changes; an older ledger is dropped and rebuilt from the files.
SCHEMA_VERSION = 2

#: The columns of `samples` every sample fills, with their declarations; the target kinds add
#: theirs (`ledger_fields`), each after the column it names.
_COMMON_SAMPLE_COLUMNS = (
    ("sample_path", "TEXT PRIMARY KEY"),
    ("suite", "TEXT NOT NULL"),
    ("case_id", "TEXT NOT NULL"),
    ("repeat_idx", "INTEGER NOT NULL"),
    ("target_key", "TEXT NOT NULL"),
    ("case_key", "TEXT NOT NULL"),
    ("epoch", "INTEGER NOT NULL"),
    ("kind", "TEXT"),
    ("started_at", "TEXT"),
    ("outcome", "TEXT NOT NULL"),
    ("error", "TEXT"),
    ("exit_code", "INTEGER"),
    ("latency_ms", "REAL"),
    ("output_sha", "TEXT"),
    ("output_text", "TEXT"),
    ("stderr_text", "TEXT"),
)


def _sample_columns() -> list[tuple[str, str]]:
    """Every column of `samples` in table order: the common ones, and each kind's placed."""
    columns = list(_COMMON_SAMPLE_COLUMNS)
    for field in ledger_fields():
        names = [name for name, _ in columns]
        if field.name not in names:
            at = names.index(field.after) + 1 if field.after in names else len(columns)
            columns.insert(at, (field.name, "TEXT"))
    return columns


def kind_columns() -> list[str]:
    """The columns of `samples` the target kinds fill from their samples' envelopes."""
    return [field.name for field in ledger_fields()]


_RUN_COLUMNS = (
    "run_id",
    "suite",
    "label",
    "started_at",
    "finished_at",
    "target_key",
    "target_kind",
    "harness_version",
    "calls",
    "rescored_from",
)

_RUN_SAMPLE_COLUMNS = ("run_id", "case_id", "repeat_idx", "sample_path", "status", "reason")

# The views name the built-in kinds' columns: the quarantine-lane design's `runs` is exactly its
# columns, whatever kinds a process registers.
_TABLES_AND_VIEWS = (
    "CREATE INDEX samples_case ON samples (suite, case_id)",
    """
    CREATE TABLE run_records (
        run_id TEXT PRIMARY KEY,
        suite TEXT NOT NULL,
        label TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        target_key TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        harness_version TEXT NOT NULL,
        calls INTEGER NOT NULL,
        rescored_from TEXT
    )
    """,
    """
    CREATE TABLE run_samples (
        run_id TEXT NOT NULL,
        case_id TEXT NOT NULL,
        repeat_idx INTEGER NOT NULL,
        sample_path TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'invalid')),
        reason TEXT NOT NULL,
        PRIMARY KEY (run_id, case_id, repeat_idx)
    )
    """,
    "CREATE INDEX run_samples_case ON run_samples (case_id)",
    # The runs a label names now (labels/<suite>/<label>.json): `--replace` starts a label over
    """
    CREATE TABLE label_runs (
        suite TEXT NOT NULL,
        label TEXT NOT NULL,
        run_id TEXT NOT NULL,
        PRIMARY KEY (suite, label, run_id)
    )
    """,
    # Every scored repeat a run took, with the sample's columns. They come through a LEFT JOIN
    # so that a repeat whose sample file is gone still shows up.
    """
    CREATE VIEW ledger AS
    SELECT
        r.run_id AS run_id,
        r.suite AS suite,
        r.label AS label,
        r.started_at AS started_at,
        r.target_key AS target_key,
        s.model AS model,
        s.served_model AS served_model,
        s.base_host AS base_host,
        COALESCE(s.harness_version, r.harness_version) AS harness_version,
        rs.case_id AS case_id,
        rs.repeat_idx AS repeat_idx,
        rs.status AS status,
        rs.reason AS reason,
        s.outcome AS outcome,
        s.error AS error,
        s.latency_ms AS latency_ms,
        s.finish_reason AS finish_reason,
        s.prompt_sha AS prompt_sha,
        s.request_sha AS request_sha,
        s.output_sha AS output_sha,
        s.output_text AS output_text,
        s.stderr_text AS stderr_text,
        s.raw_json AS raw_json,
        rs.sample_path AS sample_path,
        s.started_at AS sample_started_at
    FROM run_samples AS rs
    JOIN run_records AS r ON r.run_id = rs.run_id
    LEFT JOIN samples AS s ON s.sample_path = rs.sample_path
    """,
    # The quarantine-lane design's `runs`: exactly its columns, one row per case-repeat, so that
    # its queries run unchanged. A run's label shows only while the label names the run, so a
    # label's rows are its pool (a rescored copy of a run, or a run `--replace` dropped, has none).
    """
    CREATE VIEW runs AS
    SELECT
        l.run_id AS run_id,
        lr.label AS label,
        l.started_at AS started_at,
        l.model AS model,
        l.base_host AS base_host,
        l.harness_version AS harness_version,
        l.case_id AS case_id,
        l.repeat_idx AS repeat_idx,
        l.status AS status,
        l.reason AS reason,
        l.latency_ms AS latency_ms,
        l.finish_reason AS finish_reason,
        l.prompt_sha AS prompt_sha,
        l.output_sha AS output_sha,
        l.output_text AS output_text,
        l.raw_json AS raw_json
    FROM ledger AS l
    LEFT JOIN label_runs AS lr
        ON lr.run_id = l.run_id AND lr.suite = l.suite AND lr.label = l.label
    """,
)


def schema() -> tuple[str, ...]:
    """The statements that create the ledger's tables and views, `samples` with the columns of
    every kind registered in this process."""
    declared = ",\n".join(f"        {name} {decl}" for name, decl in _sample_columns())
    return (f"\n    CREATE TABLE samples (\n{declared}\n    )\n    ", *_TABLES_AND_VIEWS)


# -- upserts ---------------------------------------------------------------------------------


def _upsert_sql(table: str, columns: tuple[str, ...]) -> str:
    names = ", ".join(columns)
    marks = ", ".join(f":{c}" for c in columns)
    return f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({marks})"


UPSERT_RUN = _upsert_sql("run_records", _RUN_COLUMNS)
UPSERT_RUN_SAMPLE = _upsert_sql("run_samples", _RUN_SAMPLE_COLUMNS)
UPSERT_LABEL_RUN = _upsert_sql("label_runs", ("suite", "label", "run_id"))


def upsert_sample() -> str:
    """The upsert of one `samples` row, named parameters for every column."""
    return _upsert_sql("samples", tuple(name for name, _ in _sample_columns()))
