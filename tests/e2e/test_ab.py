"""`noisefloor ab SUITE --baseline-ref REF` on a real randomized program in a real git repository:
the monte-carlo example's program, four of its always-passing cases, committed. The baseline arm
runs the committed code from a temporary worktree, the candidate arm the working tree."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.builders import commit_all, drawn_order, git, isolate_git, worktrees, write_suite

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "monte-carlo"
#: Cases of the example that pass every time (README.md there has the measured rates).
CASES = {
    "pi-10k-loose": "pi --samples 10000 --tol 0.1",
    "integrate-exp": "integrate --fn exp --samples 4000 --tol 0.05",
    "integrate-square": "integrate --fn square --samples 4000 --tol 0.03",
    "select-minimum": "select --n 1001 --k 0 --budget 20000",
}
REPEATS = 4
#: The planted regression: the integrand of `square` becomes x + x, which only BROKEN uses.
GOOD = '"square": (lambda x: x * x,'
BAD = '"square": (lambda x: x + x,'
BROKEN = "integrate-square"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository holding the example's program and a suite of four of its cases, committed.

    The suite has no `fingerprint:`, so each arm's version is that of its git tree.
    """
    work = tmp_path / "repo"
    (work / "mc").mkdir(parents=True)
    shutil.copy(EXAMPLE / "montecarlo.py", work / "mc" / "montecarlo.py")
    suite = {
        "name": "mc",
        "target": {
            "command": [sys.executable, "-S", "montecarlo.py", "{{input}}"],
            "output": "json",
            "timeout_s": 20,
        },
        "defaults": {"repeats": REPEATS},
        "cases": [
            {
                "id": cid,
                "input": text,
                "scorers": [{"type": "json_path_equals", "path": "ok", "value": True}],
            }
            for cid, text in CASES.items()
        ],
    }
    write_suite(work / "mc", suite)
    commit_all(work)
    return work


def _edit(repo: Path, old: str, new: str) -> None:
    program = repo / "mc" / "montecarlo.py"
    text = program.read_text(encoding="utf-8")
    assert old in text
    program.write_text(text.replace(old, new), encoding="utf-8")


def _ab(cli: Any, repo: Path, *args: str) -> Any:
    return cli("ab", repo / "mc" / "suite.yaml", "--root", repo / ".noisefloor", *args)


def _run(root: Path, report: dict[str, Any], side: str) -> dict[str, Any]:
    return orjson.loads((root / "runs" / "mc" / f"{report[side]}.json").read_bytes())


def _samples(root: Path, report: dict[str, Any], side: str) -> list[dict[str, Any]]:
    run = _run(root, report, side)
    return [
        orjson.loads(path.read_bytes())
        for case in run["cases"]
        for path in sorted((root / case["sample_dir"]).glob("r*.json"))
    ]


def _nothing_left(repo: Path) -> None:
    """git knows only the main work tree, no checkout is left under the store root, and
    nothing was written outside the store root (git's record of the worktree is gone)."""
    assert worktrees(repo) == [str(repo.resolve())]
    base = repo / ".noisefloor" / "worktrees"
    assert [p.name for p in base.iterdir() if p.name != ".claims"] == []
    assert not list((repo / ".git").glob("worktrees/*"))
    status = set(git(repo, "status", "--porcelain", "--untracked-files=all").splitlines())
    assert status - {" M mc/montecarlo.py"} == {"?? .noisefloor/.gitignore"}


def test_a_regression_planted_in_the_working_tree_fails_against_head(cli, repo):
    sha = git(repo, "rev-parse", "HEAD").strip()
    _edit(repo, GOOD, BAD)
    result = _ab(cli, repo, "--baseline-ref", "HEAD", "--format", "json")
    report = result.json()
    assert result.code == 1, result.err
    assert [c["case_id"] for c in report["cases"] if c["verdict"] == "regressed"] == [BROKEN]
    assert report["counts"] == {"regressed": 1, "unchanged": 3}
    assert f"baseline arm: HEAD ({sha[:12]})" in report["warnings"][0]
    assert report["runs"]["baseline"]["label"] == f"ab-{sha[:12]}"
    assert report["runs"]["baseline"]["target_key"] != report["runs"]["candidate"]["target_key"]
    assert report["target_change"]["modified"] == ["montecarlo.py"]
    # sequential on both arms: every case looked at with REPEATS per arm; the broken case, 0/4
    # against 4/4, is in doubt and looked at again with both arms brought to 10, interleaved
    assert report["calls"] == 2 * len(CASES) * REPEATS + 2 * (10 - REPEATS)
    broken = next(c for c in report["cases"] if c["case_id"] == BROKEN)
    assert broken["sequential"] == {
        "baseline_repeats": 10,
        "candidate_repeats": 10,
        "screen": REPEATS,
        "verdict_repeats": 10,
        "looks": [REPEATS, 10],
        "stopped": "decided",
        "why": "decided at the look of 10 repeats",
    }
    # the baseline arm ran the committed program: every repeat of the broken case passed there
    scorer = broken["scorers"][0]
    assert (scorer["baseline"]["k"], scorer["baseline"]["n"]) == (10, 10)
    assert (scorer["candidate"]["k"], scorer["candidate"]["n"]) == (0, 10)
    _nothing_left(repo)


def test_the_arms_are_sampled_interleaved(cli, repo):
    _edit(repo, "Five small randomized", "Five small, randomized")  # a new version, same behaviour
    result = _ab(cli, repo, "--baseline-ref", "HEAD", "--format", "json")
    report = result.json()
    assert result.code == 0, result.out
    assert report["counts"] == {"unchanged": len(CASES)}
    root = repo / ".noisefloor"
    stamps = sorted(
        (sample["started_at"], side, sample["case_id"], sample["repeat"])
        for side in ("baseline", "candidate")
        for sample in _samples(root, report, side)
    )
    assert len(stamps) == 2 * len(CASES) * REPEATS
    # at one job at a time, repeat by repeat, each repeat's cases and arms in the order drawn
    # from the seed both arms' runs record
    calls = [(int(side == "candidate"), case, repeat) for _, side, case, repeat in stamps]
    assert [repeat for _, _, repeat in calls] == sorted(repeat for _, _, repeat in calls)
    (seed,) = {_run(root, report, side)["schedule_seed"] for side in ("baseline", "candidate")}
    assert calls == drawn_order(calls, seed)
    _nothing_left(repo)


def test_an_unchanged_working_tree_is_one_version_sampled_once(cli, repo):
    result = _ab(cli, repo, "--baseline-ref", "HEAD", "--format", "json")
    report = result.json()
    assert result.code == 0, result.err
    assert report["baseline"] == report["candidate"]
    assert report["counts"] == {"unchanged": len(CASES)}
    assert report["calls"] == len(CASES) * REPEATS
    assert any("nothing differs" in w for w in report["warnings"]), report["warnings"]
    assert len(list((repo / ".noisefloor" / "runs" / "mc").glob("*.json"))) == 1
    _nothing_left(repo)


def test_the_suite_file_need_not_exist_at_the_ref(cli, repo):
    """The baseline arm runs the current suite's cases against the ref's code; its version's
    `fingerprint:` globs resolve in the checkout too."""
    git(repo, "rm", "-q", "--cached", "mc/suite.yaml")
    git(repo, "commit", "-q", "-m", "the suite is not committed")
    suite = repo / "mc" / "suite.yaml"
    doc = yaml.safe_load(suite.read_text())
    doc["target"]["fingerprint"] = ["montecarlo.py"]
    suite.write_text(yaml.safe_dump(doc, sort_keys=False))
    _edit(repo, GOOD, BAD)
    result = _ab(cli, repo, "--baseline-ref", "HEAD", "--format", "json")
    assert result.code == 1, result.err
    assert result.json()["counts"] == {"regressed": 1, "unchanged": 3}
    assert result.json()["target_change"]["modified"] == ["montecarlo.py"]


def test_a_bad_ref_exits_3_with_a_hint(cli, repo):
    result = _ab(cli, repo, "--baseline-ref", "no-such-branch")
    assert result.code == 3
    assert "'no-such-branch' names no commit" in result.err
    assert "hint: " in result.err and "git log --oneline" in result.err
    assert not (repo / ".noisefloor" / "runs").exists()


def test_a_suite_outside_any_repository_exits_3_with_a_hint(cli, repo, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(repo / "mc", plain)
    result = cli("ab", plain / "suite.yaml", "--baseline-ref", "HEAD")
    assert result.code == 3
    assert f"{plain}: not inside a git work tree" in result.err
    assert "hint: " in result.err and "git init" in result.err


def test_the_baseline_ref_is_required(cli, repo):
    result = _ab(cli, repo)
    assert result.code == 3
    assert "--baseline-ref" in result.err


def _cli_process(*args: str | Path) -> subprocess.Popen[bytes]:
    # a shell starts background jobs with SIGINT ignored, and Python keeps it so: restore it
    restore = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    return subprocess.Popen(
        [sys.executable, "-m", "noisefloor", *map(str, args)],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=restore,
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_ab_leaves_no_worktree(cli, repo, signum):
    """Ctrl-C and SIGTERM remove the checkout on the way out; after SIGKILL the next `ab` does."""
    _edit(repo, GOOD, BAD)
    root = repo / ".noisefloor"
    suite = repo / "mc" / "suite.yaml"
    # more repeats than the test waits for: the signal comes while the arms are being sampled
    proc = _cli_process("ab", suite, "--root", root, "--baseline-ref", "HEAD", "--repeats", "20")
    try:
        deadline = time.monotonic() + 60
        while not list(root.glob("samples/**/r*.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (root / "worktrees").is_dir() and len(worktrees(repo)) == 2
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == (128 + signum if signum != signal.SIGKILL else -signum), err
    if signum == signal.SIGKILL:
        assert len(worktrees(repo)) == 2  # nothing ran on the way out
        result = _ab(cli, repo, "--baseline-ref", "HEAD", "--format", "json")
        assert result.code == 1, result.err
    else:
        assert b"interrupted" in err
    _nothing_left(repo)
