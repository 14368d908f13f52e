"""The order the target's calls go out in, through the real CLI: `ab`'s arms and cases, a check's
adoption and its sequential looks, each in the random order the seed in its run record draws."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.model.records import RunRecord
from noisefloor.store.store import Store
from tests.builders import Call, answer_case, commit_all, drawn_order, fake_suite, isolate_git

#: The fake target's log line, and the candidate arm's: its code marks the calls it answers.
LOG_LINE = 'f"{os.getpid()} {args.repeat} {question}\\n"'
MARKED = 'f"{os.getpid()} {args.repeat} {question} candidate\\n"'
SEED = 2026


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


def _suite(project: Path, log: Path, cases: int, repeats: int) -> Path:
    env = {"NOISEFLOOR_FAKE_LOG_CALLS": str(log)}
    return fake_suite(
        project, [answer_case(f"c{n}") for n in range(cases)], repeats=repeats, env=env
    )


def _edit(project: Path, old: str, new: str) -> None:
    code = project / "fake_target.py"
    text = code.read_text(encoding="utf-8")
    assert text.count(old) == 1
    code.write_text(text.replace(old, new), encoding="utf-8")


def _logged(log: Path) -> list[Call]:
    """The calls in the order the target answered them (one job: the order they went out), arm 0
    the baseline's and 1 the candidate's."""
    calls = []
    for line in log.read_text(encoding="utf-8").splitlines():
        _, repeat, _, case_id, *mark = line.split(" ")
        calls.append((1 if mark == ["candidate"] else 0, case_id, int(repeat)))
    return calls


def _runs(root: Path) -> list[dict[str, Any]]:
    return [orjson.loads(path.read_bytes()) for path in sorted(root.glob("runs/*/*.json"))]


def test_ab_sends_both_arms_and_every_case_in_the_order_its_recorded_seed_draws(
    cli: Any, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, root = tmp_path / "calls.log", project / ".noisefloor"
    suite = _suite(project, log, cases=4, repeats=6)
    commit_all(project)
    _edit(project, LOG_LINE, MARKED)
    monkeypatch.setattr("noisefloor.operations.ab.new_schedule_seed", lambda: SEED)
    result = cli(
        "ab", suite, "--baseline-ref", "HEAD", "--root", root, "--repeats", "6", "--jobs", "1"
    )
    assert result.code == 0, result.err

    calls = _logged(log)
    assert sorted(calls) == sorted(itertools.product((0, 1), ("c0", "c1", "c2", "c3"), range(6)))
    assert calls == drawn_order(calls, SEED)
    # repeat by repeat, and within a repeat neither arm nor any case always first
    assert [repeat for _, _, repeat in calls] == sorted(repeat for _, _, repeat in calls)
    first: dict[tuple[str, int], int] = {}
    for arm, case_id, repeat in calls:
        first.setdefault((case_id, repeat), arm)
    assert 0 < sum(1 for arm in first.values() if arm == 0) < len(first)
    blocks = [[call[:2] for call in block] for _, block in itertools.groupby(calls, lambda c: c[2])]
    assert len({tuple(block) for block in blocks}) == len(blocks)
    assert any(len(list(itertools.groupby(arm for arm, _ in block))) > 2 for block in blocks)
    # both arms' run records keep the seed that drew the order
    assert [run["schedule_seed"] for run in _runs(root)] == [SEED, SEED]


def test_a_checks_adoption_and_each_of_its_looks_go_out_in_their_runs_order(
    cli: Any, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, root = tmp_path / "calls.log", tmp_path / "store"
    monkeypatch.setenv("NOISEFLOOR_ROOT", str(root))
    suite = _suite(project, log, cases=3, repeats=5)
    adopted = cli("check", suite, "--jobs", "1")
    assert adopted.code == 0, adopted.err
    (adoption,) = _runs(root)
    calls = _logged(log)
    assert len(calls) == 3 * 5
    assert calls == drawn_order(calls, adoption["schedule_seed"])

    log.unlink()
    # every third repeat answers off-topic: in doubt at the first look, so looked at again
    _edit(project, '("flake-every", int, 0)', '("flake-every", int, 3)')
    checked = cli("check", suite, "--jobs", "1", "--format", "json")
    assert checked.code in (0, 1), checked.err
    (check,) = [run for run in _runs(root) if run["run_id"] != adoption["run_id"]]
    assert check["sequential"] is not None and len(check["sequential"]["looks"]) > 1
    calls = _logged(log)
    assert len(calls) > 3 * 5
    assert calls == drawn_order(calls, check["schedule_seed"])
    assert check["schedule_seed"] != adoption["schedule_seed"]


def test_a_run_recorded_before_the_order_was_drawn_loads_without_a_seed(
    cli: Any, project: Path, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    suite = _suite(project, tmp_path / "calls.log", cases=1, repeats=2)
    assert cli("run", suite, "--root", root).code == 0
    (path,) = root.glob("runs/*/*.json")
    older = orjson.loads(path.read_bytes())
    del older["schedule_seed"]
    path.write_bytes(orjson.dumps(older))
    run = Store(root).load_run(older["suite"], older["run_id"])
    assert isinstance(run, RunRecord)
    assert run.schedule_seed is None
    shown = cli("show", older["run_id"], "--root", root)
    assert shown.code == 0, shown.err
