"""Headless Chromium for the HTML report's tests: open a page from disk, and return the DOM it
built, every console message it logged, and (on request) a screenshot."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

__all__ = ["CHROMIUM", "Page", "needs_chromium", "open_page", "screenshot"]

CHROMIUM = shutil.which("chromium")

#: The tests that open a page; CI installs chromium (.ci/run), so there they always run.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (`apt-get install -y chromium`; .ci/run installs it)",
)

# Chromium logs each console message, whatever its level, as `...:CONSOLE:<line>] "<text>"`
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)")


class _Cases(HTMLParser):
    """The report's case sections in page order, and every element's tag."""

    def __init__(self) -> None:
        super().__init__()
        self.cases: list[tuple[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if tag == "section" and "case" in (found.get("class") or "").split():
            self.cases.append((found.get("data-case") or "", found.get("data-verdict") or ""))


@dataclass
class Page:
    """What the browser made of a page."""

    dom: str
    console: list[str]
    cases: list[tuple[str, str]] = field(default_factory=list)
    """(case id, verdict) of each case section, in page order."""
    tags: list[str] = field(default_factory=list)


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )


def open_page(path: Path) -> Page:
    """Load `path` from disk headless; the DOM after loading, and the console messages."""
    done = _chromium("--dump-dom", path.resolve().as_uri())
    parser = _Cases()
    parser.feed(done.stdout)
    console = [m.group(1) for line in done.stderr.splitlines() if (m := _CONSOLE.search(line))]
    return Page(done.stdout, console, parser.cases, parser.tags)


def screenshot(path: Path, png: Path, width: int = 1000, height: int = 1300) -> None:
    """A PNG of the top of the page, as a browser window of that size shows it."""
    _chromium(
        f"--screenshot={png.resolve()}",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
        path.resolve().as_uri(),
    )
