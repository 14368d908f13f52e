"""Regenerate the README's screenshots in headless Chromium: the quickstart's regression as the
HTML report shows it (`python -m tests.screenshot [PNG]`), and the RAG example's committed
capture (`python -m tests.screenshot rag [PNG]`). Run them from the repository root."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

from noisefloor.cli.main import main
from tests.browser import screenshot

__all__ = ["quickstart_regression_png", "rag_capture_png"]

REPO = Path(__file__).resolve().parents[1]
PNG = REPO / "docs" / "quickstart-regression.png"
RAG_PNG = REPO / "docs" / "rag-capture.png"


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


def rag_capture_png(png: Path) -> int:
    """The RAG example's two committed runs compared by `diff --format html` (on a copy of the
    capture, which `diff` writes derived files into) and photographed; returns diff's exit code."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "capture"
        shutil.copytree(REPO / "examples" / "rag" / "capture", root)
        page = Path(scratch) / "report.html"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["--root", str(root), "diff", "--format", "html", "--output", str(page)])
        png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, png, width=1000, height=1450)
    return code


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["rag"]:
        target = Path(args[1]) if len(args) > 1 else RAG_PNG
        exit_code = rag_capture_png(target)
        print(f"wrote {target} (diff exited {exit_code})")
    else:
        target = Path(args[0]) if args else PNG
        exit_code = quickstart_regression_png(target)
        print(f"wrote {target} (the check exited {exit_code})")
