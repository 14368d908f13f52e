"""Regenerate the README's screenshot: the quickstart's regression as the HTML report shows it,
in headless Chromium. Run `python -m tests.screenshot [PNG]` from the repository root."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

from noisefloor.cli import main
from tests.browser import screenshot

__all__ = ["quickstart_regression_png"]

REPO = Path(__file__).resolve().parents[1]
PNG = REPO / "docs" / "quickstart-regression.png"


def quickstart_regression_png(png: Path) -> int:
    """The README's regression (the first question edited into one the target cannot answer),
    checked with `--format html` and photographed; returns the check's exit code."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "quickstart"
        shutil.copytree(REPO / "examples" / "quickstart", work)
        suite = work / "suite.yaml"
        root = ["--root", str(Path(scratch) / "store")]
        page = Path(scratch) / "report.html"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main([*root, "check", str(suite)])
            text = suite.read_text(encoding="utf-8")
            edited = text.replace("What is the capital of France?", "What is the capital of Mars?")
            suite.write_text(edited, encoding="utf-8")
            code = main([*root, "check", str(suite), "--format", "html", "--output", str(page)])
        png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, png, width=1000, height=1450)
    return code


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else PNG
    exit_code = quickstart_regression_png(target)
    print(f"wrote {target} (the check exited {exit_code})")
