"""The sequential check through the real CLI: a deep baseline, a screen, fresh repeats only where
the verdict is in doubt, the budget, and resuming a killed check without repeating a sample."""

from __future__ import annotations

import contextlib
import io
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from noisefloor.cli.main import main
from noisefloor.settings.design import Design
from noisefloor.stats import fisher_regress
from tests.builders import FAKE, answer_case, fake_suite, write_suite
from tests.conftest import isolated_environment

CASES = [answer_case("alpha"), answer_case("beta")]


def suite_with_log(project: Path, **kw: Any) -> tuple[Path, Path]:
    """A suite of the fake target that logs its calls, and the log. The log's name is relative
    (the target runs in the suite's directory), so that a copy of the project elsewhere is the
    same version of the target. Its deep baseline is 30 repeats, its cap 20: looks at 5, 10, 20."""
    env = {"NOISEFLOOR_FAKE_LOG_CALLS": "calls.log", **kw.pop("env", {})}
    kw.setdefault("baseline_repeats", 30)
    path = fake_suite(project, kw.pop("cases", CASES), env=env, **kw)
    doc = yaml.safe_load(path.read_text())
    doc["defaults"]["max_repeats"] = 20
    write_suite(project, doc)
    return path, project / "calls.log"


def logged(log: Path) -> Counter[tuple[str, str]]:
    """Calls per (question, repeat) from the fake target's log."""
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter((line.split(" ", 2)[2], line.split(" ", 2)[1]) for line in lines)


def edit_target(project: Path, old: str, new: str) -> None:
    """A new version of the target: `old` replaced by `new` in its code."""
    code = project / "fake_target.py"
    text = code.read_text()
    assert text.count(old) == 1
    code.write_text(text.replace(old, new))


HARMLESS = ('("sleep", float, 0)', '("sleep", float, 0.0)')
#: every third repeat answers off-topic: 3/5 at the screen, not enough against 30/30 there
THIRD = ('("flake-every", int, 0)', '("flake-every", int, 3)')
BROKEN = ('default=_env("answer", "Paris")', 'default=_env("answer", "Lyon")')
#: Why a case of the fake suite (whose version is its files' hashes) takes no concurrent control.
CONTROL_UNAVAILABLE = (
    "no concurrent control: the baseline's command target ({key}) cannot be built again here: "
    "only a command target versioned by git, an endpoint whose settings the baseline's run kept, "
    "or the baseline's own version can be run beside the candidate"
)


@pytest.fixture(scope="module")
def _deep_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`deep`'s project and store, made once: the first check adopts the baseline at its depth,
    60 calls of the fake target, which each test of `deep` would otherwise make again."""
    work = tmp_path_factory.mktemp("deep")
    project = work / "project"
    project.mkdir()
    shutil.copy(FAKE, project / "fake_target.py")
    suite, log = suite_with_log(project)
    with pytest.MonkeyPatch.context() as env:
        isolated_environment(env, work / "store")
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            assert main(["check", str(suite), "--jobs", "4"]) == 0
    assert "note: adopted as the baseline of fake (30 repeats per case)" in said.getvalue()
    assert sum(logged(log).values()) == 60
    return work


@pytest.fixture
def deep(project: Path, _isolated_root: Path, _deep_template: Path) -> tuple[Path, Path]:
    """A suite whose baseline is adopted at 5 repeats, then deepened to 30 (a copy of
    `_deep_template`'s project and store)."""
    shutil.copytree(_deep_template / "project", project, dirs_exist_ok=True)
    shutil.copytree(_deep_template / "store", _isolated_root)
    return project / "suite.yaml", project / "calls.log"


def by_case(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case_id"]: c for c in report["cases"]}


def test_a_clean_change_stops_every_case_at_the_screen(cli, project, deep):
    suite, log = deep
    edit_target(project, *HARMLESS)
    result = cli("check", suite, "--jobs", "4", "--format", "json")
    report = result.json()
    assert result.code == 0, report["counts"]
    assert report["calls"] == 10
    for case in report["cases"]:
        assert case["sequential"] == {
            "baseline_repeats": 30,
            "candidate_repeats": 5,
            "screen": 5,
            "verdict_repeats": 5,
            "looks": [5],
            "stopped": "clear",
            "why": "no worsening left plausible after 5 repeats (p=1 > 0.3)",
        }
        assert case["scorers"][1]["baseline"]["n"] == 30
    seq = report["sequential"]
    assert (seq["screened"], seq["stops"], seq["calls"], seq["baseline_repeats"]) == (
        2,
        {"clear": 2},
        10,
        30,
    )
    # one look: alpha's share of the first of 5, 10 and 20 repeats, over both cases
    assert [(look["repeats"], look["cases"]) for look in seq["looks"]] == [(5, 2)]
    assert seq["looks"][0]["alpha"] == pytest.approx(0.05 * 5 / 20)
    # a fixed design as strong against 1.0 -> 0.6 costs more than this check did
    assert seq["reference"] == "1.0 -> 0.6" and 0 < seq["power"] <= 1
    assert seq["fixed_calls"] == 2 * seq["fixed_repeats"] > 10
    text = " ".join(cli("check", suite, "-v").out.split())  # the statistics, wrapped
    assert "(repeats 30 vs 5; clear)" in text
    assert "sequential: 2 case(s) against 30 baseline repeats, looks at 5 (2 case(s)" in text


def test_a_slight_worsening_stops_clear_at_the_first_look_only_past_its_futility_bound(
    cli, project, deep
):
    suite, log = deep
    # the futility bound after a check's first look, when a later look follows it
    design = Design(max_repeats=20)
    bound = design.futility_at(0, len(design.schedule(5)))
    assert bound is not None
    # one off-topic answer in a first look of n repeats against the baseline's 30/30: a drop
    # of 1/n, which the rule calls unchanged, and p = n / (30 + n), which grows with n
    above = min(n for n in range(2, 100) if fisher_regress(30, 30, n - 1, n) > bound)
    under = above - 1
    p_above, p_under = (fisher_regress(30, 30, n - 1, n) for n in (above, under))
    # the bound sits below an even chance: a case that looks slightly worse stops once its p
    # passes it (at a bound of 0.3: 12/13 with p=0.302 stops, 11/12 with p=0.286 goes on)
    assert p_under <= bound < p_above < 0.5
    doc = yaml.safe_load(suite.read_text())
    first_looks = {"alpha": above, "beta": under}
    for case in doc["cases"]:
        case["repeats"] = first_looks[case["id"]]
    write_suite(project, doc)
    # r0 answers off-topic, and the next to do so is past either first look
    edit_target(project, '("flake-every", int, 0)', f'("flake-every", int, {above})')
    result = cli("check", suite, "--jobs", "4", "--format", "json")
    report = result.json()
    assert result.code == 0, report["counts"]
    seq = {c["case_id"]: c["sequential"] for c in report["cases"]}
    assert (seq["alpha"]["looks"], seq["alpha"]["stopped"]) == ([above], "clear")
    # the reason counts the case's own repeats, not the smallest first look of the suite
    assert seq["alpha"]["why"] == (
        f"no worsening left plausible after {above} repeats (p={p_above:.3g} > {bound:g})"
    )
    assert by_case(report)["alpha"]["verdict"] == "unchanged"
    assert (seq["beta"]["looks"], seq["beta"]["stopped"]) == ([under, 20], "cap")
    assert report["sequential"]["looks"][0]["futility"] == bound
    assert report["calls"] == above + 20


def test_a_total_break_is_decided_at_the_screen(cli, project, deep):
    suite, log = deep
    edit_target(project, *BROKEN)
    result = cli("check", suite, "--jobs", "4", "--format", "json")
    report = result.json()
    assert result.code == 1
    assert report["counts"] == {"regressed": 2}
    assert report["calls"] == 10  # five repeats per case decided it
    for case in report["cases"]:
        assert case["sequential"]["stopped"] == "decided"
        assert case["sequential"]["candidate_repeats"] == 5
        assert "30/30 -> 0/5" in case["reason"]


def test_a_partial_drop_is_decided_at_a_later_look_on_every_repeat(cli, project, deep):
    suite, log = deep
    before = logged(log)
    edit_target(project, *THIRD)
    result = cli("check", suite, "--jobs", "4", "--format", "json")
    report = result.json()
    assert result.code == 1, report["counts"]
    for case in report["cases"]:
        assert case["verdict"] == "regressed"
        # 30/30 -> 6/10 is within the drift the prior allows (a control would decide it), but
        # a glob-fingerprinted target outside git cannot be run again: the deep verdict stands
        unavailable = CONTROL_UNAVAILABLE.format(key=report["runs"]["baseline"]["target_key"])
        drift = case["sequential"]["control"]["drift"]
        assert (drift["baseline"], drift["candidate"], drift["beyond"]) == (
            [30, 30],
            [6, 10],
            False,
        )
        assert case["sequential"] == {
            "control": {"reason": unavailable, "drift": drift},
            "baseline_repeats": 30,
            "candidate_repeats": 10,
            "screen": 5,
            "verdict_repeats": 10,
            "looks": [5, 10],
            "stopped": "decided",
            "why": "decided at the look of 10 repeats",
        }
        # r0..r9, the first look's included: r0, r3, r6 and r9 fail
        contains = case["scorers"][1]
        assert (contains["candidate"]["k"], contains["candidate"]["n"]) == (6, 10)
        assert contains["candidate"]["example"]["repeat"] == 0
    looks = report["sequential"]["looks"]
    assert [(look["repeats"], look["cases"]) for look in looks] == [(5, 2), (10, 2)]
    assert sum(look["alpha"] for look in looks) == pytest.approx(0.05 * 10 / 20)
    assert report["calls"] == 20
    # the candidate took each of its repeats once
    taken = logged(log) - before
    assert set(taken.values()) == {1} and len(taken) == 20
    # every sample it took is in the ledger with its real status, the first look's included
    ledger = sqlite3.connect(project.parent / "store" / "ledger.sqlite")
    rows = ledger.execute(
        "SELECT case_id, repeat_idx, status FROM run_samples WHERE run_id = ?",
        (report["candidate"],),
    ).fetchall()
    ledger.close()
    assert sorted(rows) == [
        (cid, r, "fail" if r % 3 == 0 else "pass") for cid in ("alpha", "beta") for r in range(10)
    ]
    shown = cli("show", report["candidate"], "--case", "alpha").out
    assert all(f"-- repeat {r} [ok]" in shown for r in range(10))
    # judged again from the store, by the check's own looks: the same verdicts, thresholds and
    # evidence, not a fixed test of all repeats at the whole of alpha
    again = cli("diff", "--format", "json")
    assert again.code == 1
    redone = again.json()
    assert redone["counts"] == report["counts"]
    for case, was in zip(redone["cases"], report["cases"], strict=True):
        assert case["sequential"] == was["sequential"]
        assert case["scorers"][1]["evidence"] == was["scorers"][1]["evidence"]
        assert case["reason"] == was["reason"]


def test_the_budget_leaves_doubt_inconclusive_and_reruns_take_only_the_rest(cli, project, deep):
    suite, log = deep
    before = logged(log)
    edit_target(project, *THIRD)
    # a budget that lands exactly on the first look: 10 samples, and none left for the next
    limited = cli("check", suite, "--max-calls", "10", "--format", "json")
    report = limited.json()
    assert limited.code == 0, report["counts"]  # inconclusive fails only --strict
    assert report["counts"] == {"inconclusive": 2}
    for case in report["cases"]:
        assert case["sequential"]["stopped"] == "budget"
        assert case["sequential"]["looks"] == [5]
        assert "3/5" in case["reason"]
        assert "--max-calls 10 ran out before its next look" in case["reason"]
    assert (report["sequential"]["budget_stopped"], report["calls"]) == (2, 10)
    # cached samples are free: a rerun's budget goes to what it has not taken yet
    assert cli("check", suite, "--max-calls", "4", "--strict").code == 1

    # 5: the first look is cached, and the next look of one case lands exactly on the budget
    partial = cli("check", suite, "--max-calls", "5", "--format", "json")
    assert partial.code == 1
    report = partial.json()
    assert report["counts"] == {"inconclusive": 1, "regressed": 1}
    assert sorted(c["sequential"]["stopped"] for c in report["cases"]) == ["budget", "decided"]
    assert report["calls"] == 5

    rerun = cli("check", suite, "--jobs", "4", "--format", "json")
    assert rerun.code == 1
    assert rerun.json()["counts"] == {"regressed": 2}
    assert rerun.json()["calls"] == 5
    taken = logged(log) - before
    assert set(taken.values()) == {1} and len(taken) == 20


def test_the_budget_serves_the_more_doubtful_case_first(cli, project):
    # alpha only needs valid JSON; beta also needs Paris in the answer, and is listed last and
    # sorts last, so that neither the suite's order nor the ids give it the budget's last look
    cases = [{"id": "alpha", "input": "question alpha", "scorers": ["json_valid"]}]
    cases.append(answer_case("beta"))
    suite, log = suite_with_log(project, cases=cases, baseline_repeats=10)
    assert cli("check", suite, "--jobs", "4").code == 0
    before = logged(log)
    # every fifth repeat exits 1 (both cases fail it), every third answers off-topic (beta's
    # contains fails it): at the first look of r0..r4, alpha 4/5 and beta 3/5 against 10/10
    edit_target(project, '("fail-every", int, 0)', '("fail-every", int, 5)')
    edit_target(project, '("flake-every", int, 0)', '("flake-every", int, 3)')
    # both stay in doubt (alpha's drop of 0.2 is inconclusive), beta the more: its p is smaller
    assert fisher_regress(10, 10, 3, 5) < fisher_regress(10, 10, 4, 5)
    # the first look's 10 samples, then 5: one case's next look, from 5 to 10 repeats
    result = cli("check", suite, "--jobs", "4", "--max-calls", "15", "--format", "json")
    report = result.json()
    assert result.code == 0, report["counts"]
    assert report["counts"] == {"inconclusive": 2} and report["calls"] == 15
    seq = {c["case_id"]: c["sequential"] for c in report["cases"]}
    assert (seq["beta"]["looks"], seq["beta"]["candidate_repeats"]) == ([5, 10], 10)
    assert (seq["alpha"]["looks"], seq["alpha"]["candidate_repeats"]) == ([5], 5)
    assert seq["alpha"]["stopped"] == seq["beta"]["stopped"] == "budget"
    assert [look["cases"] for look in report["sequential"]["looks"]] == [2, 1]
    # the stored run's looks and the target's own log agree on who took what
    run = orjson.loads(
        (project.parent / "store" / "runs" / "fake" / f"{report['candidate']}.json").read_bytes()
    )
    second = run["sequential"]["looks"][1]["windows"]
    assert (second["alpha"][:2], second["beta"][:2]) == ([0, 5], [0, 10])
    taken = logged(log) - before
    assert sorted(taken) == sorted(
        [("question alpha", str(r)) for r in range(5)]
        + [("question beta", str(r)) for r in range(10)]
    )


def test_a_budget_below_the_screen_exits_3_before_any_call(cli, project, deep):
    suite, log = deep
    edit_target(project, *HARMLESS)
    before = logged(log)
    result = cli("check", suite, "--max-calls", "9")
    assert result.code == 3
    assert "--max-calls 9 is below the first look's 10 samples" in result.err
    assert logged(log) == before


def test_a_killed_check_resumes_without_repeating_a_sample(cli, project, deep):
    suite, log = deep
    edit_target(project, *THIRD)
    edit_target(project, '("sleep", float, 0)', '("sleep", float, 0.05)')
    before = logged(log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "noisefloor", "check", str(suite)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        # kill it inside the second look: past the first look's ten calls
        while sum((logged(log) - before).values()) < 12 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert 12 <= sum((logged(log) - before).values()) < 20
    result = cli("check", suite, "--jobs", "4", "--format", "json")
    assert result.code == 1
    assert result.json()["counts"] == {"regressed": 2}
    taken = logged(log) - before
    # every repeat taken, none twice but the one call in flight when the check was killed
    # (it may have answered after its sample could no longer be written)
    assert len(taken) == 20
    assert sum(taken.values()) - 60 <= 1, taken.most_common(3)


def test_an_inconclusive_at_the_cap_names_what_would_narrow_it(cli, project, deep):
    suite, log = deep
    edit_target(project, '("flake-every", int, 0)', '("flake-every", int, 5)')
    # looks at 5 and 10: 8/10 against 30/30 is not significant, and its interval reaches 0.2
    args = ("check", suite, "--max-repeats", "10", "--format", "json")
    shallow = cli(*args, "--baseline-repeats", "40").json()
    assert shallow["counts"] == {"inconclusive": 2}
    for case in shallow["cases"]:
        assert case["sequential"]["stopped"] == "cap"
        # the rule's own advice, more repeats, is what the cap ran out of: the baseline is
        # what limits this case
        reason = case["reason"]
        assert "30/30 -> 8/10: a drop of 0.20, not significant at this N" in reason
        assert "add repeats" not in reason
        assert "the baseline holds 30 repeats per case: `noisefloor baseline deepen`" in reason
    deep_enough = cli(*args).json()
    assert all("raise --max-repeats" in c["reason"] for c in deep_enough["cases"])


def test_every_look_counts_the_cases_that_stopped_earlier(cli, project):
    # beta passes when the answer is filler: never in the baseline, every fourth repeat after
    cases = [answer_case("alpha"), answer_case("beta", needle="filler")]
    suite, log = suite_with_log(project, cases=cases)
    assert cli("check", suite, "--jobs", "4").code == 0
    edit_target(project, '("flake-every", int, 0)', '("flake-every", int, 4)')
    # looks at 5, 10, 20 and 40: alpha's 7/10 (p=0.012) misses the second look's 0.00625
    args = ("check", suite, "--jobs", "4", "--max-repeats", "40", "--format", "json")
    report = cli(*args).json()
    seq = {c["case_id"]: c["sequential"] for c in report["cases"]}
    assert seq["beta"]["looks"] == [5] and seq["beta"]["stopped"] in ("clear", "decided")
    assert seq["alpha"]["looks"] == [5, 10, 20] and seq["alpha"]["stopped"] == "decided"
    assert [look["cases"] for look in report["sequential"]["looks"]] == [2, 1, 1]
    # the later looks judged alpha with beta in their family, at the table beta stopped with
    run = orjson.loads(
        (project.parent / "store" / "runs" / "fake" / f"{report['candidate']}.json").read_bytes()
    )
    third = run["sequential"]["looks"][2]["windows"]
    assert third == {"alpha": [0, 20, 0, 30], "beta": [0, 5, 0, 30]}
    assert run["sequential"]["last_look"] == {"alpha": 2, "beta": 0}
    # judged again from the store, each case at the look it stopped at: the same evidence
    again = cli("diff", "--format", "json").json()
    for case, was in zip(again["cases"], report["cases"], strict=True):
        assert case["case_id"] == was["case_id"] and case["verdict"] == was["verdict"]
        assert case["scorers"] == was["scorers"]


def test_the_first_check_adopts_deep_and_says_so_once(cli, project):
    suite, log = suite_with_log(project, baseline_repeats=7)
    # the terminal's report on stdout, the JSON report in a file
    first = cli("check", suite, "--format", "json", "--output", project / "first.json")
    assert first.code == 0
    note = "note: adopted as the baseline of fake (7 repeats per case)"
    assert first.out.count(note) == 1
    # the whole note, with what the adoption cost, in the JSON report (and on stderr with it)
    (adoption,) = orjson.loads((project / "first.json").read_bytes())["notes"]
    assert "It was sampled at 7 repeats per case (14 calls), once" in adoption
    assert sum(logged(log).values()) == 14


def test_deepen_needs_a_baseline_and_the_baselines_own_version(cli, project):
    suite, log = suite_with_log(project, baseline_repeats=5)
    missing = cli("baseline", "deepen", suite)
    assert missing.code == 3 and "no baseline for suite 'fake'" in missing.err
    assert cli("check", suite).code == 0
    edit_target(project, *HARMLESS)
    other = cli("baseline", "deepen", suite)
    assert other.code == 3
    assert "deepening samples the baseline's own version" in other.err
    assert "check out that commit" in other.err
    assert sum(logged(log).values()) == 10


def test_deepen_moves_the_pointer_and_a_second_deepen_calls_nothing(cli, project, deep):
    suite, log = deep
    shown = cli("baseline", "show").out
    deeper = cli("baseline", "deepen", suite, "--repeats", "30")
    assert deeper.code == 0
    assert "0 target call(s)" in deeper.out
    assert sum(logged(log).values()) == 60
    assert cli("baseline", "show").out != shown  # each deepen is a run of its own
    runs = sorted((project.parent / "store" / "runs" / "fake").glob("*.json"))
    newest = orjson.loads(runs[-1].read_bytes())
    assert {c["repeats"] for c in newest["cases"]} == {30}


def test_a_check_of_the_baselines_own_version_adds_to_its_pool(cli, project):
    suite, log = suite_with_log(project, baseline_repeats=6)
    first = cli("check", suite, "--format", "json")
    assert first.code == 0 and first.json()["calls"] == 12  # adopted 6 deep
    fixed = cli("check", suite, "--repeats", "8", "--format", "json")
    assert fixed.code == 0 and fixed.json()["calls"] == 4
    again = cli("check", suite, "--baseline-repeats", "8", "--format", "json").json()
    assert again["calls"] == 0
    for case in again["cases"]:
        assert case["sequential"] == {
            "baseline_repeats": 8,
            "candidate_repeats": 8,
            "screen": 0,
            "verdict_repeats": 8,
            "stopped": "same",
            "why": "the baseline's own version and input",
        }
    text = cli("check", suite, "--baseline-repeats", "8").out
    assert "the baseline's own version: the same 8 repeats" in text


def _age(files: list[Path], stamp: str) -> None:
    for path in files:
        data = orjson.loads(path.read_bytes())
        data["started_at"] = stamp
        path.write_bytes(orjson.dumps(data))


def test_baseline_samples_past_the_maximum_age_are_left_out(cli, project, deep):
    suite, log = deep
    samples = sorted((project.parent / "store" / "samples" / "fake").rglob("r*.json"))
    alpha = [p for p in samples if "/alpha/" in p.as_posix()]
    old = [p for p in alpha if int(p.stem[1:]) < 10]
    _age(old, "2020-01-01T00:00:00.000000Z")
    edit_target(project, *HARMLESS)
    report = cli("check", suite, "--baseline-max-age", "30d", "--format", "json").json()
    depths = {c["case_id"]: c["sequential"]["baseline_repeats"] for c in report["cases"]}
    assert depths == {"alpha": 20, "beta": 30}

    _age([p for p in samples if "/beta/" in p.as_posix()], "2020-01-01T00:00:00.000000Z")
    stale = cli("check", suite, "--baseline-max-age", "30d")
    assert stale.code == 3
    assert "every baseline sample of 1 case(s) is older than --baseline-max-age (beta)" in stale.err
    assert "noisefloor baseline deepen" in stale.err
    bad = cli("check", suite, "--baseline-max-age", "soon")
    assert bad.code == 3 and "is not a duration" in bad.err


def test_fixed_repeats_and_other_rules_keep_the_fixed_design(cli, project, deep):
    suite, log = deep
    edit_target(project, *THIRD)
    fixed = cli("check", suite, "--repeats", "10", "--format", "json").json()
    assert fixed["calls"] == 20 and "sequential" not in fixed
    assert all("sequential" not in c for c in fixed["cases"])
    band = cli("check", suite, "--rule", "band", "--format", "json").json()
    assert "sequential" not in band


def test_plan_answers_for_the_sequential_design(cli, monkeypatch):
    from noisefloor.stats import Looks, look_outcome

    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: each figure on one line

    out = cli("plan", "--cases", "50", "--repeats", "5").out
    assert (
        "sequential check (the default): looks at 5/10/20/40/60 candidate repeats against " in out
    )
    assert "100 baseline repeats" in out
    looks = Looks(
        sizes=(5, 10, 20, 40, 60),
        thresholds=tuple(0.05 / 50 * n / 60 for n in (5, 5, 10, 20, 20)),
        futility=(0.3, 0.2, 0.15, 0.1),
    )
    for p_b, p_c in ((1.0, 0.6), (0.7, 0.4)):
        power, spent = look_outcome(100, looks, p_b, p_c)
        want = f"pass rate {p_b:.1f} -> {p_c:.1f}: power {100 * power:5.1f}%, {spent:.1f} repeats"
        assert want in out
    assert f"pass rate 0.9: {look_outcome(100, looks, 0.9, 0.9)[1]:.1f}" in out
    assert "the baseline's one-time cost: 100 repeats per case, 5000 calls for 50 cases" in out
    deeper = cli("plan", "--cases", "50", "--baseline-repeats", "60", "--max-repeats", "20").out
    assert "looks at 5/10/20 candidate repeats against 60 baseline repeats" in deeper
