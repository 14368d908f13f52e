"""A store file found broken, of any kind: the next command recovers (what is derived is rebuilt,
a corrupt sample taken again, a database made again) or exits 3 naming the file and its fix;
`store verify` reports every such file and `--repair` fixes what can be rebuilt or retaken."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.fault_trials.corruption import run_cli
from tests.builders import FAKE, answer_case, fake_suite


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """A project and a store with a baseline and one compared run, made once: each test
    damages a copy."""
    where = tmp_path_factory.mktemp("base")
    project = where / "project"
    project.mkdir()
    shutil.copy(FAKE, project / "fake_target.py")
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")])
    # --adopt: a module's fixture runs before each test clears `CI`, which forbids adopting
    assert run_cli("check", suite, "--adopt", root=where / "store").code == 0
    first = run_cli("check", suite, "--format", "json", root=where / "store")
    assert first.code == 0, first.err
    return where, suite, orjson.loads(first.out)


@pytest.fixture
def checked(
    tmp_path: Path, base: tuple[Path, Path, dict[str, Any]]
) -> tuple[Path, Path, dict[str, Any]]:
    """A copy of the base project and store (the store at the tests' root); the suite, the
    root and the compared run's report."""
    where, suite, first = base
    shutil.copytree(where / "project", tmp_path / "project", dirs_exist_ok=True)
    shutil.copytree(where / "store", tmp_path / "store")
    return tmp_path / "project" / suite.name, tmp_path / "store", first


def loop(path: Path) -> None:
    """Make `path` unreadable as root can't by chmod: a symlink to itself."""
    path.unlink()
    os.symlink(path.name, path)


def directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def a_sample(root: Path) -> Path:
    return sorted(root.glob("samples/**/r2.json"))[0]


def test_a_baseline_pointer_made_unreadable_is_named_never_adopted_again(cli, checked) -> None:
    suite, root, first = checked
    pointer = root / "baselines" / "fake.json"
    loop(pointer)
    done = cli("check", suite)
    assert done.code == 3, done.out
    assert "baselines/fake.json" in done.err and "noisefloor baseline set" in done.err
    assert "adopted" not in done.out + done.err
    assert os.path.islink(pointer)  # left for its owner to fix


@pytest.mark.parametrize("how", [loop, directory])
def test_a_sample_that_is_no_file_is_taken_again(cli, checked, how) -> None:
    suite, root, first = checked
    how(a_sample(root))
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    assert again.json()["calls"] == 1
    assert orjson.loads(a_sample(root).read_bytes())["outcome"] == "ok"
    assert cli("ledger", "rebuild").code == 0


def test_a_garbage_sample_to_be_scored_counts_as_missing(cli, checked) -> None:
    suite, root, first = checked
    sample = a_sample(root)
    sample.write_bytes(b"\x00\xff not a sample")
    for kind in ("scores", "bands", "verdicts", "reports"):
        shutil.rmtree(root / kind)  # what was derived from it goes, so the check reads it again
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    assert "corrupt sample" in again.err and sample.name in again.err
    report = again.json()
    assert report["calls"] == 1 and report["counts"] == first["counts"]
    assert orjson.loads(sample.read_bytes())["outcome"] == "ok"


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("doit.sqlite", "garbage"),
        ("doit.sqlite", "loop"),
        ("ledger.sqlite", "directory"),
        ("ledger.sqlite.lock", "loop"),
        ("locks/fake.lock", "directory"),
    ],
)
def test_a_damaged_database_or_lock_is_made_again(cli, checked, name, how) -> None:
    suite, root, first = checked
    path = root / name
    if how == "garbage":
        path.write_bytes(b"\x00garbage" * 100)
    else:
        {"directory": directory, "loop": loop}[how](path)
    for report in (root / "reports").rglob("*"):
        if report.is_file():
            report.unlink()  # so that the check runs the pipeline, and doit opens its db
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    assert again.json()["counts"] == first["counts"]
    assert cli("history", "alpha").code == 0


def test_an_emptied_ledger_is_filled_again(cli, checked) -> None:
    suite, root, _ = checked
    (root / "ledger.sqlite").write_bytes(b"")
    assert cli("store", "verify").code == 3
    assert cli("check", suite).code == 0
    history = cli("history", "alpha", "--format", "json")
    # both earlier runs are back, beside the new one
    assert len(history.json()["runs"]) == 3, history.out


@pytest.mark.parametrize("content", [b'{"abc": "x"}', b"\xff"])
def test_a_corrupt_epochs_file_is_named(cli, checked, content) -> None:
    suite, root, _ = checked
    (root / "epochs").mkdir(exist_ok=True)
    (root / "epochs" / "fake.json").write_bytes(content)
    done = cli("check", suite)
    assert done.code == 3
    assert "epochs/fake.json" in done.err and "hint: delete it" in done.err


def test_a_label_made_unreadable_is_named(cli, checked) -> None:
    suite, root, _ = checked
    assert cli("record", suite, "--label", "before").code == 0
    loop(root / "labels" / "fake" / "before.json")
    done = cli("compare", "--baseline", "before", "--current", "before")
    assert done.code == 3
    assert "labels/fake/before.json" in done.err and "--replace" in done.err


def test_store_verify_reports_every_kind_and_repairs_what_is_rebuilt(cli, checked) -> None:
    suite, root, first = checked
    assert cli("store", "verify").code == 0
    sample = a_sample(root)
    sample.write_bytes(sample.read_bytes()[:40])
    score = sorted((root / "scores").rglob("*.json"))[0]
    directory(score)
    run = sorted((root / "runs").rglob("*.json"))[-1]
    run.write_bytes(b"")
    stale = root / "bands" / "fake" / ".x.json.999999999.abc.tmp"
    stale.write_bytes(b"{")
    found = cli("store", "verify", "--format", "json")
    assert found.code == 3
    problems = {p["rel"]: p for p in found.json()["problems"]}
    rel = lambda path: path.relative_to(root).as_posix()  # noqa: E731
    assert problems.keys() == {rel(sample), rel(score), rel(run), rel(stale)}
    assert problems[rel(sample)]["kind"] == "sample"
    assert "takes the sample again" in problems[rel(sample)]["fix"]
    assert "baseline set" in problems[rel(run)]["fix"]
    repaired = cli("store", "verify", "--repair")
    assert repaired.code == 3  # the run record is its owner's to fix
    assert "3 repaired, 1 left" in repaired.out
    # the ledger indexes the runs too: it waits for the run record to be fixed
    assert f"ledger not rebuilt: corrupt file {run}" in repaired.out
    assert not sample.exists() and not score.exists() and not stale.exists()
    run.unlink()
    assert cli("store", "verify").code == 0
    assert cli("ledger", "rebuild").code == 0
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    assert again.json()["counts"] == first["counts"]
