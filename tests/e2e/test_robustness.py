"""End-to-end robustness: killed runs resume, hostile input stays one argument, nothing escapes
the store root, and nothing a target prints crashes the harness."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.builders import answer_case, fake_suite


def cli_process(*args: str | Path, root: Path, **kw: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NOISEFLOOR_ROOT": str(root)}
    return subprocess.Popen(
        [sys.executable, "-m", "noisefloor", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )  # type: ignore[call-overload]


def wait_until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    """Poll `condition` until it holds or `timeout_s` passes (the test then fails on its own)."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def sample_files(root: Path) -> list[Path]:
    return sorted((root / "samples").rglob("r*.json")) if (root / "samples").exists() else []


def test_sigkill_halfway_then_rerun_makes_exactly_cases_x_repeats_calls(project, _isolated_root):
    log = project / "calls.log"
    cases = [answer_case(f"case-{i}") for i in range(3)]
    suite = fake_suite(
        project,
        cases,
        repeats=4,
        env={"NOISEFLOOR_FAKE_LOG_CALLS": str(log), "NOISEFLOOR_FAKE_SLEEP": "0.3"},
    )
    proc = cli_process("run", suite, root=_isolated_root)
    wait_until(lambda: len(sample_files(_isolated_root)) >= 4, timeout_s=60)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    kept = len(sample_files(_isolated_root))
    assert 4 <= kept < 12
    # each sample is indexed as soon as it is written: at most the one being indexed when the
    # kill came is missing from the ledger (`ledger rebuild` would find it)
    with contextlib.closing(sqlite3.connect(_isolated_root / "ledger.sqlite")) as ledger:
        assert kept - 1 <= ledger.execute("SELECT count(*) FROM samples").fetchone()[0] <= kept
    rerun = cli_process("run", suite, root=_isolated_root)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err.decode()
    time.sleep(0.5)  # let an orphaned call from the killed run fail on its closed pipe
    assert len(log.read_text().splitlines()) == 3 * 4
    assert len(sample_files(_isolated_root)) == 12


def test_a_sample_left_empty_by_a_crash_is_taken_again(cli, project, _isolated_root):
    """Samples are renamed into place without an fsync: after the machine goes down, one the
    kernel never flushed reads back empty. That sample, and only it, is taken again."""
    log = project / "calls.log"
    suite = fake_suite(
        project,
        [answer_case("a"), answer_case("b")],
        repeats=3,
        env={"NOISEFLOOR_FAKE_LOG_CALLS": str(log)},
    )
    assert cli("run", suite).code == 0
    files = sample_files(_isolated_root)
    assert len(files) == 6 and len(log.read_text().splitlines()) == 6
    files[2].write_bytes(b"")
    assert cli("run", suite).code == 0
    assert len(log.read_text().splitlines()) == 7
    assert json.loads(files[2].read_bytes())["outcome"] == "ok"


def test_hostile_input_reaches_the_target_as_one_argument(cli, project):
    hostile = ['"; touch pwned; $(touch pwned2)', "-rf --exit-code=1", "{{repeat}} {{case_id}}"]
    cases = [
        {"id": f"h{i}", "input": text, "scorers": ["json_valid"]} for i, text in enumerate(hostile)
    ]
    suite = fake_suite(project, cases, repeats=2, env={"NOISEFLOOR_FAKE_ECHO_ARGV": "1"})
    assert cli("run", suite).code == 0
    assert not (project / "pwned").exists() and not (project / "pwned2").exists()
    shown = (
        cli("show", "--case", "h0").out
        + cli("show", "--case", "h1").out
        + cli("show", "--case", "h2").out
    )
    for text in hostile:
        assert json.dumps({"argv": [text, "--repeat", "0"]}) in shown


@pytest.mark.parametrize(
    "field,value", [("name", "../x"), ("name", "a/b"), ("id", "../x"), ("id", "..")]
)
def test_path_traversal_names_are_rejected(cli, project, field, value, _isolated_root):
    case = answer_case("ok")
    if field == "id":
        case["id"] = value
    suite = fake_suite(project, [case], name=value if field == "name" else "fake")
    result = cli("check", suite)
    assert result.code == 3
    assert "not a safe name" in result.err
    assert not _isolated_root.exists()


def test_nothing_is_written_outside_the_store_root(cli, project, tmp_path):
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    before = {p for p in tmp_path.rglob("*")}
    cli("check", suite)
    cli("check", suite, "--fresh", "--format", "json")
    cli("diff", "--format", "markdown")
    cli("rescore", suite)
    after = {p for p in tmp_path.rglob("*")} - before
    root = tmp_path / "store"
    outside = [
        p for p in after if root not in p.parents and p != root and "__pycache__" not in p.parts
    ]
    assert outside == []


def test_grandchild_sleeping_past_the_timeout_leaves_no_process(cli, project):
    pid_file = project / "pids.txt"
    suite = fake_suite(
        project,
        [answer_case("slow")],
        repeats=2,
        timeout_s=1,
        env={
            "NOISEFLOOR_FAKE_GRANDCHILD_SLEEP": "30",
            "NOISEFLOOR_FAKE_SLEEP": "30",
            "NOISEFLOOR_FAKE_PID_FILE": str(pid_file),
        },
    )
    started = time.monotonic()
    result = cli("check", suite, "--format", "json")
    assert time.monotonic() - started < 20
    assert result.code == 2  # nothing valid came back: broken, not a pass
    assert "error:timeout" in result.out
    pids = [int(p) for p in pid_file.read_text().split()]
    time.sleep(0.2)
    for pid in pids:
        assert not _alive(pid), f"process {pid} survived the timeout"


@pytest.mark.parametrize(
    ("signum", "jobs"), [(signal.SIGINT, "1"), (signal.SIGTERM, "1"), (signal.SIGINT, "2")]
)
def test_interrupting_a_run_kills_the_targets_process_groups(project, _isolated_root, signum, jobs):
    """Ctrl-C reaches only the harness (the target has a process group of its own): the
    harness must kill every group it started, keep the samples it finished, and exit 128 plus
    the signal's number, as shells do (130 for Ctrl-C, 143 for SIGTERM)."""
    pid_file = project / "pids.txt"
    cases = [answer_case(f"case-{i}") for i in range(3)]
    suite = fake_suite(
        project,
        cases,
        repeats=2,
        env={
            "NOISEFLOOR_FAKE_GRANDCHILD_SLEEP": "30",
            "NOISEFLOOR_FAKE_SLEEP": "30",
            "NOISEFLOOR_FAKE_PID_FILE": str(pid_file),
        },
    )
    # a shell starts background jobs with SIGINT ignored, and Python keeps it so: restore it
    restore = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    proc = cli_process("run", suite, "--jobs", jobs, root=_isolated_root, preexec_fn=restore)
    # each call appends its pid and its grandchild's
    wait_until(lambda: pid_file.exists() and len(pid_file.read_text().split()) >= 2 * int(jobs))
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, err.decode()
    assert b"interrupted" in err
    pids = [int(p) for p in pid_file.read_text().split()]
    time.sleep(0.2)
    assert pids and not [pid for pid in pids if _alive(pid)]
    assert sample_files(_isolated_root) == []  # nothing finished: nothing half-written either


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_invalid_utf8_and_huge_output_do_not_crash_the_harness(cli, project):
    suite = fake_suite(
        project, [answer_case("bytes"), answer_case("huge")], repeats=2, output="text", env={}
    )
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][0]["input"] = "bytes"
    suite.write_text(yaml.safe_dump(doc))
    doc["target"]["env"] = {"NOISEFLOOR_FAKE_INVALID_BYTES": "1"}
    suite.write_text(yaml.safe_dump(doc))
    assert cli("run", suite).code == 0
    shown = cli("show", "--case", "bytes").out
    assert "not valid UTF-8" in shown
    doc["target"]["env"] = {"NOISEFLOOR_FAKE_HUGE_MB": "50"}
    suite.write_text(yaml.safe_dump(doc))
    assert cli("run", suite, "--repeats", "1").code == 0
    shown = cli("show", "--case", "huge").out
    assert "truncated: 50000000 bytes produced" in shown


def test_show_prints_stderr(cli, project):
    suite = fake_suite(
        project, [answer_case("a")], repeats=1, env={"NOISEFLOOR_FAKE_STDERR": "a warning line"}
    )
    cli("run", suite)
    shown = cli("show").out
    assert "stderr:" in shown and "a warning line" in shown


def test_a_closed_pipe_is_not_an_error(project, _isolated_root):
    cases = [answer_case(f"c{i}") for i in range(30)]
    suite = fake_suite(project, cases, repeats=2)
    first = cli_process("check", suite, root=_isolated_root)
    first.communicate(timeout=120)
    proc = cli_process("check", suite, root=_isolated_root)
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err


def test_unknown_placeholder_exits_3(cli, project):
    suite = fake_suite(project, [answer_case("a")], extra_argv=["{{inptu}}"])
    result = cli("check", suite)
    assert result.code == 3
    line = suite.read_text(encoding="utf-8").splitlines().index("  - '{{inptu}}'") + 1
    assert f"{suite}:{line}: target.command[5]: unknown placeholder '{{{{inptu}}}}'" in result.err
    assert "did you mean {{input}}?" in result.err


def test_broken_suite_file_exits_3_with_file_and_line(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: ok\ntarget:\n  command: [echo]\n  timeout: 3\ncases: []\n")
    result = cli("check", bad)
    assert result.code == 3
    assert (
        f"{bad}:4: target.timeout: unknown key 'timeout' (did you mean 'timeout_s'?)" in result.err
    )
    assert "pydantic" not in result.err
