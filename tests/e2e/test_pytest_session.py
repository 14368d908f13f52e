"""What a pytest session promises, in pytest sessions run in process (through `pytester`) in a git
repository: a test that never passes fails, min_pass_rate= fails a test confidently below it, a
failure reads like pytest's own and says how to take fresh repeats, bad input costs one repeat,
an exception is a target error, CI without a baseline fails, and a session leaves git clean.

The tests under test draw their luck from `random.Random(f"{SALT}-{repeat}")`: every outcome is
fixed, so nothing here is flaky.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from tests.builders import commit_all, git
from tests.pytest_sessions import Session, session_runner

pytest_plugins = ["pytester"]

#: Shallow, so that a first session's adoption is cheap: 40 repeats per test.
INI = "[pytest]\nnoisefloor_baseline_repeats = 40\n"

PROMISES = """
import os
import random

import pytest

FAILS = {fails}


def luck(repeat):
    return random.Random(f"{{os.environ['SALT']}}-{{repeat}}").random()


@pytest.mark.noisefloor
def test_never():
    assert 1 + 1 == 3


@pytest.mark.noisefloor
def test_always_raises():
    raise RuntimeError("no model to ask")


@pytest.mark.noisefloor(min_pass_rate=0.9)
def test_low(noisefloor_repeat):
    assert luck(noisefloor_repeat) < 0.6


@pytest.mark.noisefloor(min_pass_rate=0.9)
def test_high(noisefloor_repeat):
    assert luck(noisefloor_repeat) < 0.95


@pytest.mark.noisefloor
def test_fails_sometimes(noisefloor_repeat):
    if luck(noisefloor_repeat) < FAILS:
        pytest.fail("the answer drifted")


@pytest.mark.noisefloor
def test_raises_sometimes(noisefloor_repeat):
    if luck(noisefloor_repeat) < 0.3:
        raise ValueError("a row it could not parse")


@pytest.mark.noisefloor(scores={{"latency_s": "lower_is_better"}})
def test_latency(noisefloor_repeat, noisefloor_score):
    noisefloor_score("latency_s", 1.2 + luck(noisefloor_repeat) / 10 + (FAILS > 0.5) * 0.7)
"""


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Session:
    return session_runner(pytester, monkeypatch, tmp_path, INI, in_process=True)


def _outcomes(store: Path, run: str) -> list[tuple[str, bool]]:
    """Each stored repeat of a test's run: its outcome and whether its assertions held."""
    (record,) = store.rglob(f"runs/*/{run}.json")
    case = orjson.loads(record.read_bytes())["cases"][0]
    out = []
    for repeat in range(case["start"], case["repeats"]):
        sample = orjson.loads((store / case["sample_dir"] / f"r{repeat}.json").read_bytes())
        out.append((sample["outcome"], orjson.loads(sample["output"]["text"])["passed"]))
    return out


def test_a_session_keeps_pytests_meaning_of_a_failing_test(
    pytester: pytest.Pytester, session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    pytester.makepyfile(test_promises=PROMISES.format(fails=0.1))
    commit_all(pytester.path, "tests")
    result, tests = session("--noisefloor", salt="adopt")
    assert result.ret == 1
    # seven marked tests and two bars: nine decisions share the session's 5%
    assert tests["test_high"]["noisefloor_family"] == "7"
    assert tests["test_high"]["noisefloor_alpha"] == "0.00555556"
    assert "(2 with min_pass_rate=, which take a share each)" in result.stdout.str()

    # a test that never passes is a failing test, not a baseline
    never = tests["test_never"]["failed"]
    assert never.startswith("never passes: 0 of 40 repeats passed, so nothing was adopted")
    assert "mark it xfail" in never and "assert (1 + 1) == 3" in never
    assert not (store / "baselines" / "test_promises.py.test_never.json").exists()
    # and a first session whose test raises on every repeat is red, with nothing adopted
    raises = tests["test_always_raises"]["failed"]
    assert raises.startswith("broken: every repeat ended in an error (40 of 40), so nothing")
    assert "RuntimeError: no model to ask" in raises and "--set-baseline" not in raises
    assert not (store / "baselines" / "test_promises.py.test_always_raises.json").exists()

    # a bar: 0.6 is confidently below 0.9 at the adoption's 40 repeats; 0.95 is not
    low = tests["test_low"]["failed"]
    assert re.match(r"below min_pass_rate 90%: pass rate \d+% \(\d+/40; at most \d+%", low)
    assert tests["test_low"]["noisefloor_verdict"] == "adopted"  # its rate is still a baseline
    assert tests["test_high"]["failed"] is None

    # an assertion and pytest.fail are failed repeats; any other exception, a target error
    asserted = _outcomes(store, tests["test_low"]["noisefloor_run"])
    assert ("ok", False) in asserted and all(outcome == "ok" for outcome, _ in asserted)
    fails = _outcomes(store, tests["test_fails_sometimes"]["noisefloor_run"])
    assert ("ok", False) in fails and all(outcome == "ok" for outcome, _ in fails)
    raised = _outcomes(store, tests["test_raises_sometimes"]["noisefloor_run"])
    assert ("error:exit", False) in raised and ("ok", False) not in raised

    # a change that makes pytest.fail frequent: regressed on failed repeats, not broken
    pytester.makepyfile(test_promises=PROMISES.format(fails=0.8))
    commit_all(pytester.path, "worse")
    monkeypatch.setenv("COLUMNS", "80")
    result, tests = session("--noisefloor", "-rf", salt="worse")
    # the short summary's line, cut at 80 columns, still says what happened
    (short,) = [
        line for line in result.outlines if line.startswith("FAILED") and "sometimes" in line
    ]
    assert short.startswith("FAILED test_promises.py::test_fails_sometimes - regressed: pass rate")
    assert len(short) <= 80
    assert tests["test_fails_sometimes"]["noisefloor_verdict"] == "regressed"
    failed = tests["test_fails_sometimes"]["failed"]
    first = failed.splitlines()[0]
    assert first.startswith("regressed: pass rate ") and "before, " in first and "now; p=" in first
    assert not re.search(r"\d+:json_path|\[flaky|\[quarantine|exit", first)
    assert "\n    def test_fails_sometimes(noisefloor_repeat):\n" in failed
    assert "\nE           Failed: the answer drifted\n" in failed
    assert re.search(r"\nlooks: at 5(, \d+)*( and \d+)? repeats, stopped at \d+ \(decided", failed)
    assert "\nversion: 1 file changed since the baseline (modified test_promises.py)" in failed
    assert "--noisefloor-fresh" not in failed  # every repeat was taken this session
    assert tests["test_raises_sometimes"]["failed"] is None
    # a number reads as the test records it, with its unit
    latency = tests["test_latency"]["failed"].splitlines()[0]
    assert re.match(
        r"regressed: latency_s: mean 1\.2\d s -> 1\.9\d s \(40 before, 5 now; p=", latency
    )
    # the bar is never met on the check's 5 repeats: the test takes 20, and fails on them
    low = tests["test_low"]
    assert re.match(r"below min_pass_rate 90%: pass rate \d+% \(\d+/20; at most", low["failed"])
    assert int(low["noisefloor_calls"]) == 20
    assert tests["test_high"]["failed"] is None

    # the same version again: the verdict rests on the stored repeats, and says how to retake them
    result, tests = session("--noisefloor", "-k", "fails_sometimes", salt="again")
    assert tests["test_fails_sometimes"]["noisefloor_calls"] == "0"
    assert (
        tests["test_fails_sometimes"]["failed"]
        .rstrip()
        .endswith(
            "were taken by an earlier session of this version; "
            "`pytest --noisefloor --noisefloor-fresh` takes new ones"
        )
    )


MISUSED = """
import pytest

CALLS = []


@pytest.mark.noisefloor(scores={"latency_s": "lower_is_better"})
def test_undeclared(noisefloor_score):
    with open("repeats.log", "a") as log:
        log.write("ran\\n")
    try:
        noisefloor_score("latency", 1.0)
    except Exception:
        pass  # swallowed: the misuse is caught all the same


@pytest.mark.noisefloor("five")
def test_positional():
    pass


@pytest.mark.noisefloor(min_pass_rate="high")
def test_wrong_type():
    pass


def test_unmarked(noisefloor_score):
    noisefloor_score("latency_s", 1.0)
"""


def test_bad_input_costs_one_repeat_and_adopts_nothing(
    pytester: pytest.Pytester, session: Session, tmp_path: Path
) -> None:
    pytester.makepyfile(test_misused=MISUSED)
    commit_all(pytester.path, "tests")
    result, tests = session("--noisefloor")
    assert result.ret == 1
    said = tests["test_undeclared"]["failed"]
    assert said.startswith("noisefloor: usage error at repeat 0: noisefloor_score('latency', ")
    assert "did you mean 'latency_s'?" in said and "--set-baseline" not in said
    # one repeat, none stored, nothing adopted: the next session costs one repeat again
    assert (pytester.path / "repeats.log").read_text() == "ran\n"
    assert not list((tmp_path / "store").rglob("r*.json"))
    assert not list((tmp_path / "store").rglob("baselines/*.json"))
    assert "takes keyword arguments only, got 'five'" in tests["test_positional"]["failed"]
    wrong = tests["test_wrong_type"]["failed"]
    assert "min_pass_rate= must be a pass rate between 0 and 1, got 'high'" in wrong
    assert "in a test without @pytest.mark.noisefloor" in tests["test_unmarked"]["failed"]


ONE = """
import os
import random

import pytest


@pytest.mark.noisefloor
def test_{name}(noisefloor_repeat):
    assert random.Random(f"{{os.environ['SALT']}}-{{noisefloor_repeat}}").random() < 0.8
"""


def _status(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()


def test_fresh_repeats_leave_git_status_clean(
    pytester: pytest.Pytester, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the store in the repository, as the docs tell a project to keep it
    monkeypatch.setenv("NOISEFLOOR_ROOT", str(pytester.path / ".noisefloor"))
    pytester.makepyfile(test_one=ONE.format(name="rate"))
    commit_all(pytester.path, "tests")
    session("--noisefloor", salt="adopt")
    commit_all(pytester.path, "the baseline")  # what the store's .gitignore leaves to commit
    (pytester.path / "NOTES.md").write_text("a note\n")
    commit_all(pytester.path, "a note")
    result, tests = session("--noisefloor", "--noisefloor-fresh", salt="fresh")
    assert tests["test_rate"]["noisefloor_verdict"] in ("unchanged", "inconclusive")
    assert int(tests["test_rate"]["noisefloor_calls"]) > 0
    assert (pytester.path / ".noisefloor" / "epochs" / "test_one.py.test_rate.json").exists()
    assert _status(pytester.path) == []


def test_ci_compares_with_a_remote_and_refuses_to_adopt_without_consent(
    pytester: pytest.Pytester,
    session: Session,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    monkeypatch.setenv("NOISEFLOOR_REMOTE", remote.as_uri())
    pytester.makepyfile(test_one=ONE.format(name="rate"))
    commit_all(pytester.path, "tests")
    result, tests = session("--noisefloor", salt="adopt")
    last = result.stdout.str().rstrip().splitlines()[-2]
    assert last.startswith("samples: 40 repeats taken this session, stored under ")
    assert last.endswith(f" and pushed to {remote.as_uri()}")
    # a CI runner with no store of its own: the remote's baseline serves the test that has one;
    # a new test fails, naming the option that would adopt it
    pytester.makepyfile(test_two=ONE.format(name="new"))
    commit_all(pytester.path, "a new test")
    shutil.rmtree(tmp_path / "store")
    monkeypatch.setenv("CI", "true")
    result, tests = session("--noisefloor", salt="ci")
    assert result.ret == 1
    assert tests["test_rate"]["noisefloor_verdict"] in ("unchanged", "inconclusive")
    said = tests["test_new"]["failed"]
    assert said.startswith("noisefloor: no baseline for this test, and CI is set")
    assert f"none in {remote.as_uri()} on branch " in said
    assert "pass --noisefloor-adopt to adopt one here" in said
    result, tests = session("--noisefloor", "--noisefloor-adopt", "-k", "new", salt="ci")
    assert result.ret == 0 and tests["test_new"]["noisefloor_verdict"] == "adopted"
