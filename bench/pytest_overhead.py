"""The pytest plugin's overhead: one trivial test sampled 1,000 times under `--noisefloor` (a first
session, which adopts a baseline at 1,000 repeats), against pytest running 1,000 parametrized
trivial tests without the plugin, both in fresh processes, measured in the same run.

The sampled session pays what a check pays beyond pytest: a sample file per repeat, scoring and
banding them, the run record and the ledger. Prints medians of both, their ratio, and the same
sampled session again on the unchanged version (every repeat stored: it costs only the check).
Unrelated plugins (the cache, hypothesis's) are off in both.

Usage: python bench/pytest_overhead.py [--rounds 5] [--tests 1000]. Target: at most 2.0x.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, timed  # noqa: E402

PARAMETRIZED = """
import pytest


@pytest.mark.parametrize("i", range({tests}))
def test_trivial(i):
    assert i >= 0
"""

SAMPLED = """
import pytest


@pytest.mark.noisefloor
def test_trivial():
    assert True
"""

_QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def project(directory: Path, tests: int) -> Path:
    """A git repository with both test files and an ini asking for a baseline `tests` deep."""
    (directory / "test_parametrized.py").write_text(PARAMETRIZED.format(tests=tests))
    (directory / "test_sampled.py").write_text(SAMPLED)
    (directory / "pytest.ini").write_text(f"[pytest]\nnoisefloor_baseline_repeats = {tests}\n")
    _git(directory, "init", "-q")
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "tests")
    return directory


def pytest_session(repo: Path, root: Path, *args: str) -> None:
    """One pytest session in `repo`, its store at `root`; it must pass."""
    env = {**os.environ, "NOISEFLOOR_ROOT": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *_QUIET, *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(
            f"pytest {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-2000:]}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=1000)
    args = parser.parse_args(argv)
    plain, sampled, cached = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        project(repo, args.tests)
        for n in range(args.rounds):
            root = Path(tmp) / f"store-{n}"
            plain.append(
                timed(pytest_session, repo, root, "-p", "no:noisefloor", "test_parametrized.py")
            )
            sampled.append(timed(pytest_session, repo, root, "--noisefloor", "test_sampled.py"))
            cached.append(timed(pytest_session, repo, root, "--noisefloor", "test_sampled.py"))
    p, s, c = median(plain), median(sampled), median(cached)
    print(f"{args.tests} trivial tests, {args.rounds} rounds (medians, whole processes)")
    print(f"  pytest, {args.tests} parametrized tests, no plugin: {p:.3f} s")
    print(f"  pytest --noisefloor, one test sampled {args.tests} times (adopting): {s:.3f} s")
    print(f"  the same again, its version unchanged (nothing taken): {c:.3f} s")
    print(f"  ratio: {s / p:.2f}x  (target <= 2.0x)")


if __name__ == "__main__":
    main()
