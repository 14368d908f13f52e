"""Exit paths end to end: each test fails when its path is disabled in the code.

A scorer that raises (3, or the verdict's code with --continue-on-scorer-error), the suite gate
(1 while no case regresses), rescore of a run whose samples are gone (3), the endpoint's 408 and
409 retried while a 400 is not, a usage error (3, not a crash), and `plan` (0, its figures
checked with scipy). The suite gate, rescore and the usage error also run as a real process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.servers.llm import LlmServer
from noisefloor.scorers.registry import REGISTRY
from noisefloor.scorers.score import NoParams, ScoreInput, ScoreResult
from tests.builders import CAPITAL, answer_case, fake_suite, http_suite, paris_case
from tests.unit.test_plan import CHANGES, brute_drop, brute_power, fisher_p, parse


def run_process(*args: str | Path, root: Path) -> subprocess.CompletedProcess[str]:
    """`python -m noisefloor ARGS...` as a real process, so the exit status is the process's."""
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", *map(str, args)],
        env={**os.environ, "NOISEFLOOR_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def sample_files(root: Path) -> list[Path]:
    return sorted((root / "samples").rglob("r*.json"))


# -- a scorer that raises --------------------------------------------------------------------


@pytest.fixture
def raising_scorer(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A scorer registered for this test only, that raises on an answer of Lyon."""
    monkeypatch.setattr(REGISTRY, "_defs", dict(REGISTRY._defs))

    @REGISTRY.scorer("raises_on_lyon", params=NoParams)
    def raises_on_lyon(inp: ScoreInput, p: NoParams) -> ScoreResult:
        """Passes, except on an answer of Lyon, where it raises (a scorer with a bug)."""
        if "Lyon" in inp.text:
            raise RuntimeError("cannot handle Lyon")
        return ScoreResult(value=1.0, passed=True, detail="ok")

    yield "raises_on_lyon"


def test_a_scorer_error_exits_3_unless_continue_on_scorer_error(cli, project, raising_scorer):
    case = answer_case("alpha")
    case["scorers"] = [raising_scorer, {"type": "contains", "needle": "Paris", "path": "answer"}]
    assert cli("check", fake_suite(project, [case])).code == 0
    # the code changes: every answer becomes Lyon, which the scorer cannot handle
    suite = fake_suite(project, [case], env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"})

    result = cli("check", suite, "--format", "json")
    assert result.code == 3, result.err
    report = result.json()
    assert report["exit_code"] == 3
    assert report["counts"] == {"regressed": 1}
    raised, contains = report["cases"][0]["scorers"]
    assert raised["candidate"]["scorer_errors"] == 5 and raised["baseline"]["scorer_errors"] == 0
    assert (contains["baseline"]["k"], contains["candidate"]["k"]) == (5, 0)
    assert (
        "5 scorer error(s) in alpha: a scorer failed (case alpha, scorer raises_on_lyon, repeat 0: "
        in result.err
    )
    assert "RuntimeError: cannot handle Lyon" in result.err

    # the same comparison again, stored: the scorer error still decides, then the verdict does
    assert cli("diff").code == 3
    warned = cli("diff", "--continue-on-scorer-error")
    assert warned.code == 1, warned.out
    assert "REGRESSED  alpha" in warned.out
    assert "5 scorer error(s) in alpha" in warned.out
    assert cli("check", suite, "--continue-on-scorer-error").code == 1


# -- the suite gate --------------------------------------------------------------------------


def test_suite_gate_exits_1_when_every_case_drops_a_little(cli, project, _isolated_root):
    # 3 cases at 6 repeats each drop from 6/6 to 5/6: no case changes significantly (p = 0.5),
    # the drop stays under the suspect threshold (0.17 < 0.20), but every case moves the same way
    cases = [
        {
            "id": f"c{i}",
            "input": f"question {i}",
            "scorers": [{"type": "contains", "needle": "Paris", "path": "answer"}],
        }
        for i in range(3)
    ]
    assert cli("check", fake_suite(project, cases, repeats=6), "--jobs", "2").code == 0
    dropping = fake_suite(project, cases, repeats=6, env={"NOISEFLOOR_FAKE_FLAKE_EVERY": "6"})

    without = cli("check", dropping, "--jobs", "2", "--format", "json")
    assert without.code == 0, without.out
    report = without.json()
    assert report["counts"] == {"unchanged": 3}
    assert report["suite_summary"]["mean_diff"] == pytest.approx(-1 / 6, abs=1e-6)
    assert report["suite_summary"]["gate_failed"] is True

    gated = cli("diff", "--suite-gate", "--format", "json")
    assert gated.code == 1, gated.out
    assert gated.json()["counts"] == {"unchanged": 3}
    assert gated.json()["exit_code"] == 1
    # a drop smaller than --suite-min-effect passes the gate
    assert cli("diff", "--suite-gate", "--suite-min-effect", "0.5").code == 0

    proc = run_process("diff", "--suite-gate", root=_isolated_root)
    assert proc.returncode == 1, proc.stderr
    assert "3 unchanged" in proc.stdout


# -- rescore without its samples -------------------------------------------------------------


def test_rescore_refuses_a_run_whose_samples_are_missing(cli, project, _isolated_root):
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")], repeats=2)
    assert cli("run", suite).code == 0
    assert cli("rescore", suite).code == 0
    runs_before = sorted((_isolated_root / "runs").rglob("*.json"))
    assert len(runs_before) == 2  # the run and its rescore
    gone = sample_files(_isolated_root)[1]
    gone.unlink()
    named = str(gone.relative_to(_isolated_root))

    result = cli("rescore", suite)
    assert result.code == 3
    assert result.err.startswith("error: 1 sample file(s) named by the runs are missing")
    assert named in result.err
    assert "internal error" not in result.err
    assert "never calls the target" in result.err
    assert sorted((_isolated_root / "runs").rglob("*.json")) == runs_before

    proc = run_process("rescore", suite, root=_isolated_root)
    assert proc.returncode == 3
    assert named in proc.stderr and "Traceback" not in proc.stderr


# -- the endpoint's retries ------------------------------------------------------------------


def envelopes(root: Path) -> list[dict[str, Any]]:
    """Each stored sample's attempts and retries, in repeat order."""
    return [orjson.loads(path.read_bytes()) for path in sample_files(root)]


@pytest.mark.parametrize("status", [408, 409])
def test_a_408_or_409_is_retried_into_one_good_sample(cli, tmp_path, _isolated_root, status):
    with LlmServer() as server:
        case = paris_case("capital", f"{CAPITAL} [status:{status}:1]", json_valid=False)
        suite = http_suite(tmp_path, server.base_url, [case], repeats=2)
        # one call at a time: the server fails its first request, which must be repeat 0's
        # (an endpoint takes 8 calls at once by default, in no set order)
        result = cli("check", suite, "--jobs", "1", "--format", "json")
        requests = len(server.requests)
    assert result.code == 0, result.err
    # repeat 0: the status, then an answer; repeat 1: an answer
    assert requests == 3
    candidate = result.json()["cases"][0]["scorers"][0]["candidate"]
    assert (candidate["k"], candidate["n"], candidate["infra_errors"]) == (2, 2, 0)
    first, second = envelopes(_isolated_root)
    assert (first["outcome"], first["attempts"]) == ("ok", 2)
    assert [r["status"] for r in first["envelope"]["retries"]] == [status]
    assert (second["outcome"], second["attempts"]) == ("ok", 1)


def test_a_400_is_not_retried(cli, tmp_path, _isolated_root):
    with LlmServer() as server:
        case = paris_case("capital", f"{CAPITAL} [status:400]", json_valid=False)
        suite = http_suite(tmp_path, server.base_url, [case], repeats=2)
        result = cli("check", suite)
        requests = len(server.requests)
    # each repeat is refused once and not asked again: a refusal is the suite's fault
    assert requests == 2
    stored = envelopes(_isolated_root)
    assert [(s["attempts"], s["error"][:16]) for s in stored] == [(1, "config: HTTP 400")] * 2
    assert result.code == 3, result.out
    assert "400" in result.err


# -- a usage error, as a process -------------------------------------------------------------


def test_a_usage_error_is_exit_3_with_its_message_not_a_crash(tmp_path):
    proc = run_process("check", tmp_path / "s.yaml", "--jobs", "none", root=tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "error: argument --jobs: must be a whole number, got 'none'",
        "hint: `noisefloor check --help` lists the options",
    ]


# -- plan ------------------------------------------------------------------------------------


def test_plan_without_a_suite_prints_the_figures_for_the_flags(cli):
    result = cli("plan", "--repeats", "10", "--cases", "20")
    assert result.code == 0, result.err
    assert result.err == ""
    assert result.out.startswith(
        "N = 10 repeats per side, M = 20 cases, alpha = 0.05 family-wise (flags)\n"
        "per-case threshold alpha/K = 0.0025 (K = M: every case assumed able to fail;"
    )
    figures = parse(result.out)
    assert figures["drops"] == {10: 0.7, 9: 0.8, 8: 0.8}
    for k_b, shown in figures["drops"].items():
        assert shown == pytest.approx(brute_drop(k_b, 10, 0.0025))
    for label, p_b, p_c in CHANGES:
        power = figures["rates"][label][0]
        assert power == pytest.approx(brute_power(10, p_b, p_c, 0.0025), abs=0.0005)


def tarone_k(pmins: list[float], alpha: float) -> int:
    """Tarone's K by its definition: the smallest K with #{i: pmin_i <= alpha/K} <= K."""
    return next(k for k in range(1, len(pmins) + 1) if sum(p <= alpha / k for p in pmins) <= k)


def test_plan_of_a_suite_uses_the_gates_threshold_for_a_rerun_of_its_baseline(cli, project):
    # every repeat of an even index answers "unrelated filler": "Paris" passes 2/5 and "i" 5/5
    cases = [answer_case("one"), answer_case("two"), answer_case("steady", needle="i")]
    suite = fake_suite(project, cases, env={"NOISEFLOOR_FAKE_FLAKE_EVERY": "2"})

    before = cli("plan", suite)
    assert before.code == 0, before.err
    assert "M = 3 cases, alpha = 0.05 family-wise (suite fake)" in before.out
    assert parse(before.out)["threshold"] == pytest.approx(0.05 / 3, rel=5e-3)

    adopted = cli("check", suite, "--format", "json").json()
    after = cli("plan", suite)
    assert after.code == 0, after.err
    assert f"(suite fake, baseline {adopted['baseline']})" in " ".join(after.out.split())
    threshold = parse(after.out)["threshold"]
    # Tarone over every scorer of every case (json_valid 5/5 thrice, contains 2/5, 2/5, 5/5):
    # an unchanged rerun of k/5 can at most move all 2k passes to the baseline's side
    passes = [5, 2, 5, 2, 5, 5]
    pmins = [fisher_p(min(5, 2 * k), 5, max(0, 2 * k - 5), 5) for k in passes]
    assert sorted(pmins)[:2] == [pytest.approx(6 / 252)] * 2 and sorted(pmins)[2] == 1.0
    assert threshold == pytest.approx(0.05 / tarone_k(pmins, 0.05), rel=5e-3)
    assert threshold == pytest.approx(0.025, rel=5e-3)
    # and it is the threshold the gate uses for an unchanged rerun
    rerun = cli("check", suite, "--repeats", "5", "--format", "json").json()  # a fixed design
    assert rerun["calls"] == 0
    assert rerun["rule_summary"]["thresholds"]["regress"] == pytest.approx(threshold, rel=5e-3)
    assert parse(after.out)["drops"][5] == pytest.approx(brute_drop(5, 5, 0.025))

    # without the baseline's samples there is no Tarone K: Bonferroni's, and the plan says so
    sample_files(project.parent / "store")[0].unlink()
    pruned = cli("plan", suite)
    assert pruned.code == 0, pruned.err
    shown = " ".join(pruned.out.split())
    assert f"baseline {adopted['baseline']} without its samples: K = M)" in shown
    assert parse(pruned.out)["threshold"] == pytest.approx(0.05 / 3, rel=5e-3)
