"""What a person reads, through the real command line: the quickstart's check in a few lines no
wider than the screen, in plain words (the statistics under -v), coloured on a terminal and not
under NO_COLOR; plan, runs and explain no wider than the screen either."""

from __future__ import annotations

import os
import pty
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"

#: Words of the statistics that the default report leaves to -v and `explain`.
JARGON = (
    "alpha",
    "Tarone",
    "Holm",
    "Wilson",
    "Newcombe",
    "futility",
    "family-wise",
    "fixed design",
    "[flaky",
    "[quarantine",
)
#: A scorer named by its index in the suite (`0:json_valid`).
INDEXED = re.compile(r"\b\d+:[a-z_]+")


@pytest.fixture
def mars(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The quickstart adopted (at a shallow baseline, to stay quick), then its first question
    edited into one the target cannot answer."""
    monkeypatch.setenv("COLUMNS", "80")
    work = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, work)
    suite = work / "suite.yaml"
    adopted = cli("check", suite, "--baseline-repeats", "20", "--jobs", "4")
    assert adopted.code == 0, adopted.err
    text = suite.read_text().replace("repeats: 5", "repeats: 5\n  baseline_repeats: 20")
    suite.write_text(text.replace("capital of France?", "capital of Mars?"))
    return suite


def test_a_two_case_check_reads_in_a_few_plain_lines(cli: Any, mars: Path) -> None:
    result = cli("check", mars)

    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == "1 regressed, 1 unchanged · exit 1 · 5 calls"
    assert lines[1].startswith("REGRESSED  capital-of-france  contains")
    assert lines[1].endswith("0 of 5 passed, was 20 of 20")
    # the failing output right under its case: why, then what the target said
    assert lines[2].startswith('    \'Paris\' not found at answer; found "low", expected "high"')
    assert lines[3].startswith("unchanged  refuses-unknown  ")
    failing = 1
    assert len(lines) <= 6 + failing, result.out
    assert max(map(len, lines)) <= 80, result.out
    for word in JARGON:
        assert word not in result.out, word
    assert not INDEXED.search(result.out), result.out


def test_the_statistics_are_one_flag_away(cli: Any, mars: Path) -> None:
    verbose = cli("check", mars, "-v")

    assert verbose.code == 1
    assert "alpha 0.05 family-wise" in verbose.out
    assert "1:contains: 20/20 [" in verbose.out and "p=" in verbose.out
    assert "(repeats 20 vs 5; decided; no control)" in verbose.out
    assert max(map(len, verbose.out.splitlines())) <= 80
    # -q: the outcome and what failed
    quiet = cli("-q", "check", mars)
    regressed = next(x for x in verbose.out.splitlines() if x.startswith("REGRESSED"))
    assert quiet.out.splitlines()[1] == regressed
    assert "refuses-unknown" not in quiet.out


def test_plan_runs_and_explain_fit_eighty_columns(cli: Any, mars: Path) -> None:
    assert cli("check", mars).code == 1
    for args in (("plan", mars), ("runs",), ("explain", "capital-of-france")):
        result = cli(*args)
        assert result.code == 0, (args, result.err)
        assert max(map(len, result.out.splitlines())) <= 80, (args, result.out)


def _on_a_terminal(args: list[str], env: dict[str, str], columns: int = 0) -> bytes:
    """`noisefloor ARGS` with its stdout on a pseudo-terminal (`columns` wide when given), its
    stderr on a pipe: everything it wrote to the terminal."""
    master, slave = pty.openpty()
    if columns:
        import fcntl
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "noisefloor", *args],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's last writer closed it (EIO)
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 1, out
    return out


def test_on_a_terminal_the_verdict_is_coloured_and_no_color_turns_it_off(
    cli: Any, mars: Path
) -> None:
    assert cli("check", mars).code == 1  # the samples are taken: the checks below take none
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"

    coloured = _on_a_terminal(["check", str(mars)], env)
    assert re.search(rb"\x1b\[[0-9;]*mREGRESSED", coloured), coloured

    plain = _on_a_terminal(["check", str(mars)], {**env, "NO_COLOR": "1"})
    assert b"\x1b" not in plain and b"REGRESSED" in plain

    narrow = _on_a_terminal(["check", str(mars)], env, columns=60)
    text = re.sub(r"\x1b\[[0-9;]*m", "", narrow.decode())
    assert max(map(len, text.splitlines())) <= 60, text
    assert "REGRESSED  capital-of-france" in text and "0 of 5 passed, was 20 of 20" in text


def test_force_color_colours_a_pipe(cli: Any, mars: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1;31mREGRESSED" in cli("check", mars).out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in cli("check", mars).out
