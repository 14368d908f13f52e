"""The command line documents itself: every command and every flag has help text, and usage
errors exit 3 (never 2, which means "broken")."""

from __future__ import annotations

import argparse

import pytest

from noisefloor.cli.parser import build_parser


def _walk(parser: argparse.ArgumentParser, path: str = "noisefloor"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")


def test_every_flag_has_help_text():
    missing = []
    for path, parser in _walk(build_parser()):
        for action in parser._actions:
            if action.help in (None, "") and not isinstance(action, argparse._SubParsersAction):
                missing.append(f"{path}: {action.dest}")
    assert missing == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "s.yaml", "--bogus"], "error: unrecognized arguments: --bogus"),
        (["check"], "error: check needs a suite file, or --cases FILE.jsonl with --model"),
        (["diff", "--alpha", "2"], "error: argument --alpha: must be between 0 and 1, got 2.0"),
        (["check", "s.yaml", "--jobs", "0"], "error: argument --jobs: must be at least 1, got 0"),
        (
            ["plan", "--repeats", "many"],
            "error: argument --repeats: must be a whole number, got 'many'",
        ),
        (
            ["plan", "--repeats", "1000000"],
            "error: argument --repeats: must be at most 10,000, got 1000000",
        ),
        (
            ["check", "s.yaml", "--max-repeats", "10001"],
            "error: argument --max-repeats: must be at most 10,000, got 10001",
        ),
        (
            ["baseline", "deepen", "s.yaml", "--repeats", "20000"],
            "error: argument --repeats: must be at most 10,000, got 20000",
        ),
        (["nope"], "error: argument COMMAND: invalid choice: 'nope'"),
        (
            ["check", "s.yaml", "--repeat", "5"],
            "error: unrecognized arguments: --repeat 5 (--repeat: did you mean --repeats?)",
        ),
        (
            ["check", "s.yaml", "--json"],
            "error: unrecognized arguments: --json (--json: did you mean --format json?)",
        ),
        (
            ["diff", "--format", "md"],
            "error: argument --format: invalid choice: 'md' (did you mean 'markdown'?)",
        ),
        (
            ["chek", "s.yaml"],
            "error: argument COMMAND: invalid choice: 'chek' (did you mean 'check'?)",
        ),
        (
            ["runs", "--ro", "x"],
            "error: unrecognized arguments: --ro (--ro: did you mean --root?)",
        ),
        (["check", "s.yaml", "-v", "-q"], "error: -v and -q contradict each other"),
        ([], "usage: noisefloor "),
    ],
)
def test_usage_errors_exit_3(cli, args, message):
    """A crash exits 3 too: a usage error is told from one by its message on stderr."""
    result = cli(*args)
    assert result.code == 3
    assert result.err.startswith(message), result.err
    assert "--help" in result.err
    assert "error: internal error" not in result.err and "Traceback" not in result.err


def test_root_works_before_and_after_the_command(cli, tmp_path):
    before = cli("--root", tmp_path / "a", "baseline", "show")
    after = cli("baseline", "show", "--root", tmp_path / "b")
    assert before.code == after.code == 3
    assert str(tmp_path / "a") in before.err and str(tmp_path / "b") in after.err


def test_scorers_and_schema_list_every_scorer(cli):
    from noisefloor.scorers.registry import REGISTRY

    table = cli("scorers").out
    schema = cli("schema").out
    for name in REGISTRY.names():
        assert name in table and name in schema


def test_version(cli, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    assert "noisefloor 0.1.0" in capsys.readouterr().out


def test_an_internal_error_is_one_line_and_exit_3(cli, monkeypatch):
    def boom(args):
        raise RuntimeError("something broke inside")

    monkeypatch.setattr("noisefloor.cli.info.cmd_scorers", boom)
    result = cli("scorers")
    assert result.code == 3
    assert (
        result.err.strip()
        == "error: internal error: RuntimeError: something broke inside (run with --debug for the traceback)"
    )


def test_help_lists_every_exit_code(cli):
    from noisefloor.errors import ExitCode

    text = build_parser().format_help()
    for code in ExitCode:
        assert f"\n  {int(code):<3}" in text, f"exit code {int(code)} missing from --help"
    assert "130" in text and "143" in text


def test_record_shows_label_as_required_and_refuses_without_it(cli, tmp_path):
    record = next(sub for path, sub in _walk(build_parser()) if path == "noisefloor record")
    usage = record.format_usage()
    assert "--label NAME" in usage and "[--label NAME]" not in usage
    result = cli("record", tmp_path / "missing.yaml")
    assert result.code == 3
    assert "--label" in result.err and "missing.yaml" not in result.err


@pytest.mark.parametrize("command", ["check", "diff"])
def test_min_effect_help_says_a_scorers_own_is_in_score_units(command):
    """`--help` says where a number scorer's min_effect goes and what it changes."""
    parsers = dict(_walk(build_parser()))
    out = " ".join(parsers[f"noisefloor {command}"].format_help().split())

    assert "A scorer's own `min_effect` in the suite comes first" in out
    assert "for a number scorer it is in score units" in out
    assert "inconclusive only while its 95% interval reaches that min_effect" in out
    assert "2% of the baseline mean's magnitude" in out


def test_ab_says_in_its_help_what_it_does():
    """Two sentences: where the ref is sampled, in which order, and how it is judged; wrapped
    to the width like every description."""
    parsers = dict(_walk(build_parser()))
    text = parsers["noisefloor ab"].format_help()
    description = " ".join(text.split("\n\n")[1].split())
    assert description.endswith("so drift hits both alike; then judge as check."), description
    assert "temporary git worktree" in description and "interleaved" in description
    assert "--baseline-ref REF" in parsers["noisefloor ab"].format_usage()


#: Modules that `--version` and `--help` must not import: the operations and everything they pull
#: in (settings' dataclasses, pydantic, the store), which start-up pays for when they do.
_NOT_AT_START_UP = (
    "noisefloor.operations.run",
    "noisefloor.store.store",
    "noisefloor.settings",
    "pydantic",
    "yaml",
    "dataclasses",
)


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_only_the_parser(flag):
    """`noisefloor --version` and `--help` in a fresh process load no command and no model."""
    import subprocess
    import sys

    probe = (
        "import sys\nfrom noisefloor.cli.main import main\n"
        f"try:\n    main([{flag!r}])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stderr.split())
    assert "noisefloor.cli.main" in loaded
    assert sorted(loaded.intersection(_NOT_AT_START_UP)) == []
    assert proc.stdout.startswith("noisefloor 0.1.0" if flag == "--version" else "usage:")


@pytest.mark.parametrize(
    ("argv", "path"),
    [
        (["check", "--help"], "noisefloor check"),
        (["--root", "x", "diff", "--help"], "noisefloor diff"),
        (["--root", "diff", "check", "--help"], "noisefloor check"),
        (["--root=diff", "plan", "--help"], "noisefloor plan"),
        (["baseline", "deepen", "--help"], "noisefloor baseline deepen"),
    ],
)
def test_a_commands_help_is_the_whole_parsers(capsys, argv, path):
    """Parsing builds only the command given; its help is the same as the whole parser's."""
    from noisefloor.cli.main import main

    whole = dict(_walk(build_parser()))[path].format_help()
    with pytest.raises(SystemExit):
        main(argv)
    assert capsys.readouterr().out == whole
    assert "--min-effect" in whole or "--repeats" in whole


def test_every_command_names_functions_that_exist():
    from noisefloor.cli.commands import COMMANDS, _function

    for name, command in COMMANDS.items():
        assert callable(_function(command.arguments)), name
        assert callable(_function(command.handler)), name


def test_no_parser_takes_a_flag_from_its_prefix():
    """`--repeat 5` must never mean `--repeats 5`: argparse's abbreviations are off everywhere."""
    for path, parser in _walk(build_parser()):
        assert parser.allow_abbrev is False, path


def test_each_commands_help_starts_with_the_common_options_and_ends_with_examples():
    from noisefloor.cli.help import EXAMPLES

    for path, parser in _walk(build_parser()):
        if path == "noisefloor":
            continue
        text = parser.format_help()
        section = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
        options = [line.split()[0] for line in section.splitlines() if line.startswith("  -")]
        assert options[:3] == ["-h,", "-v,", "-q,"], path
        # --root and --debug come last, after every option of the command's own
        assert text.index("--root DIR") > text.index("-q, --quiet"), path
        examples = text.split("\nexamples:\n", 1)[1].split("\n\nexit codes:\n")
        shown = [
            line.strip() for line in examples[0].splitlines() if line.startswith("  noisefloor")
        ]
        assert shown == [c for c, _ in EXAMPLES[path.removeprefix("noisefloor ")]], path
        assert len(shown) == 2 and text.rstrip().endswith("finished samples are kept"), path


def test_checks_help_leads_with_what_its_users_reach_for():
    """`--repeats` and `--format` before the rule, the design, the store and the harness."""
    text = dict(_walk(build_parser()))["noisefloor check"].format_help()
    first = [text.index(flag) for flag in ("--repeats N", "--format", "--output FILE")]
    later = [text.index(flag) for flag in ("--rule", "--executor", "--lock-timeout", "--root")]
    assert max(first) < min(later)
