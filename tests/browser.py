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

__all__ = ["CHROMIUM", "Layout", "Page", "laid_out", "needs_chromium", "open_page", "screenshot"]

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


@dataclass(frozen=True)
class Layout:
    """How a page lays out in a window: the window's width, the page's scroll width (wider than
    the window: a horizontal scroll), and the widest of the page's header and main blocks."""

    window: int
    scroll: int
    content: int


#: A script that paints, at the page's top left, one stripe per figure of its layout: the figure
#: is the stripe's red * 256 + green, read back from a screenshot (no page of ours has a script).
_PROBE = """<script>addEventListener("load", () => {
  const used = Math.max(...[...document.querySelectorAll("header, main")].map(
    e => e.getBoundingClientRect().width));
  const figures = [innerWidth, document.documentElement.scrollWidth, Math.round(used)];
  const box = document.createElement("div");
  box.style.cssText = "position:fixed;left:0;top:0;z-index:99999";
  for (const v of figures) {
    const s = document.createElement("div");
    s.style.cssText = `width:40px;height:10px;background:rgb(${v >> 8},${v & 255},0)`;
    box.appendChild(s);
  }
  document.body.appendChild(box);
});</script>"""


def _framed(page: Path, width: int) -> Path:
    frame = page.with_name(f"{page.stem}-frame-{width}.html")
    frame.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><iframe src="'
        + page.name
        + f'" style="border:0;display:block;width:{width}px;height:1400px"></iframe></body></html>',
        encoding="utf-8",
    )
    return frame


def laid_out(path: Path, width: int, png: Path) -> Layout:
    """Open `path` in a frame `width` CSS pixels wide (Chromium's headless window is at least 500
    wide, a frame is as wide as asked): photograph it into `png`, and read back how the page
    laid out from a second load with the probe."""
    from PIL import Image

    window = max(width, 500) + 20
    shot = png.with_name(f"{png.stem}-window.png")
    screenshot(_framed(path, width), shot, width=window, height=1400)
    with Image.open(shot) as image:
        image.crop((0, 0, width, 1400)).save(png)
    probe = path.with_name(f"{path.stem}-probe.html")
    probe.write_text(
        path.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8"
    )
    screenshot(_framed(probe, width), shot, width=window, height=1400)
    with Image.open(shot) as image:
        pixels = image.convert("RGB")
        figures = [pixels.getpixel((20, 5 + 10 * i)) for i in range(3)]
    window_width, scroll, content = (red * 256 + green for red, green, _ in figures)
    return Layout(window_width, scroll, content)
