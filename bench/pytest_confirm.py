"""What a confirmation look would cost the pytest plugin: a regressed test whose verdict rests on
repeats an earlier session stored (a rerun of the same commit) retaking fresh ones before it
fails, and failing only when those regress too.

A project of 40 marked tests of a randomized function (pass rates 0.4 to 1.0, as the quality
test's), adopted once at the default depth; then one test's rate drops from 0.85 to 0.5 and
SESSIONS commits each take a session (real pytest processes). Each session that fails the test
is followed by what a confirmation would be: fresh repeats of the same commit for that test,
judged at its share of the session's rate (`--noisefloor-fresh --noisefloor-alpha`). Prints
how often a real regression fails its session, how often the confirmation would fail it again
(the rest a rerun would let through), and the repeats each confirmation takes; and how often a
neutral test went red (what a confirmation would clear).

Usage: python bench/pytest_confirm.py [--sessions 30]. No target: reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = 40
CHANGED = 30  # its rate, 0.4 + 0.6 * 30 / 39: about 0.86 before the change
DROPPED = 0.5

RANDOMIZED = """
def draw(rate, rng):
    return rng.random() < rate
"""

MARKED = f"""
import os
import random

import pytest

from randomized import draw

RATES = [0.4 + 0.6 * i / {TESTS - 1} for i in range({TESTS})]
RATES[{CHANGED}] = float(os.environ.get("CHANGED_RATE", RATES[{CHANGED}]))


@pytest.mark.noisefloor
@pytest.mark.parametrize("index", range({TESTS}))
def test_draw(index, noisefloor_repeat):
    rng = random.Random(f"{{os.environ['SALT']}}-{{index}}-{{noisefloor_repeat}}")
    assert draw(RATES[index], rng)
"""

_QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:randomly"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


def session(repo: Path, salt: str, *args: str, **env: str) -> dict[str, dict[str, str]]:
    """One pytest session; per test, its noisefloor properties and whether it failed."""
    xml = repo.parent / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", *_QUIET, "--noisefloor", f"--junitxml={xml}", *args],
        cwd=repo,
        env={**os.environ, "SALT": salt, **env},
        capture_output=True,
        check=False,
    )
    tests = {}
    for case in ET.parse(xml).iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        props["failed"] = "yes" if case.find("failure") is not None else ""
        tests[case.get("name", "")] = props
    return tests


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    args = parser.parse_args(argv)
    changed = f"test_draw[{CHANGED}]"
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "randomized.py").write_text(RANDOMIZED)
        (repo / "test_draws.py").write_text(MARKED)
        (repo / "pytest.ini").write_text("[pytest]\n")
        (repo / ".gitignore").write_text(".noisefloor/\n__pycache__/\n")
        _git(repo, "init", "-q")
        _commit(repo, "tests")
        adopted = session(repo, "adopt")
        share = adopted[changed]["noisefloor_alpha"]
        failed = confirmed = neutral_red = 0
        confirm_calls: list[int] = []
        for n in range(args.sessions):
            (repo / "NOTES.md").write_text(f"session {n}\n")
            _commit(repo, f"session {n}")
            tests = session(repo, f"s{n}", CHANGED_RATE=str(DROPPED))
            neutral_red += any(t["failed"] for name, t in tests.items() if name != changed)
            if not tests[changed]["failed"]:
                continue
            failed += 1
            again = session(
                repo,
                f"confirm{n}",
                "--noisefloor-fresh",
                f"--noisefloor-alpha={share}",
                "-k",
                changed.replace("test_draw[", "").rstrip("]"),
                CHANGED_RATE=str(DROPPED),
            )[changed]
            confirmed += bool(again["failed"])
            confirm_calls.append(int(again["noisefloor_calls"]))
    print(f"{TESTS} marked tests, one dropped from 0.86 to {DROPPED}; {args.sessions} sessions")
    print(f"  the dropped test failed its session: {failed}/{args.sessions}")
    if failed:
        print(
            f"  a fresh confirmation failed it again: {confirmed}/{failed} "
            f"(a rerun would let {failed - confirmed} through)"
        )
        print(
            f"  repeats per confirmation: median {statistics.median(confirm_calls):g}, "
            f"max {max(confirm_calls)}"
        )
    print(f"  sessions with a neutral test red: {neutral_red}/{args.sessions}")


if __name__ == "__main__":
    main()
