"""The `inspect` kind through the command line, in process, on real Inspect AI tasks run offline
(`tests/data/inspect/tasks.py`): a look's repeats in one `eval()`, the samples as Inspect logged
them, its logs and data under the store root, every fault a clear line and the right exit code."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.targets import inspect_eval
from tests.builders import inspect_suite

pytest.importorskip("inspect_ai")


@pytest.fixture(autouse=True)
def _inspect_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home of its own: what Inspect would write outside the store root lands here, to be
    found; and the count of `eval()` calls from zero."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    inspect_eval.eval_calls.clear()
    yield home


def test_a_look_of_twenty_samples_is_one_eval_and_keeps_what_inspect_logged(
    cli: Any, tmp_path: Path, _inspect_home: Path
) -> None:
    suite = inspect_suite(tmp_path / "work")
    result = cli("run", suite, "--format", "json")
    assert result.code == 0, result.err
    assert len(inspect_eval.eval_calls) == 1
    (call,) = inspect_eval.eval_calls
    assert (len(call.sample_ids), call.epochs) == (20, 5)

    root = tmp_path / "store"
    samples = sorted((root / "samples" / "coins").rglob("r*.json"))
    assert len(samples) == 100
    sample = orjson.loads(samples[0].read_bytes())
    envelope = sample["envelope"]
    assert sample["kind"] == "inspect" and sample["outcome"] == "ok"
    assert envelope["scores"]["match"]["value"] in ("C", "I")
    assert envelope["usage"] == {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
    assert [m["role"] for m in envelope["messages"]] == ["user", "assistant"]
    assert sample["output"]["text"] in ("heads", "tails")
    # the log and Inspect's own data lie under the store root; nothing under the home
    assert (root / envelope["log"]).is_file()
    assert (root / "inspect" / "data" / "inspect_ai").is_dir()
    assert not any(_inspect_home.rglob("*")), sorted(_inspect_home.rglob("*"))

    # the log Inspect wrote reads back as a run: 20 cases of 5 epochs, the same outcomes
    other = tmp_path / "other"
    imported = cli("--root", other, "import", "--inspect", root / envelope["log"], "--label", "l")
    assert imported.code == 0, imported.err
    assert "20 cases x 5 epochs" in imported.out
    again = cli("--root", other, "import", "--inspect", root / envelope["log"])
    assert "already imported" in again.out

    def outcomes(store: Path) -> dict[tuple[str, int], Any]:
        read = [orjson.loads(p.read_bytes()) for p in (store / "samples").rglob("r*.json")]
        return {(d["case_id"], d["repeat"]): d["envelope"]["scores"] for d in read}

    assert len(outcomes(other)) == 100
    assert outcomes(other) == outcomes(root)


def test_import_refuses_what_is_no_inspect_log(cli: Any, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.eval"
    bogus.write_bytes(b"not a zip")
    result = cli("import", "--inspect", bogus)
    assert result.code == 3 and "not an Inspect log" in result.err
    assert "Traceback" not in result.err
    assert cli("import").code == 3
    assert cli("import", tmp_path, "--inspect", bogus).code == 3


@pytest.mark.parametrize(
    ("task", "extra", "words"),
    [
        ("tasks.py@faulty", {"args": {"mode": "task"}}, "the task could not be made"),
        ("tasks.py@faulty", {"args": {"mode": "all"}}, "every sample of the Inspect task raised"),
        ("tasks.py@faulty", {"args": {"mode": "silent"}}, "gave no sample a score"),
        ("tasks.py@coins", {"samples": ["c01", "nope"]}, "has no sample 'nope'"),
        ("tasks.py@coins", {"model": "nosuch/model"}, "not recognized"),
        ("tasks.py@nosuch", {}, "has no task 'nosuch'"),
        ("tasks.py@coins", {"generate": {"temperature": "hot"}}, "target.inspect.generate"),
    ],
    ids=[
        "task-raises",
        "every-sample-raises",
        "scorer-returns-none",
        "unknown-sample",
        "refused-model",
        "unknown-task",
        "bad-generate",
    ],
)
def test_a_fault_is_one_line_exit_3_and_no_baseline(
    cli: Any, tmp_path: Path, task: str, extra: dict[str, Any], words: str
) -> None:
    suite = inspect_suite(tmp_path / "work", task, **extra)
    result = cli("check", suite, "--format", "json")
    assert result.code == 3, result.err
    assert words in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "store" / "baselines" / "coins.json").exists()


def test_a_sample_that_raises_is_a_failed_repeat_of_its_case(cli: Any, tmp_path: Path) -> None:
    suite = inspect_suite(tmp_path / "work", "tasks.py@faulty", args={"mode": "one"})
    result = cli("check", suite, "--format", "json")
    assert result.code == 2, result.err  # broken: not adopted as a baseline
    assert not (tmp_path / "store" / "baselines" / "coins.json").exists()
    cases = {c["case_id"]: c for c in result.json()["cases"]}
    assert cases["f1"]["verdict"] == "broken"
    broken = cases["f1"]["scorers"][0]["candidate"]
    assert broken["target_errors"] == broken["n"] and broken["k"] == 0
    shown = cli("show", "--case", "f1")
    assert "the sample raised RuntimeError('the solver broke')" in shown.out


def test_without_the_extra_it_names_the_extra(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = inspect_suite(tmp_path / "work")
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # what an environment without it sees
    result = cli("check", suite)
    assert result.code == 3
    assert "pip install 'noisefloor[inspect]'" in result.err
