"""The Inspect kind gating a real Inspect AI task offline, through the real command line in a
subprocess: adopt, three behaviour-neutral commits (at most one red), then two samples dropped
from 0.9 to 0.5, both regressed; logs written by `inspect eval --epochs 10` judged as the same
samples through the kind; each look of a check at most one `eval()`. Slow (Inspect starts in
2 s or more, and adoption takes 2,000 epochs): run with `-m quality`.

The story draws afresh at every call, as a model does: it fails by chance about once in 90
runs (two red of three neutral checks: at most 0.73% at 5% each; a dropped sample missed: 0.2%
each, `noisefloor plan --cases 20 --repeats 20 --max-repeats 100`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.targets import inspect_eval
from tests.builders import commit_all, inspect_suite, isolate_git

pytest.importorskip("inspect_ai")

pytestmark = pytest.mark.quality

NEUTRAL = 3


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    inspect_eval.eval_calls.clear()


def _noisefloor(repo: Path, *args: str) -> tuple[int, Any, str]:
    """`noisefloor check suite.yaml ARGS --format json` in a subprocess: code, report, stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "noisefloor", "check", "suite.yaml", *args, "--format", "json"],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "NOISEFLOOR_ROOT": str(repo / ".noisefloor")},
    )
    report = orjson.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, report, proc.stderr.decode()


def test_neutral_commits_stay_green_and_two_dropped_samples_regress(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    inspect_suite(repo, args={"seeded": False})
    # 20 repeats at the first look, 100 at most: a drop from 0.9 to 0.5 is caught 99.8% of the
    # time, 81.4% at the defaults (5 and 60)
    suite = repo / "suite.yaml"
    suite.write_text(
        suite.read_text()
        .replace("repeats: 5", "repeats: 20\n  max_repeats: 100")
        .replace("baseline_repeats: 10", "baseline_repeats: 100")
    )
    commit_all(repo, "the task")
    code, report, err = _noisefloor(repo)
    assert code == 0 and report["adopted"], err
    commit_all(repo, "the baseline")

    red = 0
    task = repo / "tasks.py"
    for i in range(NEUTRAL):
        task.write_text(task.read_text() + f"\n# a behaviour-neutral edit {i}\n")
        commit_all(repo, f"neutral {i}")
        code, report, err = _noisefloor(repo)
        assert code in (0, 1), err
        assert report["calls"] > 0  # a new version, sampled afresh
        red += code == 1
    assert red <= 1

    task.write_text(
        task.read_text().replace(
            "RATES: dict[str, float] = {}", 'RATES: dict[str, float] = {"c01": 0.5, "c02": 0.5}'
        )
    )
    commit_all(repo, "two samples worse")
    code, report, err = _noisefloor(repo)
    assert code == 1, err
    verdicts = {c["case_id"]: c["verdict"] for c in report["cases"]}
    assert verdicts["c01"] == verdicts["c02"] == "regressed"
    assert {c for c, v in verdicts.items() if v == "regressed"} == {"c01", "c02"}
    assert "Traceback" not in err
    # nothing of Inspect's outside the store root
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*"))


def _inspect_eval(work: Path, logs: Path, fmt: str) -> Path:
    """`inspect eval tasks.py@coins --epochs 10` in a subprocess; the log it wrote."""
    before = set(logs.glob("*")) if logs.exists() else set()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "tasks.py@coins",
            "--model",
            "mockllm/model",
            "--epochs",
            "10",
            "--log-dir",
            str(logs),
            "--log-format",
            fmt,
            "--display",
            "none",
        ],
        cwd=work,
        check=True,
        capture_output=True,
        env={**os.environ, "XDG_DATA_HOME": str(work / "xdg")},
    )
    (log,) = set(logs.glob("*")) - before
    return log


def test_logs_of_inspect_eval_give_the_verdicts_of_the_same_samples_through_the_kind(
    cli: Any, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    suite = inspect_suite(work)
    tasks = work / "tasks.py"
    logs = tmp_path / "logs"
    logged = tmp_path / "logged"
    for label, fmt in (("base", "eval"), ("cand", "json")):
        if label == "cand":
            tasks.write_text(
                tasks.read_text().replace(
                    "RATES: dict[str, float] = {}",
                    'RATES: dict[str, float] = {"c01": 0.1, "c02": 0.1}',
                )
            )
        assert cli("run", suite, "--repeats", "10", "--label", label).code == 0
        log = _inspect_eval(work, logs, fmt)
        imported = cli("--root", logged, "import", "--inspect", log, "--label", label)
        assert imported.code == 0, imported.err
    compare = ("compare", "--baseline", "base", "--current", "cand", "--format", "json")
    kind = cli(*compare).json()
    read = cli("--root", logged, *compare).json()
    verdicts = [{c["case_id"]: c["verdict"] for c in r["cases"]} for r in (kind, read)]
    assert verdicts[0] == verdicts[1]
    assert {c for c, v in verdicts[0].items() if v == "regressed"} == {"c01", "c02"}
    assert kind["exit_code"] == read["exit_code"] == 1


def test_each_look_of_a_sequential_check_is_at_most_one_eval(cli: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    suite = inspect_suite(work)
    assert cli("check", suite).code == 0
    adopted = len(inspect_eval.eval_calls)
    assert adopted == 1
    # a behaviour-neutral edit: a new version, sampled look by look
    (work / "tasks.py").write_text((work / "tasks.py").read_text() + "\n# neutral\n")
    result = cli("check", suite, "--format", "json")
    assert result.code in (0, 1), result.err
    looks = result.json()["sequential"]["looks"]
    taken = inspect_eval.eval_calls[adopted:]
    assert 1 <= len(taken) <= len(looks)
    assert (len(taken[0].sample_ids), taken[0].epochs) == (20, 5)
