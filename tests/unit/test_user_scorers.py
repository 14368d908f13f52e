"""A user's scorer in-process: what it may return, one thread at a time unless thread-safe,
stopped at its timeout from any thread, and an identity that follows its files."""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from pathlib import Path

import pytest

from noisefloor.errors import SuiteError
from noisefloor.model.records import ScorerUse
from noisefloor.pipeline.banding import build_scorer
from noisefloor.scorers.calls import ScorerTimeout
from noisefloor.scorers.plugins import load_plugins
from noisefloor.scorers.registry import REGISTRY, Registry
from noisefloor.scorers.score import Params, ScoreInput, ScoreResult


def test_a_bool_is_a_binary_result_and_a_number_a_continuous_one() -> None:
    registry = Registry()

    @registry.scorer("short")
    def short(inp: ScoreInput, params: object) -> bool:
        """Passes for short outputs."""
        return len(inp.text) < 3

    @registry.scorer("length", direction="lower_is_better")
    def length(inp: ScoreInput, params: object) -> int:
        """The output's length."""
        return len(inp.text)

    assert registry.build("short")(ScoreInput("ab")) == ScoreResult(1.0, True, "returned True")
    assert registry.build("short")(ScoreInput("abc")) == ScoreResult(0.0, False, "returned False")
    built = registry.build("length")
    assert (built.kind, built.direction) == ("continuous", "lower_is_better")
    assert built(ScoreInput("abcd")) == ScoreResult(4.0, True, "4")


@pytest.mark.parametrize(
    ("direction", "returned", "message"),
    [
        (
            None,
            0.5,
            "returned float 0.5, not a bool or a ScoreResult (a number is for a continuous",
        ),
        (None, "yes", "returned str 'yes', not a bool or a ScoreResult"),
        ("higher_is_better", True, "returned bool True, not a number or a ScoreResult"),
        ("higher_is_better", float("nan"), "returned nan: a continuous value must be finite"),
    ],
    ids=["number-from-binary", "string", "bool-from-continuous", "nan"],
)
def test_anything_else_is_an_error_saying_what_to_return(
    direction: str | None, returned: object, message: str
) -> None:
    registry = Registry()

    @registry.scorer("odd", direction=direction)  # type: ignore[arg-type]
    def odd(inp: ScoreInput, params: object) -> object:
        """Returns what the test gives it."""
        return returned

    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        registry.build("odd")(ScoreInput("x"))


class _At(Params):
    """Parameters of a test scorer."""

    at: int
    """Any number."""


def _concurrency(thread_safe: bool) -> int:
    """The most calls of one scorer inside it at once, over 6 threads calling it."""
    registry = Registry()
    inside = [0, 0]  # now, most
    lock = threading.Lock()

    @registry.scorer("slow", params=_At, thread_safe=thread_safe)
    def slow(inp: ScoreInput, params: object) -> bool:
        """Takes a while."""
        with lock:
            inside[0] += 1
            inside[1] = max(inside)
        time.sleep(0.02)
        with lock:
            inside[0] -= 1
        return True

    # each thread with params of its own: one scorer, whatever its params, one call at a time
    built = [registry.build("slow", {"at": n}) for n in range(6)]
    threads = [threading.Thread(target=b, args=(ScoreInput("x"),)) for b in built]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return inside[1]


def test_a_scorer_is_called_from_one_thread_at_a_time_unless_it_is_thread_safe() -> None:
    assert _concurrency(thread_safe=False) == 1
    assert _concurrency(thread_safe=True) > 1


def test_a_scorer_past_its_timeout_is_stopped_in_any_thread_even_if_it_catches_exceptions() -> None:
    registry = Registry()

    @registry.scorer("stubborn", timeout_s=0.1)
    def stubborn(inp: ScoreInput, params: object) -> bool:
        """Loops, and swallows what it can."""
        while True:
            try:
                sum(range(1000))
            except Exception as exc:  # the scorer's own habit, under test
                print(exc)

    built = registry.build("stubborn")
    raised: list[BaseException] = []

    def call() -> None:
        try:
            built(ScoreInput("x"))
        except ScorerTimeout as exc:
            raised.append(exc)

    started = time.monotonic()
    worker = threading.Thread(target=call)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    assert time.monotonic() - started < 2
    assert "stopped after its timeout_s=0.1s" in str(raised[0])


def test_quick_calls_are_never_stopped_however_long_they_take_together() -> None:
    registry = Registry()

    @registry.scorer("quick", timeout_s=0.05)
    def quick(inp: ScoreInput, params: object) -> bool:
        """Returns at once."""
        return bool(inp.text)

    built = registry.build("quick")
    ends = time.monotonic() + 0.3
    count = 0
    while time.monotonic() < ends:
        assert built(ScoreInput("x")).passed
        count += 1
    assert count > 100


def test_a_plugins_identity_follows_its_file_and_what_it_depends_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(REGISTRY, "_defs", dict(REGISTRY._defs))
    (tmp_path / "words.txt").write_text("alpha\n", encoding="utf-8")
    plugin = tmp_path / "checks.py"
    source = (
        "import noisefloor\n\n\n"
        '@noisefloor.scorer("in_words", depends_on=["words.txt"])\n'
        "def in_words(inp, params):\n"
        '    """Passes when the output is a listed word."""\n'
        "    return inp.text in {'alpha'}\n"
    )
    plugin.write_text(source, encoding="utf-8")

    def identity() -> str:
        """The scorer's identity as scoring builds it, the plugin loaded (again) first."""
        load_plugins(["checks.py"], tmp_path, lambda i: f"suite.yaml: plugins[{i}]", REGISTRY)
        use = ScorerUse(label="0:in_words", name="in_words", params={}, impl_hash="recorded")
        return build_scorer(use).spec.impl_hash

    first = identity()
    assert identity() == first  # loaded once: nothing changed
    plugin.write_text(source + "# a comment elsewhere in the file\n", encoding="utf-8")
    edited = identity()
    assert edited != first
    # a file it depends on counts as its own file does (a fresh definition, as a new process
    # makes: each hashes its files once)
    fresh = dataclasses.replace(REGISTRY.get("in_words")).impl_hash
    assert fresh == edited
    (tmp_path / "words.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    assert dataclasses.replace(REGISTRY.get("in_words")).impl_hash != edited


def test_a_plugin_with_a_syntax_error_is_named_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import noisefloor\n\ndef f(:\n    pass\n", encoding="utf-8")
    with pytest.raises(SuiteError) as raised:
        load_plugins(["bad.py"], tmp_path, lambda i: f"suite.yaml:3: plugins[{i}]", REGISTRY)
    message = raised.value.format_message()
    assert message.startswith("suite.yaml:3: plugins[0]: plugin bad.py failed to import: ")
    assert "bad.py:3: SyntaxError: invalid syntax" in message
    hint = f"hint: fix the plugin (the traceback above is its own); `python {tmp_path / 'bad.py'}`"
    assert hint in message


def test_a_plugin_may_be_a_module_name_and_a_missing_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(REGISTRY, "_defs", dict(REGISTRY._defs))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "team_checks_for_test.py").write_text(
        "import noisefloor\n\n\n"
        '@noisefloor.scorer("team_check")\n'
        "def team_check(inp, params):\n"
        '    """Passes on any output."""\n'
        "    return True\n",
        encoding="utf-8",
    )
    monkeypatch.delitem(sys.modules, "team_checks_for_test", raising=False)
    load_plugins(
        ["team_checks_for_test"], tmp_path, lambda i: f"suite.yaml:2: plugins[{i}]", REGISTRY
    )
    definition = REGISTRY.get("team_check")
    assert definition.origin is not None and definition.origin.plugin == "team_checks_for_test"
    monkeypatch.delitem(sys.modules, "team_checks_for_test")

    with pytest.raises(SuiteError) as raised:
        load_plugins(
            ["no_such_checks_module"], tmp_path, lambda i: f"suite.yaml:2: plugins[{i}]", REGISTRY
        )
    message = raised.value.format_message()
    assert message.startswith("suite.yaml:2: plugins[0]: plugin no_such_checks_module failed to")
    assert (
        "failed to import: no_such_checks_module: ModuleNotFoundError: No module named" in message
    )
    assert "`python -c 'import no_such_checks_module'` imports it outside noisefloor" in message
