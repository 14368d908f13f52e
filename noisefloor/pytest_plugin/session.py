"""A pytest session that samples its marked tests: each checked as `noisefloor check` checks a
suite, at its share of the session's false-alarm rate, its verdict reported as the test's
outcome, and the verdicts, the family and the store listed at the session's end.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from noisefloor.errors import BaselineMissing, NoisefloorError
from noisefloor.model.report import Report
from noisefloor.model.verdict import Verdict
from noisefloor.operations.check import check_suite, shown_path
from noisefloor.operations.run import RunOptions, run_suite
from noisefloor.pipeline.doit_runner import SamplesDropped
from noisefloor.pytest_plugin import InconclusiveWarning
from noisefloor.pytest_plugin.cases import MarkedTest, MarkerError, SessionSettings, marked_test
from noisefloor.pytest_plugin.failing import failing_repeat
from noisefloor.pytest_plugin.family import Family, family_of
from noisefloor.pytest_plugin.kind import PytestKind
from noisefloor.pytest_plugin.message import Context
from noisefloor.pytest_plugin.repeat import RAISED, RepeatMisuse, RepeatSkipped, take_repeat
from noisefloor.pytest_plugin.summary import summary_lines
from noisefloor.pytest_plugin.thresholds import Bar, BarVerdict, judge_bar, looks_of
from noisefloor.pytest_plugin.verdict import FAILING, Shown, shown
from noisefloor.settings import RuleName
from noisefloor.settings.resolved import Resolved, resolve
from noisefloor.store.store import Store
from noisefloor.suite.targets import build_target
from noisefloor.targets import kinds
from noisefloor.targets.base import RawSample

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

__all__ = ["SamplingSession"]


def _ini_number(
    config: pytest.Config, name: str, whole: bool, most: float | None = None
) -> float | None:
    text = str(config.getini(name) or "").strip()
    if not text:
        return None
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = 0
    if not value > 0 or (most is not None and value > most):
        within = f" and at most {most:g}" if most is not None else ""
        raise pytest.UsageError(
            f"{config.inipath}: {name} = {text!r}: give a {'whole ' if whole else ''}number "
            f"greater than 0{within}, or remove the line for the default"
        )
    return value


def _store_root(config: pytest.Config) -> Path:
    """NOISEFLOOR_ROOT (relative to the working directory, as for the command line), else the
    ini's `noisefloor_root`, else `.noisefloor`, both relative to the rootdir."""
    env = os.environ.get("NOISEFLOOR_ROOT")
    if env:
        return Path(env).absolute()
    return config.rootpath / (str(config.getini("noisefloor_root") or "").strip() or ".noisefloor")


def _never_passed(report: Report) -> str | None:
    """Why a first session's repeats are no baseline: not one of them passed (pytest's failing
    test, whatever its repeats say)."""
    passed = report.cases[0].scorers[0].candidate
    if passed.k == 0 and passed.n:
        return (
            f"never passes: 0 of {passed.n} repeats passed, so nothing was adopted as its "
            "baseline: fix the test, or mark it xfail"
        )
    return None


class SamplingSession:
    """The plugin of a session run with `--noisefloor`: each marked test's protocol is its check."""

    def __init__(self, config: pytest.Config) -> None:
        rule = config.getoption("noisefloor_rule")
        if rule is not None and rule not in set(RuleName):
            choices = ", ".join(RuleName)
            raise pytest.UsageError(f"--noisefloor-rule {rule!r}: choose one of {choices}")
        alpha = config.getoption("noisefloor_alpha")
        if alpha is not None and not 0 < alpha <= 0.5:
            raise pytest.UsageError(
                f"--noisefloor-alpha {alpha:g}: give the session's false-alarm rate, greater than "
                "0 and at most 0.5 (0.05 is the default)"
            )
        alpha = alpha or _ini_number(config, "noisefloor_alpha", whole=False, most=0.5)
        timeout_s = _ini_number(config, "noisefloor_timeout_s", whole=False)
        depth = _ini_number(config, "noisefloor_baseline_repeats", whole=True)
        suite_path = config.inipath or config.rootpath / "pytest.ini"
        self.shared = SessionSettings(
            suite_path=suite_path,
            timeout_s=timeout_s or 60.0,
            fingerprint=list(config.getini("noisefloor_fingerprint")) or None,
            baseline_repeats=int(depth) if depth is not None else None,
        )
        self.strict = bool(config.getoption("noisefloor_strict"))
        self.ci = bool(os.environ.get("CI")) and not config.getoption("noisefloor_adopt")
        self.flags: dict[str, Any] = {
            "rule": rule,
            "max_calls": config.getoption("noisefloor_max_calls"),
            "fresh": config.getoption("noisefloor_fresh"),
            "root": str(_store_root(config)),
            "jobs": 1,  # a test's repeats run one at a time, in pytest's own thread
        }
        try:
            self.resolved = resolve(self.flags, os.environ)
        except NoisefloorError as exc:  # a variable's value it cannot use (NOISEFLOOR_*)
            raise pytest.UsageError(exc.format_message()) from None
        self.family = Family(tests=0, thresholds=0, alpha=alpha or self.resolved.rule.alpha)
        self.items: dict[str, pytest.Item] = {}
        self._store: Store | None = None
        kinds.register(PytestKind(config.rootpath, suite_path, self._take))

    def _take(self, node_id: str, case_id: str, repeat: int, timeout_s: float) -> RawSample:
        return take_repeat(self.items[node_id], case_id, repeat, timeout_s)

    def store(self) -> Store:
        """The session's store, opened once: the working copy of the remote when one is set."""
        if self._store is None:
            from noisefloor.cli.inputs import open_store

            self._store = open_store(self.resolved.store)
        return self._store

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # every worker of pytest-xdist collects the whole selection: the same family on each
        self.family = family_of(session.items, self.family.alpha)

    def _check(self, item: pytest.Item, marker: pytest.Mark) -> tuple[Shown, str]:
        """Check one marked test against its baseline (adopting one when it has none)."""
        test = marked_test(item.nodeid, marker.args, dict(marker.kwargs), self.shared)
        suite = test.suite
        self.items[item.nodeid] = item
        flags = {**self.flags, "alpha": self.family.share}
        resolved = resolve(flags, os.environ, suite.defaults, target_jobs=1)
        opts = RunOptions(
            repeats=resolved.design.fixed_repeats, jobs=1, fresh=resolved.sampling.fresh
        )
        store = self.store()
        for attempt in range(3):  # a sample read back corrupt was deleted: taken again
            try:
                report = check_suite(
                    store,
                    suite,
                    opts,
                    resolved.rule,
                    design=resolved.design,
                    ci=self.ci,
                    refuse=_never_passed,
                )
                break
            except SamplesDropped:
                if attempt == 2:
                    raise
        adopted_nothing = report.baseline is None and report.cases[0].verdict is Verdict.ADDED
        refused = _never_passed(report) if adopted_nothing else None
        bar = self._bar(test, report, resolved, store)
        ctx = Context(
            names=test.names,
            share=self.family.share,
            alpha=self.family.alpha,
            max_repeats=resolved.design.max_repeats,
            bar=bar,
            refused=refused,
        )
        result = shown(item.nodeid, report, self.strict, ctx)
        if result.failed or result.warned:
            failing = failing_repeat(store, report)
            if failing is not None:
                ctx = dataclasses.replace(ctx, failing=failing)
                result = shown(item.nodeid, report, self.strict, ctx)
        return result, suite.name

    def _bar(
        self, test: MarkedTest, report: Report, resolved: Resolved, store: Store
    ) -> Bar | None:
        """`min_pass_rate=` judged on the repeats the check rests on, and, while that leaves it
        in doubt, at the bar's further looks (repeats taken beside the check's, in runs of their
        own); none taken once the test fails anyway."""
        if test.min_pass_rate is None or report.baseline is None:
            return None
        passed = report.cases[0].scorers[0].candidate
        k, n = passed.k or 0, passed.n or 0
        looks = looks_of(n, resolved.design.max_repeats)
        bar = judge_bar(test.min_pass_rate, k, n, self.family.share, 0, looks)
        if report.cases[0].verdict in FAILING:
            return bar
        built = None
        for look, size in enumerate(looks[1:], start=1):
            if bar.verdict is not BarVerdict.DOUBT:
                break
            built = built or build_target(test.suite, store.root)
            more = run_suite(store, test.suite, RunOptions(repeats=size, jobs=1), built)
            scored = more.bands[test.suite.cases[0].id].scorers[0]
            report.calls += more.run.calls
            bar = judge_bar(test.min_pass_rate, scored.k, scored.n, self.family.share, look, looks)
        return bar

    def _missing_in_ci(self, store: Store) -> str:
        """The refusal of a test with no baseline in CI, in the words of a pytest session."""
        from noisefloor.store.mirrored import MirroredStore

        root = f"{shown_path(store.root)}/"
        where = f"under {root}"
        if isinstance(store, MirroredStore):
            branches = " or ".join(repr(b) for b in store.branches.read)
            where = f"in {store.remote.url} on branch {branches}, nor {where}"
        return (
            "no baseline for this test, and CI is set: adopting one here would pass without "
            f"comparing anything\nnone {where}\nadopt one where you work (`pytest --noisefloor`) "
            f"and commit {root}, whose own .gitignore leaves exactly the baselines to commit (or "
            "share them through a remote, NOISEFLOOR_REMOTE); or pass --noisefloor-adopt to "
            "adopt one here"
        )

    def _report(
        self,
        item: pytest.Item,
        when: str,
        outcome: str,
        longrepr: Any = None,
        started: float = 0.0,
    ) -> None:
        now = time.time()
        report = pytest.TestReport(
            nodeid=item.nodeid,
            location=item.location,
            keywords=dict.fromkeys(item.keywords, 1),
            outcome=outcome,  # type: ignore[arg-type]
            longrepr=longrepr,
            when=when,  # type: ignore[arg-type]
            duration=now - started if started else 0.0,
            start=started or now,
            stop=now,
            user_properties=list(item.user_properties),
        )
        item.ihook.pytest_runtest_logreport(report=report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        marker = item.get_closest_marker("noisefloor")
        if marker is None:
            return None  # an unmarked test runs once, as pytest runs it
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        started = time.time()
        try:
            result, suite = self._check(item, marker)
        except RepeatSkipped as exc:
            if exc.report.when != "setup":
                self._report(item, "setup", "passed")
            item.ihook.pytest_runtest_logreport(report=exc.report)
        except (NoisefloorError, MarkerError, RepeatMisuse) as exc:
            if isinstance(exc, BaselineMissing):
                text = self._missing_in_ci(self.store())
            elif isinstance(exc, RepeatMisuse):
                text = (
                    f"usage error at repeat {exc.repeat}: {exc}; nothing of this test was "
                    "stored or adopted"
                )
            elif isinstance(exc, NoisefloorError):
                text = exc.format_message()
            else:
                text = str(exc)
            self._report(item, "setup", "passed")
            self._report(item, "call", "failed", f"noisefloor: {text}", started)
        else:
            self._report(item, "setup", "passed")
            failed = result.failed
            if result.warned:
                try:
                    item.warn(InconclusiveWarning(result.message))
                except InconclusiveWarning:  # warnings are errors here (-W error)
                    failed = True
            # on the item, so that the teardown's report carries them too: JUnit XML writes
            # the properties of that one
            item.user_properties.extend(result.properties(suite, self.family.tests))
            self._report(
                item,
                "call",
                "failed" if failed else "passed",
                result.message if failed else None,
                started,
            )
        self._teardown(item, nextitem)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    @staticmethod
    def _teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """What the repeats left set up past the test itself (a module's fixtures), torn down as
        far as `nextitem` needs, as pytest's own teardown does; reported only when it fails."""
        state = item.session._setupstate
        call = pytest.CallInfo.from_call(lambda: state.teardown_exact(nextitem), "teardown")
        item.ihook.pytest_runtest_logreport(
            report=item.ihook.pytest_runtest_makereport(item=item, call=call)
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        raised = item.stash.get(RAISED, None)
        if raised is not None and call.excinfo is not None:
            raised[call.when] = call.excinfo.value
        return (yield)

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        lines = summary_lines(terminalreporter.stats, self.family, self.resolved)
        if lines:
            terminalreporter.section("noisefloor")
            for line in lines:
                terminalreporter.write_line(line)
