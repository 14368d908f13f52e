"""A reader that goes away (`noisefloor check SUITE 2>&1 | head -1`) is not a regression: progress
stops writing, sampling and the verdict go on, and the process exits with the verdict's code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.builders import answer_case, fake_suite
from tests.e2e.test_exit_paths import run_process

REPEATS = 20


def _check_read_by_head(suite: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`check SUITE --fresh ARGS 2>&1 | head -1`: the process's own exit status, the reader's
    one line, and the pipe closed while progress still has lines to write."""
    process = subprocess.Popen(
        [sys.executable, "-m", "noisefloor", "check", str(suite), "--fresh", *args],
        env={**os.environ, "NOISEFLOOR_ROOT": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    process.stdout.close()
    code = process.wait(timeout=120)
    return subprocess.CompletedProcess(process.args, code, line, "")


def _slow(project: Path, **env: str) -> Path:
    # 20 calls of ~0.2 s, one at a time: progress prints a line at each tenth, a second apart
    return fake_suite(
        project,
        [answer_case("alpha")],
        repeats=REPEATS,
        env={"NOISEFLOOR_FAKE_SLEEP": "0.1", **env},
    )


def _newest_calls(root: Path) -> int:
    listed = run_process("runs", "--format", "json", root=root)
    assert listed.returncode == 0, listed.stderr
    return int(orjson.loads(listed.stdout)[0]["calls"])


def test_a_closed_reader_leaves_the_verdict_and_its_exit_code(project, _isolated_root):
    suite = _slow(project)
    assert run_process("check", suite, root=_isolated_root).returncode == 0
    read = _check_read_by_head(suite, _isolated_root)
    assert read.stdout.startswith("sampling: ")  # the reader went while progress had more
    assert read.returncode == 0
    assert _newest_calls(_isolated_root) == REPEATS  # sampling went on to the end


def test_a_broken_target_read_by_head_still_exits_2(project, _isolated_root):
    assert run_process("check", _slow(project), root=_isolated_root).returncode == 0
    broken = _slow(project, NOISEFLOOR_FAKE_EXIT_CODE="1")
    read = _check_read_by_head(broken, _isolated_root, "--repeats", str(REPEATS))
    assert read.returncode == 2
    assert _newest_calls(_isolated_root) == REPEATS
