"""The pytest session keeps the false-alarm rate it states: 40 marked tests of a randomized function
(pass rates 0.4 to 1.0), adopted once, then behaviour-neutral sessions in real pytest processes, in
series and under pytest-xdist (`-n 2`): at most 5% of sessions go red. The same sessions judged
with one family per test (as the plugin judged before) go red far more often.

Each neutral session is a fresh version: a commit that changes a tracked file (NOTES.md) and
nothing the tests run, as CI meets one commit after another, so that no session reuses another's
repeats. Each repeat draws its luck from `random.Random(f"{SALT}-{test}-{repeat}")` with a SALT of
its own per session: the sessions are independent and the test reproducible. Slow (201 pytest
sessions: 54 minutes on two shared cores under a load average of 12 to 20): run with
`-m quality`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from noisefloor.model.records import RunRecord
from noisefloor.model.verdict import Verdict
from noisefloor.operations.sequential_check import rejudge
from noisefloor.settings import RuleSettings
from noisefloor.store.store import Store
from tests.builders import commit_all
from tests.pytest_sessions import Session, session_runner

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.quality

TESTS = 40
SESSIONS = 100
#: The stated rate, and the share of sessions at most red.
ALPHA = 0.05

RANDOMIZED = """
def draw(rate, rng):
    \"\"\"A randomized function: right with probability `rate`.\"\"\"
    return rng.random() < rate
"""

MARKED = f"""
import os
import random

import pytest

from randomized import draw

RATES = [0.4 + 0.6 * i / {TESTS - 1} for i in range({TESTS})]


@pytest.mark.noisefloor
@pytest.mark.parametrize("index", range({TESTS}))
def test_draw(index, noisefloor_repeat):
    rng = random.Random(f"{{os.environ['SALT']}}-{{index}}-{{noisefloor_repeat}}")
    assert draw(RATES[index], rng)
"""


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Session:
    # hundreds of sessions: each reads the modules compiled (and pytest's rewriting of the
    # plugin's, a distribution's pytest11 entry) by the first, instead of compiling them again
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    return session_runner(pytester, monkeypatch, tmp_path, "[pytest]\n")


def _red_alone(store: Store, suite: str, run_id: str, settings: RuleSettings) -> bool:
    """Whether a test's run, judged as its own family (the rate `settings.alpha` its own), is
    regressed at any look it took: the session's smaller share could only hold it longer, so a
    check of its own would have stopped red at the first such look."""
    cand = store.load_run(suite, run_id)
    record = cand.sequential
    assert record is not None
    base = store.load_run(suite, record.baseline)
    (case_id,) = record.last_look
    for look in range(record.last_look[case_id] + 1):
        seen = record.model_copy(
            update={
                "looks": record.looks[: look + 1],
                "last_look": {case_id: look},
                "stops": {case_id: "decided"},
                "controls": {},
                "uncontrolled": {},
            }
        )
        cut: RunRecord = cand.model_copy(update={"sequential": seen})
        (judged,) = rejudge(store, base, cut, settings)["cases"]
        if judged.verdict is Verdict.REGRESSED:
            return True
    return False


def _neutral_sessions(
    pytester: pytest.Pytester, session: Session, store: Store, way: str, *args: str
) -> tuple[int, int]:
    """SESSIONS behaviour-neutral sessions: how many went red, and how many would have with
    one family per test."""
    red = red_alone = 0
    alone = RuleSettings(alpha=ALPHA)
    for n in range(SESSIONS):
        (pytester.path / "NOTES.md").write_text(f"{way} session {n}\n")
        commit_all(pytester.path, f"{way} notes {n}")
        result, tests = session("--noisefloor", *args, salt=f"{way}-{n}")
        marked = {name: t for name, t in tests.items() if "noisefloor_run" in t}
        assert len(marked) == TESTS and result.ret in (0, 1), result.stdout.str()[-3000:]
        assert {t["noisefloor_verdict"] for t in marked.values()} <= {
            "unchanged",
            "inconclusive",
            "improved",
            "regressed",
        }
        red += result.ret == 1
        red_alone += any(
            _red_alone(store, t["noisefloor_suite"], t["noisefloor_run"], alone)
            for t in marked.values()
        )
    return red, red_alone


def test_behaviour_neutral_sessions_stay_within_the_stated_rate(
    pytester: pytest.Pytester, session: Session, tmp_path: Path
) -> None:
    pytester.makepyfile(randomized=RANDOMIZED, test_draws=MARKED)
    commit_all(pytester.path, "forty randomized tests")
    result, tests = session("--noisefloor", salt="adopt")
    assert result.ret == 0
    assert sum(t.get("noisefloor_verdict") == "adopted" for t in tests.values()) == TESTS
    assert f"family: {TESTS} marked tests of this session; false-alarm rate 5%" in (
        result.stdout.str()
    )
    store = Store(tmp_path / "store")
    measured = {}
    for way, args in (("serial", ()), ("xdist", ("-n", "2"))):
        measured[way] = _neutral_sessions(pytester, session, store, way, *args)
    report = "; ".join(
        f"{way}: {red}/{SESSIONS} sessions red, {alone}/{SESSIONS} with one family per test"
        for way, (red, alone) in measured.items()
    )
    print(f"\n{TESTS} tests, {SESSIONS} neutral sessions each way: {report}")
    for red, alone in measured.values():
        assert red <= ALPHA * SESSIONS, report
        # one family per test: each test's own 5%, about one session in four red
        assert alone >= max(10, 3 * red), report
