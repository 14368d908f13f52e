"""What the tests build their inputs with: suite files (of the fake target, of an endpoint, of an
Inspect AI task, of any document), cases, a scorer's and a case's band, real git repositories, and the order a seed
draws for a set of calls."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from noisefloor.executors.base import ArmPending, Pending
from noisefloor.executors.schedule import call_order
from noisefloor.model.records import CaseBand, CaseRecord, ScorerBand
from noisefloor.targets.function import FunctionTarget

#: The fake program under test, which a test's project copies so that its code can be edited.
FAKE = Path(__file__).resolve().parents[1] / "bench" / "fake_target.py"

#: Inspect AI tasks that run offline (`coins`, `faulty`), which an Inspect suite's directory copies.
INSPECT_TASKS = Path(__file__).resolve().parent / "data" / "inspect" / "tasks.py"

#: The model an endpoint suite names, and a prompt the loopback stand-in answers with
#: {"answer": "Paris"} (it answers with the prompt's last word).
MODEL = "nf-test-model"
CAPITAL = "Name the capital of France in one word: Paris"


# -- suite files -----------------------------------------------------------------------------


def write_suite(directory: Path, doc: dict[str, Any], *, filename: str = "suite.yaml") -> Path:
    """Write `doc` as the suite file `directory/filename`, keys in their given order; its path."""
    path = directory / filename
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def inspect_suite(directory: Path, task: str = "tasks.py@coins", **target: Any) -> Path:
    """A suite `coins` in `directory` (made) of an Inspect task of `INSPECT_TASKS` (copied there)
    against `mockllm/model`, with `target` over that; 5 repeats, a deep baseline of 10."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(INSPECT_TASKS, directory / "tasks.py")
    inspect = {"task": task, "model": "mockllm/model", **target}
    # a shallow deep baseline: an adoption of 20 samples is 200 epochs, not 2,000
    defaults = {"repeats": 5, "baseline_repeats": 10}
    return write_suite(
        directory, {"name": "coins", "target": {"inspect": inspect}, "defaults": defaults}
    )


def fake_suite(
    directory: Path,
    cases: list[dict[str, Any]],
    *,
    name: str = "fake",
    env: dict[str, str] | None = None,
    repeats: int = 5,
    baseline_repeats: int | None = None,
    extra_argv: list[str] | None = None,
    **target: Any,
) -> Path:
    """Write a suite whose target is the fake program in `directory`; return its path.

    Its baseline is `baseline_repeats` deep (default: `repeats`), so that a first check adopts
    no more than a test asks for."""
    command = [sys.executable, "fake_target.py", "{{input}}", "--repeat", "{{repeat}}"]
    suite = {
        "name": name,
        "target": {
            "command": [*command, *(extra_argv or [])],
            "output": "json",
            "timeout_s": 20,
            "env": env or {},
            "fingerprint": ["fake_target.py"],
            **target,
        },
        "defaults": {"repeats": repeats, "baseline_repeats": baseline_repeats or repeats},
        "cases": cases,
    }
    return write_suite(directory, suite)


def answer_case(case_id: str, needle: str = "Paris", **extra: Any) -> dict[str, Any]:
    """A case of the fake target that passes when the answer contains `needle`."""
    return {
        "id": case_id,
        "input": f"question {case_id}",
        "scorers": ["json_valid", {"type": "contains", "needle": needle, "path": "answer"}],
        **extra,
    }


def paris_case(case_id: str, prompt: str = CAPITAL, *, json_valid: bool = True) -> dict[str, Any]:
    """A case of an endpoint that passes when the answer's `answer` field contains Paris (and,
    with `json_valid`, when the answer is JSON)."""
    scorers: list[Any] = [{"type": "contains", "needle": "Paris", "path": "answer"}]
    if json_valid:
        scorers.insert(0, "json_valid")
    return {"id": case_id, "input": prompt, "scorers": scorers}


def http_suite(
    directory: Path,
    base_url: str,
    cases: list[dict[str, Any]] | None = None,
    *,
    name: str = "http",
    model: str = MODEL,
    repeats: int = 3,
    max_retries: int | None = 2,
    retry_budget: int | None = 100,
    cases_file: str | None = None,
    redact: list[str] | None = None,
    filename: str = "suite.yaml",
    **http: Any,
) -> Path:
    """Write a suite whose target is the endpoint at `base_url`, its baseline `repeats` deep;
    return its path. `http` adds to the target's settings.

    The retry budget is generous by default so that the run-wide budget never decides a test's
    outcome; `None` leaves a retry setting out (the tool's default)."""
    retries = {"max_retries": max_retries, "retry_budget": retry_budget}
    target = {
        "base_url": base_url,
        "model": model,
        **{key: value for key, value in retries.items() if value is not None},
        **http,
    }
    doc: dict[str, Any] = {"name": name, "target": {"http": target}}
    doc["defaults"] = {"repeats": repeats, "baseline_repeats": repeats}
    if cases is not None:
        doc["cases"] = cases
    if cases_file is not None:
        doc["cases_file"] = cases_file
    if redact is not None:
        doc["redact"] = redact
    return write_suite(directory, doc, filename=filename)


def write_cases(directory: Path, rows: list[dict[str, Any]]) -> str:
    """Write `rows` as the JSONL cases file `cases.jsonl` in `directory`; return its name."""
    path = directory / "cases.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path.name


# -- bands -----------------------------------------------------------------------------------


def scorer_band(
    k: int,
    n: int,
    *,
    values: list[float] | None = None,
    kind: str = "binary",
    direction: str = "higher_is_better",
    target_errors: int = 0,
    infra_errors: int = 0,
    scorer_errors: int = 0,
    reliable: bool = True,
    label: str = "0:contains",
) -> ScorerBand:
    """A scorer's band: `k` passes out of `n` valid repeats (target errors among the fails)."""
    if values is None:
        values = [1.0] * k + [0.0] * (n - k - target_errors) if kind == "binary" else []
    return ScorerBand(
        label=label,
        name=label.partition(":")[2],
        kind=kind,
        direction=direction,
        impl_hash="0" * 16,
        params={},
        n=n,
        k=k,
        target_errors=target_errors,
        infra_errors=infra_errors,
        scorer_errors=scorer_errors,
        values=values,
        reliable=reliable,
        details=[],
    )


def continuous(values: list[float], **kwargs: Any) -> ScorerBand:
    """A continuous scorer whose every repeat passed, with these values."""
    kwargs.setdefault("label", "0:json_path_number")
    return scorer_band(len(values), len(values), values=values, kind="continuous", **kwargs)


def case_band(
    *scorers: ScorerBand,
    ok: int | None = None,
    repeats: int | None = None,
    infra: int = 0,
    case_key: str = "key1",
    case_id: str = "c",
) -> CaseBand:
    """A case's band; by default every repeat came back ok."""
    if repeats is None:
        repeats = max((s.n + s.infra_errors + s.scorer_errors for s in scorers), default=5)
    if ok is None:
        ok = repeats - infra
    outcomes = {"ok": ok, "error:exit": repeats - ok - infra, "error:infra": infra}
    return CaseBand(
        case_id=case_id,
        case_key=case_key,
        repeats=repeats,
        outcomes={k: v for k, v in outcomes.items() if v},
        errors=[],
        scorers=list(scorers),
    )


# -- git repositories ------------------------------------------------------------------------


#: A randomized program: a case is right with the probability the world outside its code gives it
#: (WORLD_RATE in the environment, no part of its version) less the program's own DROP, a case
#: named steady-* always; each draw is fixed by the world's seed (WORLD), the case and the repeat,
#: so every check is reproducible.
WORLD_PROGRAM = """\
import json, os, random, sys
case, repeat = sys.argv[1], sys.argv[2]
rate = 1.0 if case.startswith("steady") else float(os.environ["WORLD_RATE"]) - DROP
draw = random.Random(f"{os.environ['WORLD']}/{case}/{repeat}").random()
print(json.dumps({"answer": "Paris" if draw < rate else "Lyon"}))
"""


def world_repo(work: Path, case_ids: list[str]) -> Path:
    """A repository (not yet committed) holding WORLD_PROGRAM at DROP 0.0 as a command target,
    with a suite whose cases `case_ids` each check the answer for Paris."""
    work.mkdir()
    (work / "answer.py").write_text("DROP = 0.0\n" + WORLD_PROGRAM)
    (work / "README.md").write_text("# an answerer\n")
    scorers = [{"type": "contains", "needle": "Paris", "path": "answer"}]
    suite = {
        "name": "world",
        "target": {
            "command": [sys.executable, "-S", "answer.py", "{{case_id}}", "{{repeat}}"],
            "output": "json",
            "timeout_s": 20,
        },
        "cases": [{"id": cid, "input": "capital?", "scorers": scorers} for cid in case_ids],
    }
    write_suite(work, suite)
    return work


def worse_world(repo: Path, drop: float) -> None:
    """A commit to a `world_repo` whose program now answers right `drop` less often."""
    program = repo / "answer.py"
    program.write_text(program.read_text().replace("DROP = 0.0", f"DROP = {drop}"))
    commit_all(repo, "a worse answerer")


def world_check(cli: Any, repo: Path) -> Any:
    """A check of a `world_repo` through the command line: four calls at once, a JSON report."""
    return cli(
        "--root", repo / ".noisefloor", "check", repo / "suite.yaml", "--jobs", "4",
        "--format", "json",
    )  # fmt: skip


def adopted_world(
    cli: Any, work: Path, monkeypatch: pytest.MonkeyPatch, case_ids: list[str], rate: float
) -> Path:
    """A `world_repo` committed, its baseline adopted in the world "adoption" at `rate` (100
    repeats per case) and committed."""
    world_repo(work, case_ids)
    commit_all(work, "an answerer")
    monkeypatch.setenv("WORLD", "adoption")
    monkeypatch.setenv("WORLD_RATE", str(rate))
    assert world_check(cli, work).json()["adopted"]
    commit_all(work, "the baseline")
    return work


def narrowed_world(
    cli: Any, work: Path, monkeypatch: pytest.MonkeyPatch, case_ids: list[str], rate: float,
    *, depth: int = 100, git: bool = True,
) -> Path:  # fmt: skip
    """A `world_repo` whose target's version is its program alone (`fingerprint:`), its baseline
    adopted in the world "adoption" at `rate` (`depth` repeats per case), committed when `git`."""
    world_repo(work, case_ids)
    suite = work / "suite.yaml"
    doc = yaml.safe_load(suite.read_text())
    doc["target"]["fingerprint"] = ["answer.py"]
    doc["defaults"] = {"baseline_repeats": depth}
    write_suite(work, doc)
    if git:
        commit_all(work, "an answerer")
    monkeypatch.setenv("WORLD", "adoption")
    monkeypatch.setenv("WORLD_RATE", str(rate))
    assert world_check(cli, work).json()["adopted"]
    if git:
        commit_all(work, "the baseline")
    return work


def reworded(repo: Path, i: int, *, git: bool = True) -> None:
    """A change of a `world_repo`'s program text that changes nothing it does: a new version of
    a narrowed target."""
    program = repo / "answer.py"
    program.write_text(program.read_text() + f"# revision {i}\n")
    if git:
        commit_all(repo, f"a comment, revision {i}")


def isolate_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the machine's git configuration, and any repository around `tmp_path`, out."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def git(repo: Path, *args: str) -> str:
    """Run one git command in `repo`, as a fixed author; its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def commit_all(repo: Path, message: str = "commit") -> str:
    """Commit every file of `repo` (initialising it first when needed); the new commit's id."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git_repo(repo: Path, files: dict[str, str], message: str = "commit") -> Path:
    """A repository at `repo` holding `files` (relative path: text), committed; its path."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    commit_all(repo, message)
    return repo


def worktrees(repo: Path) -> list[str]:
    """The work trees git knows of for `repo`, the main one first."""
    listed = git(repo, "worktree", "list", "--porcelain")
    return [
        line.removeprefix("worktree ")
        for line in listed.splitlines()
        if line.startswith("worktree ")
    ]


#: The fields of a sample that differ between two takes of the same calls.
TIMING = ("wall_s", "cpu_s", "started_at", "concurrency")


def sample_files(root: Path) -> dict[str, dict[str, Any]]:
    """Every sample file under a store, by path inside it, without its timing fields."""
    out = {}
    for path in sorted((root / "samples").rglob("r*.json")):
        data = orjson.loads(path.read_bytes())
        out[path.relative_to(root).as_posix()] = {k: v for k, v in data.items() if k not in TIMING}
    return out


# -- call orders -----------------------------------------------------------------------------

#: A target call as the order tests compare them: (arm index, case id, repeat).
Call = tuple[int, str, int]


def drawn_order(calls: list[Call], seed: int) -> list[Call]:
    """`calls` in the order `seed` draws for them (`executors.schedule.call_order`)."""
    arms = []
    for arm in range(max(index for index, _, _ in calls) + 1):
        pending = [
            Pending(_order_case(case_id), repeat, f"{arm}/{case_id}/r{repeat}.json", case_id)
            for index, case_id, repeat in calls
            if index == arm
        ]
        arms.append(ArmPending(FunctionTarget(_echo, key=f"{arm:016d}"), pending))
    return [(index, p.case.case_id, p.repeat) for index, p in call_order(arms, seed)]


def _order_case(case_id: str) -> CaseRecord:
    return CaseRecord(
        case_id=case_id, case_key="0" * 16, input=case_id, repeats=1, sample_dir=case_id, scorers=[]
    )


def _echo(question: str, case_id: str, repeat: int) -> str:
    return question
