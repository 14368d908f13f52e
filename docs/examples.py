"""The command outputs shown in README.md and on the site's pages, produced by running the
commands. `python -m docs.examples` runs every example and rewrites each block marked
`<!-- output: NAME -->`; `tests/e2e/test_docs_examples.py` fails when a block is stale.

The examples run in a scratch directory: a copy of `examples/quickstart` with its own store, and
copies of the recorded captures. Each command runs through `noisefloor.cli.main.main`, what the console
script runs, in-process (an interpreter per command would double the time), with the scratch
directory as its working directory and an environment without `NOISEFLOOR_*`, `CI` and the like. Run ids carry the time a run was made; those of the runs made
here are replaced by fixed ones (`20260101T000001.000000Z`, ...), in order of appearance, and
the scratch directory's path never appears, so a block changes only when the output does.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

__all__ = ["PAGES", "REGENERATE", "Example", "main", "render_all", "rewrite", "stale_blocks"]

ROOT = Path(__file__).parents[1]
#: The files whose marked blocks are produced here.
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
#: The one command that rewrites every block.
REGENERATE = "python -m docs.examples"

_MARK = re.compile(r"<!-- output: (?P<name>[a-z0-9-]+) -->\n```text\n(?P<body>.*?)```\n", re.S)
_RUN_STAMP = re.compile(r"\d{8}T\d{6}\.\d{6}Z")
#: The start of a progress line (stderr), left out.
_PROGRESS = "sampling: "
#: Variables that change what a command prints or where it writes: never inherited.
_DROP = ("NOISEFLOOR_", "OPENAI_", "GITHUB_", "CI", "COLUMNS", "NO_COLOR", "FORCE_COLOR")


@dataclass
class _Scratch:
    """A scratch directory and the run ids met so far, each with its fixed replacement."""

    path: Path
    stamps: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, normalize: bool = True) -> str:
        """`noisefloor ARGS` in the scratch directory: the command line, stdout, stderr (without
        progress lines) and the exit code."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP)}
        # the width a report takes where stdout is no terminal, as on a CI log
        env["COLUMNS"] = "80"
        status, stdout, stderr = _in_process(list(args), self.path, env)
        # progress lines show how fast this machine was: they depend on the load, so they go
        stderr = "".join(
            line for line in stderr.splitlines(keepends=True) if not line.startswith(_PROGRESS)
        )
        # a report's first line holds its exit code; other outputs get an `exit N` line
        code = f"exit {status}\n"
        tail = "" if f" · exit {status} · " in stdout.partition("\n")[0] else code
        out = stdout + stderr
        text = f"$ noisefloor {' '.join(args)}\n{out}{tail}"
        text = text.replace(str(self.path) + os.sep, "").replace(str(self.path), ".")
        return self._stamped(text) if normalize else text

    def _stamped(self, text: str) -> str:
        def fixed(match: re.Match[str]) -> str:
            stamp = match.group(0)
            if stamp not in self.stamps:
                self.stamps[stamp] = f"20260101T{len(self.stamps) + 1:06d}.000000Z"
            return self.stamps[stamp]

        return _RUN_STAMP.sub(fixed, text)

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.path / name
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def _in_process(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """`noisefloor.cli.main.main(argv)` run in `cwd` with `env` alone: what the console script runs,
    without starting an interpreter per command."""
    from noisefloor.cli.main import main as noisefloor

    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, env, clear=True),
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = noisefloor(argv)
    return code, out.getvalue(), err.getvalue()


@contextmanager
def _scratch() -> Iterator[_Scratch]:
    with tempfile.TemporaryDirectory(prefix="noisefloor-docs-") as tmp:
        yield _Scratch(Path(tmp))


@dataclass(frozen=True)
class Example:
    """A scenario: commands run in order in one scratch directory, each output a named block."""

    name: str
    run: Callable[[_Scratch], dict[str, str]]


_FRANCE = "input: What is the capital of France?"
_MARS = "input: What is the capital of Mars?"


def _quickstart(s: _Scratch) -> dict[str, str]:
    """The quickstart as the README runs it: from the repository root, a store of its own."""
    here = Path("examples", "quickstart")
    shutil.copytree(ROOT / here, s.path / here)
    suite = (here / "suite.yaml").as_posix()
    out = {
        "quickstart-adopt": s.run("check", suite),
        "quickstart-unchanged": s.run("check", suite),
        "scorers": s.run("scorers"),
        "plan": s.run("plan", suite),
    }
    s.edit(suite, _FRANCE, _MARS)
    out["quickstart-mars"] = s.run("check", suite)
    out["quickstart-mars-verbose"] = s.run("check", suite, "-v")
    out["quickstart-explain"] = s.run("explain", "capital-of-france")
    s.edit(suite, _MARS, _FRANCE)
    out["deepen"] = s.run("baseline", "deepen", suite)
    s.edit(suite, _FRANCE, _MARS)
    out["quickstart-mars-deep"] = s.run("check", suite)
    s.edit(suite, "timeout_s:", "timeout:")
    out["suite-error"] = s.run("check", suite)
    return out


def _git(s: _Scratch, *args: str) -> None:
    identity = ("-c", "user.name=docs", "-c", "user.email=docs@example.invalid")
    subprocess.run(["git", *identity, *args], cwd=s.path, check=True, capture_output=True)


def _version(s: _Scratch) -> dict[str, str]:
    shutil.copytree(ROOT / "examples" / "quickstart", s.path, dirs_exist_ok=True)
    (s.path / "README.md").write_text("# A question answerer\n", encoding="utf-8")
    _git(s, "init", "-q")
    _git(s, "add", "README.md", "suite.yaml", "target.py")
    _git(s, "commit", "-q", "-m", "a question answerer")
    s.run("check", "suite.yaml")
    s.edit("README.md", "answerer", "answerer that knows one capital")
    s.edit("target.py", "A tiny", "A small")
    _git(s, "commit", "-q", "-am", "docs")
    return {"version-change": s.run("check", "suite.yaml")}


def _local_llm(s: _Scratch) -> dict[str, str]:
    store = Path("examples", "local-llm", "capture")
    shutil.copytree(ROOT / store, s.path / store)
    return {
        "local-llm-diff": s.run("--root", store.as_posix(), "diff", normalize=False),
        "local-llm-band": s.run(
            "--root", store.as_posix(), "diff", "--rule", "band", normalize=False
        ),
    }


EXAMPLES = (
    Example("quickstart", _quickstart),
    Example("version", _version),
    Example("local-llm", _local_llm),
)


def render_all() -> dict[str, str]:
    """Every named output, produced by running its scenario."""
    blocks: dict[str, str] = {}
    for example in EXAMPLES:
        with _scratch() as scratch:
            blocks.update(example.run(scratch))
    return blocks


def _fill(text: str, blocks: dict[str, str]) -> str:
    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in blocks:
            raise KeyError(f"no example produces the block {name!r}")
        return f"<!-- output: {name} -->\n```text\n{blocks[name]}```\n"

    return _MARK.sub(body, text)


def stale_blocks(blocks: dict[str, str]) -> list[str]:
    """`file: NAME` for each marked block whose text differs from `blocks`."""
    stale = []
    for page in PAGES:
        for match in _MARK.finditer(page.read_text(encoding="utf-8")):
            if blocks.get(match.group("name")) != match.group("body"):
                stale.append(f"{page.relative_to(ROOT)}: {match.group('name')}")
    return stale


def rewrite(blocks: dict[str, str]) -> list[Path]:
    """Write `blocks` into every page that marks them; return the pages that changed."""
    changed = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = _fill(text, blocks)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def main() -> None:
    for page in rewrite(render_all()):
        print(f"rewrote {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
