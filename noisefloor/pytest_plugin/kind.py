"""The `pytest` target kind: a collected test of the running session as a target, its repeats
taken in this process, versioned by the content of the files git tracks (or the ini's globs).

Registered by the session that samples (`session.py`); a suite file never names it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import CodeFingerprint, code_fingerprint
from noisefloor.targets.base import CaseInput, RawSample, VersionedTarget
from noisefloor.targets.kinds import TargetKind, TargetSpec
from noisefloor.targets.source import BuiltTarget, TargetPlace

__all__ = ["PytestFields", "PytestKind", "PytestTarget", "PytestTest", "RepeatRunner"]

#: `run(node_id, case_id, repeat, timeout_s) -> sample`: one repeat of a collected test, here.
RepeatRunner = Callable[[str, str, int, float], RawSample]


class PytestTest(BaseModel):
    """The test a `pytest` target runs, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    node: str
    """The test's node id, as pytest names it (parameters included)."""
    timeout_s: float = Field(gt=0)
    """Seconds a repeat may run before it is stopped (an `error:timeout` repeat)."""
    fingerprint: list[str] | None = None
    """Globs, relative to the rootdir, of the files its version follows; None: git's tracked
    files."""


class PytestFields(TargetSpec):
    """A target of the `pytest` kind: the test of the running session it calls."""

    pytest: PytestTest | None = None


class PytestTarget(VersionedTarget):
    """One collected test: a sample is one repeat of its call phase, taken in this thread
    (pytest's own, where its fixtures and a timeout's alarm belong)."""

    kind = "pytest"

    def __init__(self, run: RepeatRunner, test: PytestTest, key: str, spec: dict[str, Any]):
        super().__init__(key, spec)
        self._run = run
        self._test = test

    def sample_blocking(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """Take repeat `repeat` of the test."""
        return self._run(self._test.node, case.case_id, repeat, self._test.timeout_s)

    async def sample(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """`sample_blocking`: a test's repeats never overlap."""
        return self.sample_blocking(case, repeat, concurrency)

    def kill_all(self) -> None:
        """Nothing to kill: a repeat in flight is stopped by its own `timeout_s`."""

    async def aclose(self) -> None:
        """Nothing to release."""


class PytestKind(TargetKind):
    """The tests of one pytest session, whose rootdir their version is taken in."""

    name = "pytest"
    fields = PytestFields
    choice = "`pytest` (a test of a pytest session)"
    fingerprints_code = True
    cannot_run_beside = (
        "a test runs in the pytest session that collected it: another version of its code "
        "cannot be imported beside it"
    )

    def __init__(self, rootdir: Path, suite_path: Path, run: RepeatRunner) -> None:
        self._rootdir = rootdir
        self._suite_path = suite_path
        self._run = run
        # one session, one version of the code: git is asked once, not once per test
        self._code: dict[tuple[str, ...] | None, CodeFingerprint] = {}

    def selected(self, spec: BaseModel) -> bool:
        """A `target` with `pytest`."""
        return isinstance(spec, PytestFields) and spec.pytest is not None

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The test, versioned by its node id, its timeout and the code of the rootdir."""
        assert isinstance(spec, PytestFields) and spec.pytest is not None
        test = spec.pytest
        if place.suite_path != self._suite_path:
            raise TargetConfigError(
                f"test {test.node} runs in the pytest session that collected it: another "
                "version of its code (a commit checked out elsewhere) cannot be imported beside it",
                where=str(place.suite_path),
                hint="compare two commits with `noisefloor ab` on a command suite that runs pytest",
            )
        code = self._fingerprint(test.fingerprint, place)
        comparable = {"test": test.node}
        key = self.version_key(comparable, {"timeout_s": test.timeout_s}, code.entries)
        target = PytestTarget(self._run, test, key, comparable)
        record = TargetRecord(kind=self.name, key=key, spec=comparable, fingerprint=code.entries)
        return BuiltTarget(target, record, [], code.tracked)

    def _fingerprint(self, globs: list[str] | None, place: TargetPlace) -> CodeFingerprint:
        """The code the tests run: the ini's `noisefloor_fingerprint` globs, or every file git
        tracks around the rootdir (the store and the ini file left out, as a suite's are)."""
        cache = tuple(globs) if globs else None
        if cache not in self._code:
            code = code_fingerprint(
                base_dir=self._rootdir,
                globs=globs,
                argv=[],
                cwd=self._rootdir,
                exclude=place.not_target(),
            )
            if not code.entries:
                raise TargetConfigError(
                    f"{self._rootdir} is not inside a git work tree, so the tests' version cannot "
                    "follow their code",
                    where=str(self._suite_path),
                    hint="run pytest in a git work tree, or list the files the tests' version "
                    "follows under `noisefloor_fingerprint` in the ini file",
                )
            self._code[cache] = code
        return self._code[cache]
