"""Every hint names flags its command takes: each `noisefloor COMMAND ...` the package can print is
parsed with that command's own parser, and the hints the real CLI prints on the ways a command
commonly fails are checked against the parser of the command that printed them."""

from __future__ import annotations

import argparse
import ast
import re
import shlex
import shutil
from pathlib import Path

import orjson
import pytest

import noisefloor
from noisefloor.cli.parser import build_parser
from tests.builders import FAKE, answer_case, fake_suite
from tests.e2e.test_exit_paths import run_process

PACKAGE = Path(noisefloor.__file__).parent
#: `noisefloor COMMAND ...` between backticks, as hints and notes write a command to run.
COMMAND = re.compile(r"`noisefloor ([a-z][^`]*)`")
FLAG = re.compile(r"(?<![\w`-])(--[a-z][a-z-]*)")


def _texts(tree: ast.AST) -> list[str]:
    """Every string the code can print, an f-string's fields written as `X`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append(
                "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
            )
    return out


def _written_commands() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in _texts(ast.parse(path.read_text(encoding="utf-8"))):
            found += [(path.relative_to(PACKAGE).as_posix(), m) for m in COMMAND.findall(text)]
    return found


def _parser_of(words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The innermost parser `words` name (`baseline deepen`), and the words after them."""
    parser: argparse.ArgumentParser = build_parser(words[0])
    rest = list(words)
    while rest:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or rest[0] not in subs[0].choices:
            break
        parser = subs[0].choices[rest.pop(0)]
    return parser, rest


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


def _wrong_flags(command: list[str], text: str) -> list[str]:
    """The flags in `text` that are not options of `command`'s parser; a `noisefloor ...`
    written in it is checked against that command's parser instead."""
    wrong = []
    for written in COMMAND.findall(text):
        words = shlex.split(written.replace("[", "").replace("]", ""))
        parser, rest = _parser_of(words)
        wrong += [
            f"`noisefloor {written}`: {f}"
            for f in rest
            if f.startswith("--") and f.split("=")[0] not in _options(parser)
        ]
    parser, _ = _parser_of(command)
    bare = COMMAND.sub("", text)
    return wrong + [f for f in FLAG.findall(bare) if f not in _options(parser)]


def test_every_written_command_is_one_its_parser_takes():
    written = _written_commands()
    assert len(written) > 40  # the walk found the package's hints
    wrong = []
    for where, command in written:
        words = shlex.split(command.replace("[", "").replace("]", ""))
        assert words[0] in build_parser()._subparsers._group_actions[0].choices, (where, command)
        parser, rest = _parser_of(words)
        wrong += [
            f"{where}: `noisefloor {command}`: {word}"
            for word in rest
            if word.startswith("--") and word.split("=")[0] not in _options(parser)
        ]
    assert wrong == []


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A store with two runs of a suite and no baseline: its root, the suite, the newest run."""
    project = tmp_path_factory.mktemp("project")
    shutil.copy(FAKE, project / "fake_target.py")
    root = project / "store"
    suite = fake_suite(project, [answer_case("alpha")], repeats=2)
    assert run_process("run", suite, root=root).returncode == 0
    assert run_process("run", suite, "--fresh", root=root).returncode == 0
    listed = run_process("runs", "--format", "json", root=root)
    return root, suite, orjson.loads(listed.stdout)[0]["run_id"]


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--html", "{tmp}/r.html"],
        ["diff"],
        ["explain", "alpha"],
        ["report", "--html", "{tmp}/r.html", "--baseline", "{newest}"],
        ["diff", "--baseline", "{newest}"],
        ["explain", "alpha", "--baseline", "{newest}"],
        ["explain", "alpah"],
        ["show", "nosuchrun"],
        ["history"],
        ["baseline", "show"],
        ["baseline", "set", "nosuchrun"],
        ["compare", "--baseline", "a", "--current", "b"],
        ["check", "{suite}", "--adopt", "--require-baseline"],
        ["check", "--repeatz", "2", "{suite}"],
        ["runs", "nosuite"],
    ],
    ids=lambda args: " ".join(a for a in args if "{" not in a),
)
def test_each_printed_hint_names_flags_of_its_command(args, stored, tmp_path):
    root, suite, newest = stored
    filled = [a.format(tmp=tmp_path, suite=suite, newest=newest) for a in args]
    done = run_process(*filled, root=root)
    assert done.returncode == 3, done.stderr
    hints = [line for line in done.stderr.splitlines() if line.startswith("hint: ")]
    assert hints, done.stderr
    words = [w for w in filled if not w.startswith("-")][:2]
    assert [h for h in hints if _wrong_flags(words, h)] == []
