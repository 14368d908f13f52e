"""Small things a new user meets, each through the real CLI in its own process: what an empty
cases file, a mistyped flag or scorer key, a bare `noisefloor` and a missing matplotlib say,
how `baseline deepen` writes a set of depths, the wilson rule's headline, history's notes, and
what a first check leaves in a git work tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import yaml

from tests.builders import answer_case, commit_all, fake_suite, git, isolate_git
from tests.e2e.test_exit_paths import run_process


def test_an_empty_cases_file_is_named_as_empty(tmp_path, _isolated_root):
    (tmp_path / "cases.jsonl").write_text("# none yet\n", encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump({"name": "s", "target": {"command": ["echo"]}, "cases_file": "cases.jsonl"}),
        encoding="utf-8",
    )
    done = run_process("check", suite, root=_isolated_root)
    assert done.returncode == 3
    assert "cases.jsonl: no cases in the file: add one JSON object per line" in done.stderr
    assert "add `cases:` or `cases_file:`" not in done.stderr


def test_a_mistyped_scorer_key_gets_the_key_meant(project, _isolated_root):
    case = answer_case("alpha")
    case["scorers"] = [{"type": "contains", "needel": "Paris"}]
    done = run_process("check", fake_suite(project, [case]), root=_isolated_root)
    assert done.returncode == 3
    assert "unknown key 'needel' (did you mean 'needle'?)" in done.stderr


def test_an_unknown_flag_points_to_its_command_and_the_flag_meant(project, _isolated_root):
    suite = fake_suite(project, [answer_case("alpha")])
    done = run_process("check", suite, "--repeatz", "3", root=_isolated_root)
    assert done.returncode == 3
    assert "(--repeatz: did you mean --repeats?)" in done.stderr
    assert "hint: `noisefloor check --help` lists the options" in done.stderr
    nested = run_process("baseline", "deepen", suite, "--jbos", "2", root=_isolated_root)
    assert nested.returncode == 3
    assert "(--jbos: did you mean --jobs?)" in nested.stderr
    assert "hint: `noisefloor baseline deepen --help`" in nested.stderr


def test_no_command_prints_the_help_and_an_error_line(_isolated_root):
    done = run_process(root=_isolated_root)
    assert done.returncode == 3
    assert done.stdout == ""
    assert "usage: noisefloor" in done.stderr
    assert "error: no command given" in done.stderr


def test_html_without_matplotlib_names_the_flag_given(tmp_path, _isolated_root, monkeypatch):
    # a matplotlib that cannot be imported, found before the installed one
    (tmp_path / "hidden" / "matplotlib").mkdir(parents=True)
    (tmp_path / "hidden" / "matplotlib" / "__init__.py").write_text("raise ImportError('gone')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "hidden"))
    report = run_process("report", "--html", tmp_path / "r.html", root=_isolated_root)
    assert report.returncode == 3
    assert "error: --html needs matplotlib, which is not installed" in report.stderr
    assert "--format html" not in report.stderr
    diff = run_process("diff", "--format", "html", root=_isolated_root)
    assert "error: --format html needs matplotlib" in diff.stderr


def test_deepen_writes_a_set_of_depths_as_a_range(project, _isolated_root):
    suite = fake_suite(project, [answer_case("a", repeats=2), answer_case("b", repeats=6)])
    # a run adopts each case at its own repeats (a first check would adopt at the design's depth)
    assert run_process("run", suite, "--set-baseline", root=_isolated_root).returncode == 0
    done = run_process("baseline", "deepen", suite, "--repeats", "4", root=_isolated_root)
    assert done.returncode == 0, done.stderr
    assert "2 case(s) at 4 to 6 repeats (held 2 to 6 before), 2 target call(s)" in done.stdout


def test_the_wilson_headline_names_every_scorer_that_decided(project, _isolated_root):
    suite = fake_suite(project, [answer_case("alpha")])
    assert run_process("check", suite, root=_isolated_root).returncode == 0
    assert run_process("run", suite, "--fresh", root=_isolated_root).returncode == 0
    done = run_process("diff", "--rule", "wilson", "--format", "json", root=_isolated_root)
    assert done.returncode == 0, done.stderr
    (case,) = orjson.loads(done.stdout)["cases"]
    assert case["reason"] == "0:json_valid: ok: delta=+0.00; 1:contains: ok: delta=+0.00"


def test_history_says_plainly_what_its_flakiness_counted_once(project, _isolated_root: Path):
    suite = fake_suite(project, [answer_case("alpha")], repeats=3)
    assert run_process("check", suite, root=_isolated_root).returncode == 0
    assert run_process("run", suite, root=_isolated_root).returncode == 0  # the same samples
    done = run_process("history", "alpha", root=_isolated_root)
    assert done.returncode == 0, done.stderr
    assert "(3 samples shared by several runs, each counted once)" in done.stdout


def test_adopting_a_new_suites_baseline_leaves_every_committed_file_alone(
    project, monkeypatch, tmp_path
):
    isolate_git(monkeypatch, tmp_path)
    root = project / ".noisefloor"
    first = fake_suite(project, [answer_case("alpha")], name="first", repeats=2)
    assert run_process("check", first, root=root).returncode == 0
    commit_all(project)
    # a run that is no baseline, then a second suite's first check, which adopts its baseline
    assert run_process("run", first, root=root).returncode == 0
    second = project / "second"
    second.mkdir()
    shutil.copy(project / "fake_target.py", second / "fake_target.py")
    other = fake_suite(second, [answer_case("beta")], name="second", repeats=2)
    assert run_process("check", other, root=root).returncode == 0

    status = git(project, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in status if not line.startswith("??")] == []
    new = sorted(line[3:] for line in status)
    assert ".noisefloor/baselines/second.json" in new
    assert all("/first/" not in path for path in new)  # the run that is no baseline is ignored
