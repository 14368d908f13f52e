"""A pytest session that samples its marked tests: each checked as `noisefloor check` checks a
suite, its verdict reported as the test's outcome, and the verdicts listed at the session's end.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from noisefloor.errors import NoisefloorError
from noisefloor.operations.check import check_suite
from noisefloor.operations.run import RunOptions
from noisefloor.pipeline.doit_runner import SamplesDropped
from noisefloor.pytest_plugin import InconclusiveWarning
from noisefloor.pytest_plugin.cases import MarkerError, SessionSettings, case_suite
from noisefloor.pytest_plugin.kind import PytestKind
from noisefloor.pytest_plugin.repeat import RAISED, RepeatSkipped, take_repeat
from noisefloor.pytest_plugin.verdict import PROPERTY_PREFIX, Shown, shown
from noisefloor.settings import RuleName
from noisefloor.settings.resolved import resolve
from noisefloor.store.store import Store
from noisefloor.targets import kinds
from noisefloor.targets.base import RawSample

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

__all__ = ["SamplingSession"]


def _ini_number(config: pytest.Config, name: str, whole: bool) -> float | None:
    text = str(config.getini(name) or "").strip()
    if not text:
        return None
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise pytest.UsageError(
            f"{config.inipath}: {name} = {text!r}: give a {'whole ' if whole else ''}number "
            "greater than 0, or remove the line for the default"
        )
    return value


def _store_root(config: pytest.Config) -> Path:
    """NOISEFLOOR_ROOT (relative to the working directory, as for the command line), else the
    ini's `noisefloor_root`, else `.noisefloor`, both relative to the rootdir."""
    env = os.environ.get("NOISEFLOOR_ROOT")
    if env:
        return Path(env).absolute()
    return config.rootpath / (str(config.getini("noisefloor_root") or "").strip() or ".noisefloor")


class SamplingSession:
    """The plugin of a session run with `--noisefloor`: each marked test's protocol is its check."""

    def __init__(self, config: pytest.Config) -> None:
        rule = config.getoption("noisefloor_rule")
        if rule is not None and rule not in set(RuleName):
            choices = ", ".join(RuleName)
            raise pytest.UsageError(f"--noisefloor-rule {rule!r}: choose one of {choices}")
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
        self.flags: dict[str, Any] = {
            "rule": rule,
            "max_calls": config.getoption("noisefloor_max_calls"),
            "fresh": config.getoption("noisefloor_fresh"),
            "root": str(_store_root(config)),
            "jobs": 1,  # a test's repeats run one at a time, in pytest's own thread
        }
        self.items: dict[str, pytest.Item] = {}
        self.failing: dict[str, str] = {}
        """The newest failed repeat of each test this session, as `rN: what pytest said`."""
        kinds.register(PytestKind(config.rootpath, suite_path, self._take))

    def _take(self, node_id: str, case_id: str, repeat: int, timeout_s: float) -> RawSample:
        sample = take_repeat(self.items[node_id], case_id, repeat, timeout_s)
        said = orjson.loads(sample.output.text)
        if not said["passed"]:
            self.failing[node_id] = f"r{repeat}: {said['failure']}\n{said.get('report', '')}"
        return sample

    def _check(self, item: pytest.Item, kwargs: dict[str, Any]) -> tuple[Shown, str]:
        """Check one marked test against its baseline (adopting one when it has none)."""
        suite = case_suite(item.nodeid, kwargs, self.shared)
        self.items[item.nodeid] = item
        resolved = resolve(self.flags, os.environ, suite.defaults, target_jobs=1)
        opts = RunOptions(
            repeats=resolved.design.fixed_repeats, jobs=1, fresh=resolved.sampling.fresh
        )
        for attempt in range(3):  # a sample read back corrupt was deleted: taken again
            store = Store(resolved.store.root, resolved.store.lock_timeout_s)
            try:
                report = check_suite(store, suite, opts, resolved.rule, design=resolved.design)
                break
            except SamplesDropped:
                if attempt == 2:
                    raise
        return shown(report, self.strict, self.failing.get(item.nodeid)), suite.name

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
            result, suite = self._check(item, dict(marker.kwargs))
        except RepeatSkipped as exc:
            if exc.report.when != "setup":
                self._report(item, "setup", "passed")
            item.ihook.pytest_runtest_logreport(report=exc.report)
        except (NoisefloorError, MarkerError) as exc:
            text = exc.format_message() if isinstance(exc, NoisefloorError) else str(exc)
            self._report(item, "setup", "passed")
            self._report(item, "call", "failed", f"noisefloor: {text}", started)
        else:
            self._report(item, "setup", "passed")
            failed = result.failed
            if result.warned:
                try:
                    item.warn(InconclusiveWarning(f"{item.nodeid}: {result.message}"))
                except InconclusiveWarning:  # warnings are errors here (-W error)
                    failed = True
            # on the item, so that the teardown's report carries them too: JUnit XML writes
            # the properties of that one
            item.user_properties.extend(result.properties(suite))
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
        rows = []
        for reports in terminalreporter.stats.values():
            for report in reports:
                props = dict(getattr(report, "user_properties", ()))
                if getattr(report, "when", None) == "call" and f"{PROPERTY_PREFIX}verdict" in props:
                    rows.append((report.nodeid, props))
        if not rows:
            return
        terminalreporter.section("noisefloor")
        width = max(len(str(p[f"{PROPERTY_PREFIX}verdict"])) for _, p in rows)
        for node_id, props in sorted(rows):
            verdict = str(props[f"{PROPERTY_PREFIX}verdict"])
            repeats, calls = props[f"{PROPERTY_PREFIX}repeats"], props[f"{PROPERTY_PREFIX}calls"]
            terminalreporter.write_line(
                f"{verdict:>{width}}  {node_id}  {repeats} repeats ({calls} taken now), "
                f"case {props[f'{PROPERTY_PREFIX}suite']}"
            )
