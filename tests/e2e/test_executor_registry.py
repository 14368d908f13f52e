"""Executors named by `--executor`: the built-in ones chosen once from the value, and one
registered from outside (a toy that takes the samples last first) running `run` and `check`
through the CLI with the same samples and verdicts as the local executor, in the order each
run's recorded seed draws."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor import executors
from noisefloor.errors import UsageError
from noisefloor.executors import executor_of
from noisefloor.executors.base import ArmPending, SampleHooks
from noisefloor.executors.dask import DaskExecutor
from noisefloor.executors.local import LOCAL
from noisefloor.executors.schedule import call_order
from noisefloor.executors.writer import SampleWriter
from noisefloor.store.store import Store
from noisefloor.targets.base import BlockingTarget, CaseInput
from tests.builders import answer_case, fake_suite, sample_files

#: Fields of a sample that record when and how fast, not what: they differ between any two runs.


@dataclass
class LastFirst:
    """Takes every sample here, one call at a time, the last of the call order first; keeps
    the calls it made, as (case id, repeat), and the seed of each take."""

    made: list[tuple[str, int]] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)

    def take(
        self, store: Store, arms: Sequence[ArmPending], hooks: SampleHooks, jobs: int, seed: int
    ) -> list[int]:
        self.seeds.append(seed)
        calls = [0] * len(arms)
        writer = SampleWriter(store, hooks)
        try:
            for index, item in reversed(call_order(arms, seed)):
                target = arms[index].target
                assert isinstance(target, BlockingTarget)
                hooks.called(item)
                case = CaseInput(case_id=item.case.case_id, input=item.input)
                sample = target.sample_blocking(case, item.repeat, 1)
                self.made.append((item.case.case_id, item.repeat))
                calls[index] += sample.attempts
                writer.add(arms[index], item, sample)
                hooks.sampled(item, sample)
        finally:
            writer.close()
        return calls


@pytest.fixture
def last_first(monkeypatch: pytest.MonkeyPatch) -> LastFirst:
    """The toy executor, named `toy://last-first` for one test only."""
    toy = LastFirst()
    monkeypatch.setattr(executors, "_registry", list(executors._registry))
    executors.register(r"toy://last-first", lambda match: toy)
    return toy


def test_the_value_names_the_executor_once() -> None:
    assert executor_of(None) is LOCAL
    assert executor_of(" local ") is LOCAL
    assert executor_of("dask://10.0.0.5:8786") == DaskExecutor("dask://10.0.0.5:8786")
    assert executor_of("dask://[::1]:8786") == DaskExecutor("dask://[::1]:8786")


@pytest.mark.parametrize("value", ["spark://somewhere", "dask://nohost", "toy://last-first"])
def test_a_value_no_executor_matches_is_refused_with_the_same_message(value: str) -> None:
    with pytest.raises(UsageError) as refused:
        executor_of(value)
    assert refused.value.format_message() == (
        f"--executor {value!r} names no executor\n"
        "hint: give `local` (the default) or a Dask scheduler as dask://HOST:PORT "
        "(e.g. dask://10.0.0.5:8786); the variable NOISEFLOOR_EXECUTOR takes the same values"
    )


def test_a_registered_executor_runs_and_checks_through_the_cli(
    cli: Any,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    last_first: LastFirst,
) -> None:
    cases = [answer_case(f"c{n}") for n in range(3)]
    suite = fake_suite(project, cases, repeats=6)
    outcomes = {}
    for where in ("local", "toy://last-first"):
        root = tmp_path / where.replace(":", "").replace("/", "-")
        monkeypatch.setenv("NOISEFLOOR_ROOT", str(root))
        ran = cli("run", suite, "--set-baseline", "--executor", where, "--format", "json")
        assert ran.code == 0, ran.err
        # the code changes: a new version, whose answers fail every case
        source = (project / "fake_target.py").read_text(encoding="utf-8")
        broken = source.replace('default=_env("answer", "Paris")', 'default=_env("answer", "Rome")')
        (project / "fake_target.py").write_text(broken, encoding="utf-8")
        regressed = cli("check", suite, "--repeats", "6", "--executor", where, "--format", "json")
        (project / "fake_target.py").write_text(source, encoding="utf-8")
        verdicts = {c["case_id"]: c["verdict"] for c in regressed.json()["cases"]}
        outcomes[where] = (regressed.code, verdicts, sample_files(root))

    assert outcomes["local"][:2] == (1, {"c0": "regressed", "c1": "regressed", "c2": "regressed"})
    assert outcomes["toy://last-first"] == outcomes["local"]
    # the run's 18 calls, then the new version's 18, each take with the seed its run records
    runs = [
        orjson.loads(p.read_bytes()) for p in (tmp_path / "toy--last-first").glob("runs/*/*.json")
    ]
    assert sorted(last_first.seeds) == sorted(run["schedule_seed"] for run in runs)
    # each take last first: repeat 5 down to repeat 0, every case once in each
    for take in (last_first.made[:18], last_first.made[18:]):
        assert [repeat for _, repeat in take] == [r for r in reversed(range(6)) for _ in range(3)]
        assert sorted(take) == sorted((f"c{n}", r) for r in range(6) for n in range(3))
    assert len(outcomes["local"][2]) == 2 * 3 * 6


def test_a_pattern_names_an_executor_only_whole(last_first: LastFirst) -> None:
    assert executor_of("toy://last-first") is last_first
    with pytest.raises(UsageError, match=re.escape("names no executor")):
        executor_of("toy://last-first-and-more")
