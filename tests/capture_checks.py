"""What every committed capture of real runs must hold: only the files a store commits, no path
of the machine that recorded it, no secret, and a .gitignore that keeps the runs."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

__all__ = ["committed_files", "gitignore_problems", "leaks"]

#: Files the store derives from the committed ones; a capture's .gitignore names them.
DERIVED = re.compile(
    r"^(doit\.sqlite|dodo\.sqlite|ledger\.sqlite|scores/|bands/|verdicts/|reports/|locks/)"
    r"|\.tmp$"
)
SECRET_LIKE = re.compile(
    r"sk-[A-Za-z0-9_-]{12,}|Bearer\s|\"authorization\"|api[_-]?key|ghp_[A-Za-z0-9]{20,}"
    r"|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY",
    re.IGNORECASE,
)
#: Where home directories lie on the common systems, whatever machine runs the test.
HOMES = ("/home/", "/Users/", "C:\\Users\\")


def _machine_paths() -> tuple[str, ...]:
    """The paths of the machine running the test (the checkout, home, the temporary directory),
    each as a directory prefix, and the usual homes of any machine."""
    here = (Path(__file__).resolve().parents[1], Path.home(), Path(tempfile.gettempdir()))
    return (*{f"{p}/" for p in here if str(p) != "/"}, *HOMES)


def committed_files(capture: Path) -> list[Path]:
    """The capture's files that are committed (derived files, if any lie around, excluded)."""
    files = [p for p in capture.rglob("*") if p.is_file()]
    return [p for p in files if not DERIVED.search(p.relative_to(capture).as_posix())]


def leaks(capture: Path) -> list[str]:
    """Each committed file that holds a machine path or something shaped like a secret."""
    found = []
    needles = _machine_paths()
    for path in committed_files(capture):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(capture)
        found += [f"{rel} holds {needle!r}" for needle in needles if needle in text]
        match = SECRET_LIKE.search(text)
        if match is not None:
            found.append(f"{rel} holds {match.group(0)!r}")
    return found


def gitignore_problems(capture: Path) -> list[str]:
    """What the capture's .gitignore gets wrong: derived files kept, or runs ignored."""
    ignore = (capture / ".gitignore").read_text().splitlines()
    rules = [line for line in ignore if line and not line.startswith("#")]
    problems = [
        f"{rule} not ignored" for rule in ("/scores/", "/ledger.sqlite*") if rule not in rules
    ]
    for kept in ("runs", "samples", "labels", "baselines", "epochs"):
        problems += [f"{rule} ignores {kept}" for rule in rules if kept in rule]
    return problems
