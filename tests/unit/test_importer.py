"""The mapping of the public noisefloor's records onto ours: samples, target identity, epochs,
baseline pointers and what an import warns about."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from noisefloor.operations.importer import import_store, raw_sample
from noisefloor.operations.importer import target_record as imported_target
from noisefloor.store.public import PublicInvocation, PublicRunFile
from noisefloor.store.store import Store
from noisefloor.suite.load import load_suite
from noisefloor.suite.targets import build_target
from tests.public_store import (
    BASE_TIME,
    CAND_TIME,
    SUITE,
    invocation,
    write_pointer,
    write_run,
    write_suite,
)

COMMAND = [sys.executable, "rag_fake.py", "{{case_id}}", "{{input}}"]


def _call(**changes: object) -> PublicInvocation:
    record = invocation("charging-bays", 2, ["rag", "ask", "q"])
    record.update(changes)
    return PublicInvocation.model_validate(record)


@pytest.mark.parametrize(
    ("changes", "outcome", "error"),
    [
        pytest.param({}, "ok", None, id="ok"),
        pytest.param(
            {"outcome": "error:exit", "exit_code": 2, "parsed": None},
            "error:exit",
            "exited with status 2",
            id="exit",
        ),
        pytest.param(
            {"outcome": "error:exit", "exit_code": None, "stderr": "No such file: 'rag'\n"},
            "error:spawn",
            "No such file: 'rag'",
            id="never-started",
        ),
        pytest.param(
            {"outcome": "error:timeout", "exit_code": None},
            "error:timeout",
            "timed out (the public tool's timeout_s)",
            id="timeout",
        ),
        pytest.param(
            {"outcome": "error:parse", "parsed": None},
            "error:parse",
            "stdout is not JSON",
            id="parse",
        ),
    ],
)
def test_outcomes_map_onto_ours(changes, outcome, error):
    call = _call(**changes)
    sample = raw_sample(call, jobs=1)
    assert (sample.outcome.value, sample.error) == (outcome, error)
    assert sample.exit_code == call.exit_code
    assert sample.output.text == call.stdout
    assert sample.stderr is not None and sample.stderr.text == call.stderr
    assert (sample.case_id, sample.repeat, sample.argv) == ("charging-bays", 2, ["rag", "ask", "q"])
    assert sample.wall_s == call.duration_s
    assert sample.parsed == call.parsed


@pytest.mark.parametrize(("jobs", "concurrency"), [(0, 1), (1, 1), (4, 4)])
def test_concurrency_comes_from_the_runs_jobs(jobs, concurrency):
    assert raw_sample(_call(), jobs=jobs).concurrency == concurrency


def _run_file(**changes: object) -> PublicRunFile:
    record = {
        "run_id": "r",
        "suite_name": SUITE,
        "suite_hash": "3dbc2f926a2ebd29",
        "target_command": COMMAND,
        "target_cwd": ".",
        "git_sha": "ee4aa5d",
        "repeats": 3,
        "jobs": 1,
        "started_at": BASE_TIME.isoformat(),
        "finished_at": CAND_TIME.isoformat(),
        "harness_version": "0.1.0",
        "cases": [],
        **changes,
    }
    return PublicRunFile.model_validate(record)


def test_imported_target_has_the_suites_spec_under_a_key_of_its_own(tmp_path):
    suite = load_suite(write_suite(tmp_path))
    ours = build_target(suite).record
    theirs = imported_target(_run_file())
    assert theirs.spec == ours.spec
    assert theirs.key != ours.key
    assert imported_target(_run_file(git_sha="0000000")).key != theirs.key
    assert imported_target(_run_file(env={"A": "1"})).key != theirs.key
    assert imported_target(_run_file(target_cwd="./sub/../x/")).spec["cwd"] == "x"


def _import(tmp_path: Path, root: Path) -> tuple[Store, object]:
    suite = load_suite(write_suite(tmp_path))
    store = Store(root)
    return store, import_store(store, suite, tmp_path / "public")


def test_runs_of_one_target_version_take_one_epoch_each(tmp_path, _isolated_root):
    base = write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    cand = write_run(tmp_path / "public", CAND_TIME, command=COMMAND)
    store, result = _import(tmp_path, _isolated_root)
    assert [r.run_id for r in result.imported] == [base, cand]
    first, second = store.load_run(SUITE, base), store.load_run(SUITE, cand)
    assert first.target.key == second.target.key
    assert (first.epoch, second.epoch) == (0, 1)
    assert first.cases[0].sample_dir != second.cases[0].sample_dir
    assert first.started_at == "2026-09-03T01:45:08.400182Z"
    assert result.baseline is None
    assert store.baseline(SUITE) is None


def test_a_later_run_of_the_public_store_is_added_on_the_next_import(tmp_path, _isolated_root):
    base = write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    _import(tmp_path, _isolated_root)
    cand = write_run(tmp_path / "public", CAND_TIME, command=COMMAND)
    store, result = _import(tmp_path, _isolated_root)
    assert ([r.run_id for r in result.imported], result.already) == ([cand], [base])
    assert store.load_run(SUITE, cand).epoch == 1


def test_an_existing_baseline_is_kept_with_a_warning(tmp_path, _isolated_root):
    base = write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    cand = write_run(tmp_path / "public", CAND_TIME, command=COMMAND)
    write_pointer(tmp_path / "public", base)
    store = Store(_isolated_root)
    store.ensure()
    store.set_baseline(SUITE, cand)
    store, result = _import(tmp_path, _isolated_root)
    assert store.baseline(SUITE).run_id == cand
    assert result.baseline == cand
    assert any(f"`noisefloor baseline set {base}` moves it" in w for w in result.warnings)


def test_the_public_baseline_keeps_its_time(tmp_path, _isolated_root):
    base = write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    write_pointer(tmp_path / "public", base)
    store, result = _import(tmp_path, _isolated_root)
    pointer = store.baseline(SUITE)
    assert (pointer.run_id, pointer.set_at) == (base, "2026-09-03T01:48:17.403450Z")
    assert (_isolated_root / "runs" / SUITE / ".gitignore").read_text() == f"!/{base}.json\n"


def test_cases_the_suite_lacks_are_left_out_with_a_warning(tmp_path, _isolated_root):
    write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    suite = load_suite(write_suite(tmp_path, cases=["charging-bays", "error-code-409"]))
    store = Store(_isolated_root)
    result = import_store(store, suite, tmp_path / "public")
    run = store.load_run(SUITE, result.imported[0].run_id)
    assert [c.case_id for c in run.cases] == ["charging-bays", "error-code-409"]
    assert result.samples == 6
    assert sum("'offline-behaviour' is not in the suite" in w for w in result.warnings) == 1
    assert set(run.imported_from.definition_hashes) >= {"offline-behaviour", "charging-bays"}


def test_a_case_redefined_between_public_runs_is_reported(tmp_path, _isolated_root):
    public = tmp_path / "public"
    write_run(public, BASE_TIME, command=COMMAND)
    cand = write_run(public, CAND_TIME, command=COMMAND)
    path = public / "runs" / cand / "run.json"
    data = orjson.loads(path.read_bytes())
    data["cases"][1]["definition_hash"] = "0123456789abcdef"
    path.write_bytes(orjson.dumps(data))
    _, result = _import(tmp_path, _isolated_root)
    redefined = [w for w in result.warnings if "redefined" in w]
    assert len(redefined) == 1
    assert "'charging-bays'" in redefined[0] and "0123456789abcdef" in redefined[0]


def test_the_suites_redaction_applies_to_imported_samples(tmp_path, _isolated_root):
    write_run(tmp_path / "public", BASE_TIME, command=COMMAND)
    path = write_suite(tmp_path)
    path.write_text(path.read_text() + "redact: ['two robots']\n")
    store = Store(_isolated_root)
    result = import_store(store, load_suite(path), tmp_path / "public")
    run = store.load_run(SUITE, result.imported[0].run_id)
    case = next(c for c in run.cases if c.case_id == "charging-bays")
    sample = orjson.loads((_isolated_root / case.sample_dir / "r0.json").read_bytes())
    assert "two robots" not in orjson.dumps(sample).decode()
    assert "[REDACTED]" in sample["output"]["text"]


def test_an_imported_runs_environment_keeps_no_credential_however_short(tmp_path, _isolated_root):
    env = {"RAG_TOKEN": "abc", "RAG_MODE": "fast two robots"}
    write_run(tmp_path / "public", BASE_TIME, command=COMMAND, env=env)
    path = write_suite(tmp_path)
    path.write_text(path.read_text() + "redact: ['two robots']\n")
    result = import_store(Store(_isolated_root), load_suite(path), tmp_path / "public")
    imported = result.imported[0].imported_from
    assert imported is not None
    assert imported.env == {"RAG_MODE": "fast [REDACTED]", "RAG_TOKEN": "[REDACTED]"}
