"""The pytest plugin in real pytest sessions (subprocesses, through `pytester`) in a git repository:
a flaky test stays green across behaviour-neutral commits and fails when its pass rate drops, a
crash is broken, an unchanged version costs nothing, and a plain run writes nothing.

The tests under test draw their luck from `random.Random(f"{SALT}-{repeat}")`: each session's
SALT stands for the noise of a new session, and every outcome is fixed, so nothing here is flaky.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.pytest_plugin.kind import PytestKind
from tests.builders import commit_all
from tests.pytest_sessions import QUIET, Session, session_runner

pytest_plugins = ["pytester"]

#: Shallow, so that a first session's adoption is cheap: 20 repeats per test.
INI = "[pytest]\nnoisefloor_baseline_repeats = 20\n"

TESTS = """
import os
import random

import pytest

RATE = {rate}
SAME = {same}
CRASH = {crash}
SIMILARITY = {similarity}


def luck(repeat):
    return random.Random(f"{{os.environ['SALT']}}-{{repeat}}").random()


@pytest.mark.noisefloor(repeats=5)
def test_rate(noisefloor_repeat):
    assert luck(noisefloor_repeat) < RATE


@pytest.mark.noisefloor
def test_same():
    assert SAME


@pytest.mark.noisefloor
def test_crash():
    if CRASH:
        raise RuntimeError("the parser gave up")


@pytest.mark.noisefloor(scores={{"similarity": "higher_is_better"}})
def test_similarity(noisefloor_repeat, noisefloor_score):
    noisefloor_score("similarity", SIMILARITY + luck(noisefloor_repeat) / 20)


@pytest.mark.noisefloor
@pytest.mark.skipif(True, reason="not on this platform")
def test_skipped():
    pass


def logged(name, line):
    with open(os.path.join(os.environ["LOGS"], name), "a") as log:
        log.write(line + "\\n")


@pytest.fixture(scope="module")
def per_module():
    logged("module.log", "setup")


@pytest.fixture
def fresh(per_module):
    logged("function.log", "setup")
    yield []
    logged("function.log", "teardown")


@pytest.mark.noisefloor
def test_fixtures(fresh):
    fresh.append(1)
    assert fresh == [1]


def test_unmarked():
    logged("unmarked.log", "ran")
"""

GOOD = {"rate": 0.8, "same": True, "crash": False, "similarity": 0.9}
BAD = {"rate": 0.3, "same": False, "crash": True, "similarity": 0.5}


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Session:
    """Run one pytest session in the repository with `salt` (in a subprocess)."""
    (tmp_path / "logs").mkdir()
    monkeypatch.setenv("LOGS", str(tmp_path / "logs"))
    return session_runner(pytester, monkeypatch, tmp_path, INI)


def _write(pytester: pytest.Pytester, values: dict[str, Any]) -> None:
    pytester.makepyfile(test_cases=TESTS.format(**values))


def _neutral_commit(repo: Path, n: int) -> None:
    (repo / "NOTES.md").write_text(f"release notes, take {n}\n")
    commit_all(repo, f"notes {n}")


def test_a_flaky_test_stays_green_until_its_pass_rate_drops(
    pytester: pytest.Pytester, session: Session, cli: Callable[..., Any], tmp_path: Path
) -> None:
    _write(pytester, GOOD)
    commit_all(pytester.path, "tests")
    result, tests = session("--noisefloor")
    assert result.ret == 0
    assert {n: t["noisefloor_verdict"] for n, t in tests.items() if "noisefloor_verdict" in t} == {
        "test_rate": "adopted",
        "test_same": "adopted",
        "test_crash": "adopted",
        "test_similarity": "adopted",
        "test_fixtures": "adopted",
    }
    assert tests["test_rate"]["noisefloor_calls"] == "20"  # the design's depth, once
    # the five marked tests its marks do not skip share the session's false-alarm rate, as a
    # suite's cases share a check's
    assert {t.get("noisefloor_family") for t in tests.values()} == {"5", None}
    assert {t.get("noisefloor_alpha") for t in tests.values()} == {"0.01", None}
    out = result.stdout.str()
    assert "family: 5 marked tests of this session; false-alarm rate 5% for the session" in out
    assert out.rstrip().splitlines()[-2].startswith("samples: 100 repeats taken this session")
    # each repeat set up and tore down its own function-scoped fixtures; the module's once
    logs = tmp_path / "logs"
    assert (logs / "function.log").read_text().split() == ["setup", "teardown"] * 20
    assert (logs / "module.log").read_text().split() == ["setup"]
    assert tests["test_skipped"]["skipped"]
    # the same version again: every verdict from the stored samples, not one repeat taken
    result, tests = session("--noisefloor", salt="s1")
    assert result.ret == 0
    assert {t.get("noisefloor_calls") for t in tests.values()} == {"0", None}
    assert "unchanged  test_cases.py::test_rate  20 repeats (0 taken now)" in result.stdout.str()

    reds = 0
    for n in range(3):
        _neutral_commit(pytester.path, n)
        result, tests = session("--noisefloor", "-k", "rate or unmarked", salt=f"neutral-{n}")
        reds += result.ret != 0
        assert tests["test_rate"]["noisefloor_verdict"] in ("unchanged", "inconclusive")
        assert int(tests["test_rate"]["noisefloor_calls"]) > 0
        # a selection is a family of what it selected
        assert tests["test_rate"]["noisefloor_family"] == "1"
    assert reds <= 1

    _write(pytester, BAD)
    commit_all(pytester.path, "a change that breaks things")
    result, tests = session("--noisefloor", salt="bad")
    assert result.ret == 1
    verdicts = {n: t.get("noisefloor_verdict") for n, t in tests.items()}
    assert verdicts == {
        "test_rate": "regressed",
        "test_same": "regressed",
        "test_crash": "broken",
        "test_similarity": "regressed",
        "test_fixtures": "unchanged",
        "test_skipped": None,
        "test_unmarked": None,
    }
    rate = tests["test_rate"]["failed"]
    first = rate.splitlines()[0]
    assert first.startswith("regressed: pass rate ") and " before, " in first and "now; p=" in first
    assert "\nE       assert " in rate and "repeat " in rate
    assert (
        "version: 2 files changed since the baseline (modified test_cases.py, added NOTES.md)"
        in rate
    )
    assert "RuntimeError: the parser gave up" in tests["test_crash"]["failed"]
    assert tests["test_similarity"]["failed"].startswith("regressed: similarity: mean ")
    # no concurrent control, and no checkout of the baseline's commit tried for one: a test's
    # other version cannot be imported beside it
    (stored,) = (tmp_path / "store").rglob(f"runs/*/{tests['test_rate']['noisefloor_run']}.json")
    why = orjson.loads(stored.read_bytes())["sequential"]["uncontrolled"]
    assert why == {"test_cases.py.test_rate": PytestKind.cannot_run_beside}
    assert "regressed  test_cases.py::test_rate" in result.stdout.str()
    # unmarked tests ran once per session
    assert (logs / "unmarked.log").read_text().count("ran") == 6
    # and the runs are the command line's own
    case = tests["test_rate"]["noisefloor_suite"]
    explained = cli("explain", case)
    assert explained.code == 0 and "assert " in explained.out
    assert cli("history", case).code == 0
    page = tmp_path / "report.html"
    assert cli("report", tests["test_rate"]["noisefloor_run"], "--html", page).code == 1
    assert "test_cases.py" in page.read_text()


def test_without_the_flag_nothing_is_written_and_the_test_runs_once(
    pytester: pytest.Pytester, session: Session, tmp_path: Path
) -> None:
    _write(pytester, GOOD)
    commit_all(pytester.path, "tests")
    result, tests = session("-k", "test_rate or test_unmarked", salt="s0")
    assert result.ret == 0
    assert not (tmp_path / "store").exists() and not (pytester.path / ".noisefloor").exists()
    assert "= noisefloor =" not in result.stdout.str() and "warning" not in result.stdout.str()
    assert all("noisefloor_verdict" not in t for t in tests.values())
    assert (tmp_path / "logs" / "unmarked.log").read_text() == "ran\n"


def test_with_two_workers_the_verdicts_are_the_serial_ones(
    pytester: pytest.Pytester, session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _write(pytester, GOOD)
    commit_all(pytester.path, "tests")
    picked = ("--noisefloor", "-k", "rate or same or skipped")
    # adopted by two workers writing one store at once, then checked from copies of it
    monkeypatch.setenv("NOISEFLOOR_ROOT", str(tmp_path / "workers"))
    _, adopted = session(*picked, "-n", "2", salt="adopt")
    assert {t.get("noisefloor_verdict") for t in adopted.values()} == {"adopted", None}
    shutil.copytree(tmp_path / "workers", tmp_path / "serial")
    _write(pytester, BAD | {"crash": False})
    commit_all(pytester.path, "worse")
    found = {}
    for way, args in (("serial", ()), ("workers", ("-n", "2"))):
        monkeypatch.setenv("NOISEFLOOR_ROOT", str(tmp_path / way))
        result, tests = session(*picked, *args, salt="check")
        found[way] = {
            n: (
                t.get("noisefloor_verdict"),
                t.get("noisefloor_repeats"),
                t.get("noisefloor_alpha"),
                t["skipped"],
            )
            for n, t in tests.items()
        }
        # the family is the session's selection, whichever worker ran a test
        assert "family: 2 marked tests of this session" in result.stdout.str()
    assert found["workers"] == found["serial"]
    assert found["serial"]["test_rate"][0] == "regressed"


RESUMED = """
import glob
import os
import signal
import time

import pytest


@pytest.mark.noisefloor
def test_counted(noisefloor_repeat):
    if noisefloor_repeat == 7 and not os.path.exists("killed.mark"):
        open("killed.mark", "w").close()
        # the seven samples before are on disk before the kill (their writer is a thread)
        root, waited = os.environ["NOISEFLOOR_ROOT"], time.monotonic() + 10
        while len(glob.glob(f"{root}/samples/**/r*.json", recursive=True)) < 7:
            assert time.monotonic() < waited, "the samples were never written"
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    with open("repeats.log", "a") as log:
        log.write(f"{noisefloor_repeat}\\n")
"""


def test_a_killed_session_resumes_without_taking_a_repeat_twice(
    pytester: pytest.Pytester, session: Session
) -> None:
    pytester.makepyfile(test_resumed=RESUMED)
    commit_all(pytester.path, "tests")
    killed = pytester.runpytest_subprocess(*QUIET, "--noisefloor")
    assert killed.ret != 0 and (pytester.path / "killed.mark").exists()
    result, tests = session("--noisefloor")
    assert result.ret == 0 and tests["test_counted"]["noisefloor_verdict"] == "adopted"
    assert tests["test_counted"]["noisefloor_calls"] == "13"
    taken = (pytester.path / "repeats.log").read_text().split()
    assert sorted(taken, key=int) == [str(r) for r in range(20)]


HANGS = """
import os
import time

import pytest


@pytest.mark.noisefloor(timeout_s=0.2)
def test_hangs():
    if os.environ["SALT"] == "hang":
        time.sleep(30)


@pytest.mark.noisefloor(repeat=3)
def test_misspelt():
    pass
"""


def test_a_hanging_test_is_stopped_and_counted_as_broken(
    pytester: pytest.Pytester, session: Session, tmp_path: Path
) -> None:
    pytester.makepyfile(test_hangs=HANGS)
    commit_all(pytester.path, "tests")
    result, tests = session("--noisefloor")
    assert tests["test_hangs"]["noisefloor_verdict"] == "adopted"
    assert "unknown argument 'repeat' (did you mean 'repeats'?)" in tests["test_misspelt"]["failed"]
    _neutral_commit(pytester.path, 0)
    result, tests = session("--noisefloor", "-k", "test_hangs", salt="hang")
    assert result.ret == 1 and tests["test_hangs"]["noisefloor_verdict"] == "broken"
    assert "ran past timeout_s=0.2" in tests["test_hangs"]["failed"]
    # each timeout stored the same text, with no address of the harness's frames in it, so
    # that `explain` groups them as one output
    run = tests["test_hangs"]["noisefloor_run"]
    (record,) = (tmp_path / "store").rglob(f"runs/*/{run}.json")
    case = orjson.loads(record.read_bytes())["cases"][0]
    texts = {
        orjson.loads((tmp_path / "store" / case["sample_dir"] / f"r{r}.json").read_bytes())[
            "output"
        ]["text"]
        for r in range(case["start"], case["repeats"])
    }
    assert len(texts) == 1 and "0x" not in texts.pop()


DOUBTFUL = """
import os
import random

import pytest


@pytest.mark.noisefloor(repeats=5, max_repeats=10)
def test_doubtful(noisefloor_repeat):
    assert random.Random(f"{{os.environ['SALT']}}-{{noisefloor_repeat}}").random() < {rate}
"""


def test_an_inconclusive_test_passes_with_a_warning_unless_strict(
    pytester: pytest.Pytester, session: Session
) -> None:
    pytester.makepyfile(test_doubtful=DOUBTFUL.format(rate=0.8))
    commit_all(pytester.path, "tests")
    session("--noisefloor", salt="a")
    pytester.makepyfile(test_doubtful=DOUBTFUL.format(rate=0.5))
    commit_all(pytester.path, "a little worse")
    result, tests = session("--noisefloor", salt="i0.5")
    assert result.ret == 0 and tests["test_doubtful"]["noisefloor_verdict"] == "inconclusive"
    # one line: the test, both rates, what would decide it, and a failing repeat's assertion
    (warned,) = [line for line in result.outlines if "InconclusiveWarning: " in line]
    said = warned.split("InconclusiveWarning: ", 1)[1]
    assert said.startswith("test_doubtful.py::test_doubtful: inconclusive: pass rate 75% -> 50% ")
    assert "(15/20 before, 5/10 now; p=" in said and "raise max_repeats= (10 now)" in said
    assert "failed: AssertionError: assert " in said and "(test_doubtful.py:9)" in said
    # the same version under --noisefloor-strict: judged again from the stored samples, and red
    result, tests = session("--noisefloor", "--noisefloor-strict", salt="i0.5")
    assert result.ret == 1 and tests["test_doubtful"]["noisefloor_calls"] == "0"
    assert tests["test_doubtful"]["failed"].startswith("inconclusive: ")
