"""End-to-end through the real CLI: `import` reads a store in the public noisefloor's layout (the
shape of its RAG capture), after which diff, rescore and check work on it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import orjson
import pytest

from tests.e2e.test_exit_paths import run_process
from tests.public_store import (
    ANSWERS,
    BASE_TIME,
    SUITE,
    write_capture,
    write_pointer,
    write_run,
    write_suite,
)

COMMAND = [sys.executable, "rag_fake.py", "{{case_id}}", "{{input}}"]
#: The regression planted in the capture's candidate run: one case's calls all fail, one
#: refusal starts answering off-domain questions.
PLANTED = {"broken": {"error-code-409": "error:exit"}, "flour": {"refuses-off-domain"}}


@pytest.fixture
def rag(tmp_path: Path) -> tuple[Path, Path]:
    """Our suite for the capture (with its fake RAG program) and a directory for public stores."""
    project = tmp_path / "project"
    project.mkdir()
    return write_suite(project), tmp_path / "public"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _verdicts(report: dict) -> dict[str, str]:
    return {c["case_id"]: c["verdict"] for c in report["cases"]}


def test_import_then_diff_reports_the_planted_regression(cli, rag):
    suite, public = rag
    base, cand = write_capture(public, COMMAND, **PLANTED)
    imported = cli("import", public, "--suite", suite)
    assert imported.code == 0, imported.err
    assert f"imported 2 run(s) of '{SUITE}' (30 samples, no target calls)" in imported.out
    assert f"baseline: {base}" in imported.out
    assert f"  {cand}  5 cases x 3 repeats, git ee4aa5d\n" in imported.out

    report = cli("diff", "--format", "json")
    assert report.code == 2, report.err
    data = report.json()
    assert (data["baseline"], data["candidate"]) == (base, cand)
    assert _verdicts(data) == {
        "error-code-409": "broken",
        "refuses-off-domain": "inconclusive",
        "offline-behaviour": "unchanged",
        "charging-bays": "unchanged",
        "refuses-parental-leave": "unchanged",
    }
    # the public tool's own rule calls the refusal that now answers a regression
    band = cli("diff", "--rule", "band", "--format", "json")
    assert band.code == 2
    assert _verdicts(band.json())["refuses-off-domain"] == "regressed"
    assert "unanimous baseline 3/3 -> 0/3" in " ".join(
        cli("diff", "--rule", "band", "-v").out.split()
    )


def test_imported_samples_keep_what_the_public_tool_stored(cli, rag, _isolated_root):
    suite, public = rag
    _, cand = write_capture(public, COMMAND, **PLANTED)
    assert cli("import", public, "--suite", suite).code == 0
    run = orjson.loads((_isolated_root / "runs" / SUITE / f"{cand}.json").read_bytes())
    source = public / "runs" / cand / "run.json"
    assert run["imported_from"]["git_sha"] == "ee4aa5d"
    assert run["imported_from"]["suite_hash"] == orjson.loads(source.read_bytes())["suite_hash"]
    assert run["imported_from"]["tool"] == "noisefloor 0.1.0 (public)"
    assert run["target"]["spec"] == {"command": COMMAND, "cwd": "."}
    cases = {c["case_id"]: c for c in run["cases"]}
    for case_id, outcome in (("charging-bays", "ok"), ("error-code-409", "error:exit")):
        theirs = orjson.loads((public / "runs" / cand / "cases" / case_id / "1.json").read_bytes())
        ours = orjson.loads(
            (_isolated_root / cases[case_id]["sample_dir"] / "r1.json").read_bytes()
        )
        assert ours["outcome"] == outcome
        assert ours["output"]["text"] == theirs["stdout"]
        assert ours["stderr"]["text"] == theirs["stderr"]
        assert ours["parsed"] == theirs["parsed"]
        assert ours["exit_code"] == theirs["exit_code"]
        assert ours["wall_s"] == theirs["duration_s"]
        assert ours["argv"] == theirs["argv"]
    shown = cli("show", cand, "--case", "error-code-409")
    assert "529 overloaded" in shown.out


#: The suite's input of one case, edited after the public store was written.
EDITED = {"charging-bays": "How many charging bays should we provision for three shifts?"}


def _run_record(root: Path, run_id: str) -> dict:
    return orjson.loads((root / "runs" / SUITE / f"{run_id}.json").read_bytes())


def test_an_edited_input_never_relabels_the_imported_answers(rag, _isolated_root):
    suite, public = rag
    base, cand = write_capture(public, COMMAND)
    edited = write_suite(suite.parent, inputs=EDITED)
    imported = run_process("import", public, "--suite", edited, root=_isolated_root)
    assert imported.returncode == 0, imported.stderr
    assert (
        f"run {base}: case 'charging-bays' was taken with another input than the suite's"
        in imported.stderr
    )
    for run_id in (base, cand):
        cases = {c["case_id"]: c for c in _run_record(_isolated_root, run_id)["cases"]}
        assert cases["charging-bays"]["input"] == ANSWERS["charging-bays"][0]
        assert cases["offline-behaviour"]["input"] == ANSWERS["offline-behaviour"][0]

    checked = run_process("check", edited, "--format", "json", root=_isolated_root)
    assert checked.returncode == 0, checked.stderr
    report = orjson.loads(checked.stdout)
    assert report["baseline"] == base
    changed = {c["case_id"] for c in report["cases"] if c.get("input_changed")}
    assert changed == {"charging-bays"}
    reason = next(c["reason"] for c in report["cases"] if c["case_id"] == "charging-bays")
    assert reason.startswith("input changed since the baseline")


def test_an_input_the_argv_never_held_is_confirmed_by_the_definition_hash(rag, _isolated_root):
    suite, public = rag
    command = [sys.executable, "rag_fake.py", "{{case_id}}"]
    write_capture(public, command)
    same = write_suite(suite.parent, command=command)
    assert run_process("import", public, "--suite", same, root=_isolated_root).returncode == 0

    shutil.rmtree(_isolated_root)
    edited = write_suite(suite.parent, command=command, inputs=EDITED)
    refused = run_process("import", public, "--suite", edited, root=_isolated_root)
    assert refused.returncode == 3
    assert "case 'charging-bays': cannot tell which input its calls were taken with" in (
        refused.stderr
    )
    assert "Traceback" not in refused.stderr
    assert not (_isolated_root / "runs").exists()


def test_an_imported_input_is_redacted_in_the_run_record(rag, _isolated_root):
    suite, public = rag
    base, _ = write_capture(public, COMMAND)
    redacting = write_suite(suite.parent, redact=["sourdough"])
    imported = run_process("import", public, "--suite", redacting, root=_isolated_root)
    assert imported.returncode == 0, imported.stderr
    cases = {c["case_id"]: c for c in _run_record(_isolated_root, base)["cases"]}
    assert cases["refuses-off-domain"]["input"] == "How much flour goes into a [REDACTED] loaf?"
    leaks = [p for p in _isolated_root.rglob("*") if p.is_file() and b"sourdough" in p.read_bytes()]
    assert leaks == []


def test_second_import_adds_nothing(cli, rag, _isolated_root):
    suite, public = rag
    base, cand = write_capture(public, COMMAND)
    assert cli("import", public, "--suite", suite).code == 0
    before = {
        p: p.stat().st_mtime_ns for p in (_isolated_root / "samples").rglob("*.json") if p.is_file()
    }
    again = cli("import", public, "--suite", suite)
    assert again.code == 0
    assert "imported 0 run(s)" in again.out
    assert f"already imported, left alone: {base}, {cand}" in again.out
    assert sorted(p.name for p in (_isolated_root / "runs" / SUITE).glob("*.json")) == [
        f"{base}.json",
        f"{cand}.json",
    ]
    after = {p: p.stat().st_mtime_ns for p in (_isolated_root / "samples").rglob("*.json")}
    assert after == before
    assert len(before) == 30


def test_rescore_applies_the_suite_to_imported_samples(cli, rag):
    suite, public = rag
    _, cand = write_capture(public, COMMAND, **PLANTED)
    assert cli("import", public, "--suite", suite).code == 0
    result = cli("rescore", suite, cand, "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["calls"] == 0
    assert data["run"]["rescored_from"] == cand
    sides = {c["case_id"]: c for c in data["cases"]}
    flour = sides["refuses-off-domain"]["scorers"][2]
    assert flour["key"] == "2:not_contains"
    assert (flour["side"]["k"], flour["side"]["n"]) == (0, 3)
    assert flour["side"]["details"] == ["found 'flour'"]
    assert sides["error-code-409"]["outcomes"] == {"error:exit": 3}


def test_check_compares_a_fresh_run_with_the_imported_baseline(cli, rag, monkeypatch, tmp_path):
    suite, public = rag
    base, _ = write_capture(public, COMMAND)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("RAG_FAKE_LOG", str(log))
    assert cli("import", public, "--suite", suite).code == 0
    assert not log.exists()  # importing never calls the target
    same = cli("check", suite, "--format", "json")
    assert same.code == 0, same.err
    data = same.json()
    assert data["adopted"] is False
    assert data["baseline"] == base
    assert data["calls"] == 15  # imported samples are compared against, never reused
    assert len(log.read_text().splitlines()) == 15
    assert data["counts"] == {"unchanged": 5}

    monkeypatch.setenv("RAG_FAKE_BREAK", "refuses-off-domain")
    broke = cli("check", suite, "--fresh", "--rule", "band", "--format", "json")
    assert broke.code == 1, broke.err
    assert broke.json()["baseline"] == base
    assert _verdicts(broke.json())["refuses-off-domain"] == "regressed"


def test_check_refuses_an_imported_baseline_of_another_command(cli, rag, tmp_path):
    suite, public = rag
    write_capture(public, ["rag", "ask", "--json", "{{input}}"])
    assert cli("import", public, "--suite", suite).code == 0
    result = cli("check", suite)
    assert result.code == 3
    assert "target spec changed" in result.err
    assert "command: ['rag', 'ask', '--json', '{{input}}']" in result.err


def test_import_writes_nothing_outside_the_store_root(cli, rag, tmp_path):
    suite, public = rag
    write_capture(public, COMMAND, **PLANTED)
    source_before = _tree(public)
    project_before = _tree(suite.parent)
    assert cli("import", public, "--suite", suite).code == 0
    assert _tree(public) == source_before
    assert _tree(suite.parent) == project_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project", "public", "store"]


def _truncated_run_json(public: Path) -> None:
    write_capture(public, COMMAND)
    path = next((public / "runs").iterdir()) / "run.json"
    path.write_bytes(path.read_bytes()[:200])


def _missing_repeat(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    (public / "runs" / base / "cases" / "charging-bays" / "2.json").unlink()


def _scores_short(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    path = public / "runs" / base / "scores.json"
    scores = orjson.loads(path.read_bytes())
    scores["charging-bays"].pop()
    path.write_bytes(orjson.dumps(scores))


def _no_scores(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    (public / "runs" / base / "scores.json").unlink()


def _random_files(public: Path) -> None:
    public.mkdir()
    (public / "notes.txt").write_text("hello")
    (public / "data.json").write_text('{"runs": []}')
    (public / "runs").write_text("not a directory")


def _other_layout(public: Path) -> None:
    (public / "runs" / "20260903T014508.400182Z-x").mkdir(parents=True)
    (public / "runs" / "20260903T014508.400182Z-x" / "run.json").write_text(
        '{"version": 1, "run_id": "r", "suite": "x"}'
    )


def _pointer_to_nowhere(public: Path) -> None:
    write_run(public, BASE_TIME, command=COMMAND)
    write_pointer(public, "20990101T000000.000000Z-gone-3dbc2f92")


def _stray_repeat(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    shutil.copy(
        public / "runs" / base / "cases" / "charging-bays" / "0.json",
        public / "runs" / base / "cases" / "charging-bays" / "0 copy.json",
    )


def _outcome_disagrees(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND, broken={"charging-bays": "error:parse"})
    path = public / "runs" / base / "run.json"
    data = orjson.loads(path.read_bytes())
    data["cases"][1]["outcome"] = "ok"
    path.write_bytes(orjson.dumps(data))


def _argv_edited(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    path = public / "runs" / base / "cases" / "charging-bays" / "1.json"
    call = orjson.loads(path.read_bytes())
    call["argv"] = ["rag", "ask"]
    path.write_bytes(orjson.dumps(call))


def _argv_disagrees(public: Path) -> None:
    base = write_run(public, BASE_TIME, command=COMMAND)
    path = public / "runs" / base / "cases" / "charging-bays" / "2.json"
    call = orjson.loads(path.read_bytes())
    call["argv"][-1] = "How many bays for three shifts?"
    path.write_bytes(orjson.dumps(call))


def _other_suite(public: Path) -> None:
    write_run(public, BASE_TIME, command=COMMAND, suite="quickstart")


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(lambda p: p.mkdir(), "no runs/ directory", id="empty"),
        pytest.param(lambda p: None, "is not a directory", id="missing"),
        pytest.param(_random_files, "no runs/ directory", id="random-files"),
        pytest.param(_truncated_run_json, "run.json: not valid JSON", id="truncated-run-json"),
        pytest.param(_other_layout, "not the public noisefloor's run record", id="foreign"),
        pytest.param(_missing_repeat, "says 3 repeat(s), found files 0.json, 1.json", id="gap"),
        pytest.param(_scores_short, "3 repeat(s) but 2 score list(s)", id="scores-short"),
        pytest.param(_no_scores, "missing scores.json", id="no-scores"),
        pytest.param(_pointer_to_nowhere, "which is not under runs/", id="pointer"),
        pytest.param(_stray_repeat, "stray file '0 copy.json'", id="stray-repeat"),
        pytest.param(_other_suite, "holds runs of quickstart", id="other-suite"),
        pytest.param(_argv_edited, "their argv do not fit the command template", id="argv"),
        pytest.param(
            _argv_disagrees, "their argv hold different inputs for the command", id="inputs"
        ),
        pytest.param(
            _outcome_disagrees, "'ok' in run.json but 0/3 of its repeats are ok", id="outcome"
        ),
    ],
)
def test_a_directory_that_is_no_such_store_exits_3(cli, rag, _isolated_root, make, expected):
    suite, public = rag
    make(public)
    result = cli("import", public, "--suite", suite)
    assert result.code == 3
    assert expected in result.err
    assert result.err.count("\n") <= 8
    assert "Traceback" not in result.err
    assert not (_isolated_root / "runs").exists()


def test_importing_the_store_into_itself_exits_3(cli, rag, _isolated_root):
    suite, _ = rag
    result = cli("import", _isolated_root, "--suite", suite)
    assert result.code == 3
    assert "is this store's own root" in result.err
