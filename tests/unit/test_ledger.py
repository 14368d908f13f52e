"""The SQLite ledger against small stores built by hand: rows, statuses, rebuild, concurrency.

Score files are written directly, so each status rule is tested without running a scorer.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.errors import StoreError
from noisefloor.ledger.ledger import SCHEMA_VERSION, Ledger, ledger_path
from noisefloor.model.records import (
    CaseRecord,
    RepeatScore,
    RepeatStatus,
    RunRecord,
    ScoreFile,
    ScorerUse,
    TargetRecord,
)
from noisefloor.pipeline.engine import score_file
from noisefloor.store import sqlite as sqlite_db
from noisefloor.store.store import Store
from noisefloor.targets.base import Outcome, RawSample, Stream

SUITE = "demo"
TARGET = "a1b2c3d4e5f60718"
DESIGN_COLUMNS = {
    "run_id",
    "label",
    "started_at",
    "model",
    "base_host",
    "harness_version",
    "case_id",
    "repeat_idx",
    "status",
    "reason",
    "latency_ms",
    "finish_reason",
    "prompt_sha",
    "output_sha",
    "output_text",
    "raw_json",
    "suite",
    "sample_path",
    "outcome",
}

S = RepeatStatus
OK, FAIL, TERR, INFRA, SERR = S.PASS, S.FAIL, S.TARGET_ERROR, S.INFRA_ERROR, S.SCORER_ERROR


def _envelope(text: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "status": 200,
        "finish_reason": finish,
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
        "latency_ms": 41.5,
        "prompt_sha": "p" * 64,
        "output_sha": "o" * 64,
        "raw": {"id": "chatcmpl-1", "choices": [{"message": {"content": text}}]},
        "requested_model": "tiny-1",
        "served_model": "tiny-1-0625",
        "host": "llm.internal:8080",
        "harness_version": "0.1.0",
    }


def _http(case_id: str, repeat: int, text: str, **extra: Any) -> RawSample:
    finish = "length" if extra.get("outcome") is Outcome.FINISH else "stop"
    return RawSample(
        kind="http",
        case_id=case_id,
        repeat=repeat,
        outcome=Outcome.OK,
        output=Stream(text=text, size=len(text)),
        wall_s=0.25,
        started_at=f"2025-01-01T00:00:0{repeat}.000000Z",
        envelope=_envelope(text, finish),
    ).model_copy(update=extra)


def _command(case_id: str, repeat: int, text: str, **extra: Any) -> RawSample:
    return RawSample(
        kind="command",
        case_id=case_id,
        repeat=repeat,
        outcome=Outcome.OK,
        output=Stream(text=text, size=len(text)),
        stderr=Stream(text=f"warning {repeat}\n", size=10),
        exit_code=0,
        argv=["python", "prog.py", f"question {case_id}"],
        wall_s=0.5,
        started_at=f"2025-01-01T00:01:0{repeat}.000000Z",
    ).model_copy(update=extra)


class Fixture:
    """A store under construction: samples, score files and runs."""

    def __init__(self, root: Path) -> None:
        self.store = Store(root)
        self.store.ensure()
        self.root = self.store.root

    def case(
        self, case_id: str, samples: list[RawSample], labels: list[str], epoch: int = 0
    ) -> CaseRecord:
        case_key = hashlib.sha256(case_id.encode()).hexdigest()[:16]
        directory = self.store.sample_dir(SUITE, case_id, TARGET, case_key, epoch)
        for sample in samples:
            path = self.store.sample_path(directory, sample.repeat)
            self.store.write_sample(path, sample.model_dump(mode="json"))
        return CaseRecord(
            case_id=case_id,
            case_key=case_key,
            input=f"question {case_id}",
            repeats=len(samples),
            sample_dir=self.store.rel(directory),
            scorers=[
                ScorerUse(label=label, name=label.split(":")[1], params={}, impl_hash="h")
                for label in labels
            ],
        )

    def score(self, case: CaseRecord, label: str, repeats: list[tuple[S, str]]) -> None:
        use = next(u for u in case.scorers if u.label == label)
        score = ScoreFile(
            case_id=case.case_id,
            scorer=use,
            kind="binary",
            direction="higher",
            repeats=[
                RepeatScore(repeat=k, status=status, detail=detail)
                for k, (status, detail) in enumerate(repeats)
            ],
        )
        self.store.write_json(score_file(self.store, SUITE, case, use), score)

    def run(self, run_id: str, cases: list[CaseRecord], label: str | None = None) -> RunRecord:
        run = RunRecord(
            run_id=run_id,
            suite=SUITE,
            label=label,
            started_at=run_id[:8],
            finished_at=run_id[:8] + "Z",
            harness_version="0.1.0",
            target=TargetRecord(kind="http", key=TARGET, spec={"model": "tiny-1"}),
            epoch=0,
            jobs=1,
            calls=sum(c.repeats for c in cases),
            cases=cases,
        )
        self.store.save_run(run)
        return run

    def sample_files(self) -> list[Path]:
        return sorted((self.root / "samples").rglob("r*.json"))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Fixture, RunRecord, RunRecord]:
    """Two runs: one with every status rule, and a later one of the same case (epoch 1)."""
    fx = Fixture(tmp_path / "store")
    capital = fx.case(
        "capital",
        [
            _http("capital", 0, "Paris"),
            _http("capital", 1, "London"),
            _http("capital", 2, "Par", outcome=Outcome.FINISH, error="finish:length"),
        ],
        ["0:json_valid", "1:contains"],
    )
    truncated = "error:finish: finish:length"
    fx.score(capital, "0:json_valid", [(OK, ""), (FAIL, "not_json"), (TERR, truncated)])
    fx.score(capital, "1:contains", [(OK, ""), (FAIL, "missing:Paris"), (TERR, truncated)])
    invoice = fx.case(
        "invoice",
        [
            _command("invoice", 0, '{"total_cents": 1299}'),
            _command("invoice", 1, "", outcome=Outcome.INFRA, error="connection refused"),
            _command("invoice", 2, "{}"),
            _command("invoice", 3, "{}"),
        ],
        ["0:json_fields"],
    )
    fx.score(
        invoice,
        "0:json_fields",
        [
            (OK, ""),
            (INFRA, "connection refused"),
            (SERR, "ValueError: boom"),
            (FAIL, "missing:invoice_id"),
        ],
    )
    unscored = fx.case("unscored", [_command("unscored", 0, "hi")], ["0:contains"])
    # a score file of another version of the scorer does not count for this run
    changed = unscored.model_copy(
        update={"scorers": [unscored.scorers[0].model_copy(update={"impl_hash": "other"})]}
    )
    fx.score(changed, "0:contains", [(OK, "")])
    first = fx.run("20250101T000000-demo", [capital, invoice, unscored], label="before")
    again = fx.case(
        "capital", [_http("capital", k, "Paris " * 80) for k in range(2)], ["1:contains"], epoch=1
    )
    fx.score(again, "1:contains", [(OK, ""), (OK, "")])
    second = fx.run("20250102T000000-demo", [again], label="after")
    return fx, first, second


def _index_all(fx: Fixture, runs: list[RunRecord]) -> None:
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        for path in fx.sample_files():
            ledger.index_sample(fx.root, path, orjson.loads(path.read_bytes()))
        for run in runs:
            ledger.index_run(fx.root, run)


def _rows(fx: Fixture, run_id: str | None = None) -> list[dict[str, Any]]:
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        return ledger.ledger_rows(run_id)


def test_view_rows_carry_every_design_column(built: tuple[Fixture, RunRecord, RunRecord]) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    rows = _rows(fx, first.run_id)
    assert len(rows) == 3 + 4 + 1
    assert set(rows[0]) >= DESIGN_COLUMNS
    http = rows[0]
    assert (http["case_id"], http["repeat_idx"], http["status"]) == ("capital", 0, "pass")
    assert http["label"] == "before"
    assert http["started_at"] == first.started_at
    assert http["sample_started_at"] == "2025-01-01T00:00:00.000000Z"
    assert http["model"] == "tiny-1"
    assert http["served_model"] == "tiny-1-0625"
    assert http["base_host"] == "llm.internal:8080"
    assert http["harness_version"] == "0.1.0"
    assert http["latency_ms"] == 250.0
    assert http["finish_reason"] == "stop"
    assert http["prompt_sha"] == "p" * 64
    assert http["output_sha"] == hashlib.sha256(b"Paris").hexdigest()
    assert http["output_text"] == "Paris"
    assert orjson.loads(http["raw_json"])["id"] == "chatcmpl-1"
    assert http["outcome"] == "ok"
    assert http["target_key"] == TARGET
    assert http["sample_path"].startswith(f"samples/{SUITE}/{TARGET}/e0/capital/")
    command = next(r for r in rows if r["case_id"] == "invoice" and r["repeat_idx"] == 0)
    argv = ["python", "prog.py", "question invoice"]
    assert command["prompt_sha"] == hashlib.sha256(orjson.dumps(argv)).hexdigest()
    assert command["raw_json"] is None
    assert command["stderr_text"] == "warning 0\n"
    assert command["model"] is None and command["finish_reason"] is None
    # the run's version stands in when the sample carries none
    assert command["harness_version"] == "0.1.0"
    assert command["latency_ms"] == 500.0


def test_status_of_each_repeat_across_scorers(built: tuple[Fixture, RunRecord, RunRecord]) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    got = [(r["case_id"], r["repeat_idx"], r["status"], r["reason"]) for r in _rows(fx)]
    assert got == [
        ("capital", 0, "pass", "ok"),
        ("capital", 1, "fail", "0:json_valid: not_json"),
        ("capital", 2, "fail", "error:finish: finish:length"),
        ("invoice", 0, "pass", "ok"),
        ("invoice", 1, "invalid", "infra:connection refused"),
        ("invoice", 2, "invalid", "grader:ValueError: boom"),
        ("invoice", 3, "fail", "0:json_fields: missing:invoice_id"),
        ("unscored", 0, "invalid", "unscored"),
        ("capital", 0, "pass", "ok"),
        ("capital", 1, "pass", "ok"),
    ]


def test_index_run_alone_makes_the_ledger_whole(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    fx, first, second = built
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        ledger.index_run(fx.root, first)
        ledger.index_run(fx.root, first)  # idempotent
        rows = ledger.ledger_rows()
    assert len(rows) == 8
    assert all(r["outcome"] is not None for r in rows)


def test_a_sample_is_in_the_ledger_before_its_run(tmp_path: Path) -> None:
    fx = Fixture(tmp_path / "store")
    fx.case("capital", [_http("capital", 0, "Paris")], ["0:contains"])
    path = fx.sample_files()[0]
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        ledger.index_sample(fx.root, path, orjson.loads(path.read_bytes()))
    # a second connection sees it: the row was committed at once
    with sqlite3.connect(ledger_path(fx.root)) as conn:
        count = conn.execute("SELECT count(*), max(outcome) FROM samples").fetchone()
    conn.close()
    assert count == (1, "ok")


def test_rebuild_agrees_with_the_incremental_ledger(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    before = _rows(fx)
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        counts = ledger.rebuild(fx.root)
        after_same_handle = ledger.ledger_rows()
    assert counts == {"samples": 10, "runs": 2, "run_samples": 10}
    assert after_same_handle == before
    assert _rows(fx) == before
    leftovers = sorted(p.name for p in fx.root.iterdir() if p.name.startswith("ledger"))
    assert leftovers == ["ledger.sqlite", "ledger.sqlite.lock"]


def test_rebuild_skips_a_sample_a_crash_left_empty(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    """An empty sample counts as missing (the next run takes it again), not as corruption."""
    fx, first, second = built
    fx.sample_files()[0].write_bytes(b"")
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        counts = ledger.rebuild(fx.root)
    assert counts["samples"] == 9


def test_a_corrupt_sample_counts_as_missing_in_a_rebuild(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    """A sample that does not read back is no sample: the next run takes it again."""
    fx, first, second = built
    fx.sample_files()[0].write_bytes(b"{not json")
    fx.sample_files()[1].write_bytes(b'{"another": "shape"}')
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        counts = ledger.rebuild(fx.root)
    assert counts["samples"] == 8


def test_a_failed_rebuild_keeps_the_old_ledger(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    before = _rows(fx)
    Store(fx.root).run_path(first.suite, first.run_id).write_bytes(b"{not json")
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        with pytest.raises(StoreError, match="corrupt"):
            ledger.rebuild(fx.root)
        assert ledger.ledger_rows() == before
    assert not list(fx.root.glob("*.tmp*"))


def test_rebuild_waits_for_other_open_ledgers(
    built: tuple[Fixture, RunRecord, RunRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    fx, first, _ = built
    monkeypatch.setattr(sqlite_db, "EXCLUSIVE_WAIT_S", 0.2)
    with (
        Ledger(ledger_path(fx.root), score_file) as writer,
        Ledger(ledger_path(fx.root), score_file) as other,
    ):
        writer.index_run(fx.root, first)
        with pytest.raises(StoreError, match="open in another process"):
            other.rebuild(fx.root)
        # both handles still work after the refusal
        writer.index_run(fx.root, first)
        assert len(other.ledger_rows()) == 8


def _writer(root: str, paths: list[str], barrier: Any) -> None:
    with Ledger(ledger_path(Path(root)), score_file) as ledger:
        barrier.wait()
        for path in paths:
            ledger.index_sample(Path(root), Path(path), orjson.loads(Path(path).read_bytes()))


def test_two_processes_write_one_ledger_at_once(tmp_path: Path) -> None:
    fx = Fixture(tmp_path / "store")
    for case_id in ("left", "right"):
        fx.case(case_id, [_command(case_id, k, f"answer {k}") for k in range(200)], ["0:x"])
    files = fx.sample_files()
    left = [str(p) for p in files if "/left/" in p.as_posix()]
    right = [str(p) for p in files if "/right/" in p.as_posix()]
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2, timeout=20)
    procs = [
        ctx.Process(target=_writer, args=(str(fx.root), paths, barrier)) for paths in (left, right)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0]
    for proc in procs:
        proc.close()
    with sqlite3.connect(ledger_path(fx.root)) as conn:
        counts = conn.execute("SELECT case_id, count(*) FROM samples GROUP BY case_id").fetchall()
    conn.close()
    assert counts == [("left", 200), ("right", 200)]


def test_history_of_a_case(built: tuple[Fixture, RunRecord, RunRecord]) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        history = ledger.history("capital")
        assert ledger.history("capital", suite="other") == []
        assert ledger.history("nosuch") == []
        every_case = ledger.history(None, suite=SUITE)
    assert [h["run_id"] for h in history] == [first.run_id] * 3 + [second.run_id] * 2
    old, new = history[:3], history[3:]
    assert {(h["label"], h["model"]) for h in old} == {("before", "tiny-1")}
    assert [r["status"] for r in old] == ["pass", "fail", "fail"]
    assert old[2]["reason"] == "error:finish: finish:length"
    assert old[0]["output_text"] == "Paris"
    assert [r["status"] for r in new] == ["pass", "pass"]
    text = new[0]["output_text"]
    assert len(text) == 200 and text.endswith("...")
    # the sample file names the case's input: runs that sent another input pool apart
    assert old[0]["sample_path"].split("/")[-2] == old[0]["case_key"] is not None
    assert {h["case_id"] for h in every_case} == {"capital", "invoice", "unscored"}
    invoice = [h["status"] for h in every_case if h["case_id"] == "invoice"]
    assert invoice == ["pass", "invalid", "invalid", "fail"]


def _user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_an_older_ledger_is_recreated(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE samples (junk TEXT)")
    conn.execute("CREATE VIEW ledger AS SELECT junk FROM samples")
    conn.execute("INSERT INTO samples VALUES ('x')")
    conn.commit()
    conn.close()
    with Ledger(path, score_file) as ledger:
        assert ledger.recreated
        assert ledger.ledger_rows() == []
    assert _user_version(path) == SCHEMA_VERSION
    with Ledger(path, score_file) as ledger:
        assert not ledger.recreated


def test_a_corrupt_ledger_is_recreated_from_the_files(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    fx, first, second = built
    _index_all(fx, [first, second])
    before = _rows(fx)
    path = ledger_path(fx.root)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database, " * 100)
    with Ledger(path, score_file) as ledger:
        assert ledger.recreated
        assert ledger.ledger_rows() == before


def test_a_ledger_whose_runs_table_predates_the_design_relation_is_migrated(
    built: tuple[Fixture, RunRecord, RunRecord],
) -> None:
    fx, first, second = built
    fx.store.set_label(SUITE, "before", [first.run_id])
    path = ledger_path(fx.root)
    conn = sqlite3.connect(path)
    # the first schema: a table named `runs` with columns of its own
    conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, suite TEXT, calls INTEGER)")
    conn.execute("INSERT INTO runs VALUES ('x', 'demo', 3)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Ledger(path, score_file) as ledger:
        assert ledger.recreated
        assert list(dict.fromkeys(h["run_id"] for h in ledger.history("capital"))) == [
            first.run_id,
            second.run_id,
        ]
    conn = sqlite3.connect(path)
    try:
        got = conn.execute(
            "SELECT case_id, status, reason FROM runs WHERE label = ? ORDER BY case_id, repeat_idx",
            ("before",),
        ).fetchall()
    finally:
        conn.close()
    assert got[:2] == [("capital", "pass", "ok"), ("capital", "fail", "0:json_valid: not_json")]
    assert len(got) == 8
    assert _user_version(path) == SCHEMA_VERSION


def test_a_newer_ledger_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="schema version"):
        Ledger(path, score_file)
    assert _user_version(path) == SCHEMA_VERSION + 1


def test_a_path_outside_the_samples_tree_is_refused(tmp_path: Path) -> None:
    fx = Fixture(tmp_path / "store")
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        with pytest.raises(StoreError, match="not a sample file path"):
            ledger.index_sample(fx.root, fx.root / "runs" / "x.json", {})
        with pytest.raises(StoreError, match="not under the store root"):
            ledger.index_sample(fx.root, tmp_path / "elsewhere" / "r0.json", {})


def test_a_lock_that_escapes_the_busy_timeout_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = Fixture(tmp_path / "store")
    fx.case("capital", [_http("capital", 0, "Paris")], ["0:contains"])
    path = fx.sample_files()[0]
    calls = {"n": 0}
    real = sqlite_db.transaction

    def flaky(conn: sqlite3.Connection) -> Any:
        calls["n"] += 1
        if calls["n"] <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(conn)

    monkeypatch.setattr(sqlite_db, "RETRY_SLEEP_S", 0.001)
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        monkeypatch.setattr(sqlite_db, "transaction", flaky)
        ledger.index_sample(fx.root, path, orjson.loads(path.read_bytes()))
        monkeypatch.setattr(sqlite_db, "transaction", real)
        assert calls["n"] == 3
        count = ledger._db().execute("SELECT count(*) FROM samples").fetchone()[0]
    assert count == 1


def test_statuses_from_score_files_the_engine_wrote(tmp_path: Path) -> None:
    from noisefloor.pipeline.engine import band_tasks, run_tasks
    from noisefloor.scorers.registry import REGISTRY

    fx = Fixture(tmp_path / "store")
    case = fx.case(
        "capital",
        [
            _http("capital", 0, "Paris"),
            _http("capital", 1, "London"),
            _http("capital", 2, "Par", outcome=Outcome.FINISH, error="finish:length"),
        ],
        [],
    )
    built_scorer = REGISTRY.build("contains", {"needle": "Paris"})
    use = ScorerUse(
        label="0:contains",
        name="contains",
        params=built_scorer.spec.params,
        impl_hash=built_scorer.spec.impl_hash,
    )
    case = case.model_copy(update={"scorers": [use]})
    run = fx.run("20250103T000000-demo", [case])
    run_tasks(fx.store, band_tasks(fx.store, SUITE, run.cases, {}).tasks)
    with Ledger(ledger_path(fx.root), score_file) as ledger:
        ledger.index_run(fx.root, run)
        got = [(r["status"], r["reason"]) for r in ledger.ledger_rows()]
    assert got[0] == ("pass", "ok")
    assert got[1][0] == "fail" and got[1][1].startswith("0:contains: ")
    assert got[2] == ("fail", "error:finish: finish:length")


def _counting(read: list[str]) -> Any:
    """`score_file`, noting the case of every score file the ledger looks for."""

    def score_files(store: Store, suite: str, case: CaseRecord, use: ScorerUse) -> Path:
        read.append(case.case_id)
        return score_file(store, suite, case, use)

    return score_files


def _by_run(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        shown = {k: v for k, v in row.items() if k not in ("run_id", "started_at")}
        out.setdefault(row["run_id"], []).append(shown)
    return out


def test_a_run_resting_on_what_an_indexed_run_rests_on_takes_its_rows(tmp_path: Path) -> None:
    """A check that changed nothing indexes its run without reading a score file per case."""
    fx = Fixture(tmp_path / "store")
    case = fx.case("capital", [_http("capital", k, "Paris") for k in range(3)], ["0:contains"])
    fx.score(case, "0:contains", [(OK, ""), (FAIL, "missing:Paris"), (OK, "")])
    first = fx.run("20250101T000000-demo", [case])
    again = fx.run("20250102T000000-demo", [case])
    read: list[str] = []
    with Ledger(ledger_path(fx.root), _counting(read)) as ledger:
        ledger.index_run(fx.root, first)
        ledger.index_run(fx.root, again)
        rows = _by_run(ledger.ledger_rows())
    assert read == ["capital"]
    assert rows[again.run_id] == rows[first.run_id]
    assert [r["status"] for r in rows[again.run_id]] == ["pass", "fail", "pass"]


def test_a_run_unlike_the_indexed_ones_reads_its_score_files(tmp_path: Path) -> None:
    fx = Fixture(tmp_path / "store")
    case = fx.case("capital", [_http("capital", k, "Paris") for k in range(2)], ["0:contains"])
    unscored = fx.run("20250101T000000-demo", [case])
    scored = fx.run("20250102T000000-demo", [case])
    edited = case.model_copy(
        update={"scorers": [case.scorers[0].model_copy(update={"impl_hash": "other"})]}
    )
    other = fx.run("20250103T000000-demo", [edited])
    newer = fx.run("20250104T000000-demo", [case]).model_copy(update={"harness_version": "9.0"})
    fx.store.save_run(newer)
    read: list[str] = []
    with Ledger(ledger_path(fx.root), _counting(read)) as ledger:
        ledger.index_run(fx.root, unscored)
        fx.score(case, "0:contains", [(OK, ""), (FAIL, "missing:Paris")])
        ledger.index_run(fx.root, scored)  # the earlier run's rows found no score file
        ledger.index_run(fx.root, newer)  # another harness version may read them otherwise
        ledger.index_run(fx.root, other)  # another scorer's files are not these
        rows = _by_run(ledger.ledger_rows())
    assert read == ["capital"] * 4
    assert [r["reason"] for r in rows[unscored.run_id]] == ["unscored", "unscored"]
    assert [r["status"] for r in rows[scored.run_id]] == ["pass", "fail"]
    assert [r["reason"] for r in rows[other.run_id]] == ["unscored", "unscored"]
