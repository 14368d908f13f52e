"""End-to-end through the real CLI: exit codes, adoption, and target calls counted by a target
that logs each one (the cache contract: a sample is taken once per target version and input)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.builders import answer_case, fake_suite

CASES = [answer_case("alpha"), answer_case("beta")]
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
DEAD = {"NOISEFLOOR_FAKE_EXIT_CODE": "3"}


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def logged_suite(project: Path, **kw: object) -> tuple[Path, Path]:
    log = project / "calls.log"
    env = {"NOISEFLOOR_FAKE_LOG_CALLS": str(log), **kw.pop("env", {})}  # type: ignore[dict-item]
    return fake_suite(project, kw.pop("cases", CASES), env=env, **kw), log  # type: ignore[arg-type]


def test_first_check_adopts_then_second_is_unchanged_with_numbers(cli, project):
    suite, log = logged_suite(project)
    first = cli("check", suite, "--format", "json")
    assert first.code == 0
    report = first.json()
    assert report["adopted"] is True
    assert report["counts"] == {"added": 2}
    # said once on stderr, where a report on stdout leaves it visible
    assert first.err.count("adopted") == 1
    second = cli("check", suite)
    assert second.code == 0
    assert second.out.startswith("2 unchanged · exit 0 · 0 calls\n")
    assert "unchanged  alpha  the baseline's own version: the same 5 repeats" in second.out
    # the statistics behind it, one flag away
    verbose = cli("check", suite, "-v").out
    assert "5/5" in verbose and "p=1" in verbose
    assert calls(log) == 2 * 5


def test_json_report_keeps_the_contract_fields(cli, project):
    suite, _ = logged_suite(project)
    cli("check", suite)
    report = cli("check", suite, "--format", "json").json()
    for key in (
        "suite",
        "rule",
        "baseline",
        "candidate",
        "exit_code",
        "counts",
        "cases",
        "warnings",
    ):
        assert key in report
    scorer = report["cases"][0]["scorers"][0]
    for key in ("key", "verdict", "reason", "baseline", "candidate", "evidence"):
        assert key in scorer
    assert report["rule"] == "exact"


def test_a_case_that_starts_failing_exits_1(cli, project):
    suite, _ = logged_suite(project)
    assert cli("check", suite).code == 0
    cases = [answer_case("alpha"), answer_case("beta", needle="Paris")]
    cases[1]["input"] = "question beta"
    # the code changes: every answer becomes wrong for beta only
    suite, _ = logged_suite(
        project,
        cases=cases,
        env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"},
    )
    suite_doc = yaml.safe_load(suite.read_text())
    suite_doc["cases"][0]["scorers"] = [
        "json_valid",
        {"type": "contains", "needle": "o", "path": "answer"},
    ]
    suite.write_text(yaml.safe_dump(suite_doc))
    result = cli("check", suite)
    assert result.code == 1, result.out
    assert "REGRESSED  beta" in result.out


def test_a_target_that_stops_producing_output_exits_2(cli, project):
    suite, _ = logged_suite(project)
    assert cli("check", suite).code == 0
    suite, _ = logged_suite(project, env={"NOISEFLOOR_FAKE_NO_OUTPUT": "1"})
    result = cli("check", suite, "--format", "json")
    assert result.code == 2
    report = result.json()
    assert report["counts"] == {"broken": 2}
    assert "error:parse" in report["cases"][0]["reason"]


def test_an_always_broken_target_is_never_a_pass_by_absence(cli, project):
    suite, _ = logged_suite(project, env=DEAD)
    assert cli("check", suite).code == 2  # not adopted: the next check is a first check again
    assert cli("check", suite).code == 2


def test_a_broken_first_check_is_not_adopted(cli, project):
    suite, _ = logged_suite(project, env=DEAD)
    first = cli("check", suite, "--format", "json")
    assert first.code == 2
    report = first.json()
    assert (report["adopted"], report["baseline"]) == (False, None)
    assert report["counts"] == {"broken": 2}
    assert "not adopted as the baseline: 2 cases broken (alpha, beta)" in first.err
    assert "adopt deliberately with --set-baseline" in first.err
    assert "not adopted as the baseline" in " ".join(cli("check", suite).out.split())
    assert cli("baseline", "show").code == 3  # still no baseline
    suite, _ = logged_suite(project)  # the target is fixed: its first good run is adopted
    fixed = cli("check", suite, "--format", "json")
    assert fixed.code == 0
    assert fixed.json()["adopted"] is True
    assert fixed.json()["baseline"] == fixed.json()["candidate"]


def test_a_broken_baseline_adopted_deliberately(cli, project):
    suite, _ = logged_suite(project, env=DEAD)
    first = cli("check", suite, "--set-baseline", "--format", "json")
    assert first.code == 2  # adopted, and still reported as broken
    assert first.json()["adopted"] is True
    baseline = first.json()["baseline"]
    suite, _ = logged_suite(project)  # fixed: compared with the broken baseline
    fixed = cli("check", suite, "--format", "json")
    assert fixed.code == 0
    report = fixed.json()
    assert report["counts"] == {"fixed": 2}
    reason = report["cases"][0]["reason"]
    assert "the baseline never produced a valid result (error:exit x5)" in reason
    warning = next(w for w in report["warnings"] if "where the baseline had none" in w)
    assert f"noisefloor baseline set {report['candidate']}" in warning
    # until the baseline moves, a relapse compares two dead sides: not broken, never silent
    suite, _ = logged_suite(project, env=DEAD)
    relapse = cli("check", suite)
    assert relapse.code == 0
    assert "no valid result on either side" in relapse.out
    assert "warning: 2 case(s) produced no valid result on either side" in relapse.out
    assert cli("baseline", "show").out.split()[-3] == baseline


def test_both_sides_without_a_valid_result_are_unchanged_with_a_warning(cli, project):
    suite, _ = logged_suite(project, env={"NOISEFLOOR_FAKE_NO_OUTPUT": "1"})
    assert cli("run", suite, "--set-baseline").code == 0
    suite, _ = logged_suite(project, env=DEAD)
    result = cli("check", suite, "--strict", "--format", "json")
    assert result.code == 0, result.out
    report = result.json()
    assert report["counts"] == {"unchanged": 2}
    assert report["cases"][0]["reason"] == (
        "no valid result on either side: the target failed in the baseline (error:parse x5) "
        "and in the candidate (error:exit x5)"
    )
    assert any("no valid result on either side (alpha, beta)" in w for w in report["warnings"])
    for rule in ("exact", "band", "wilson"):
        diffed = cli("diff", "--rule", rule, "--strict", "--format", "json")
        assert diffed.code == 0, (rule, diffed.out)
        assert diffed.json()["counts"] == {"unchanged": 2}, rule
        assert "failed in the baseline (error:parse x5)" in diffed.json()["cases"][1]["reason"]


def test_an_edited_input_is_compared_by_case_id(cli, tmp_path):
    """The quickstart with its prompt edited into one the target cannot answer."""
    work = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, work)
    suite = work / "suite.yaml"
    assert cli("check", suite).code == 0
    text = suite.read_text()
    assert "What is the capital of France?" in text
    suite.write_text(text.replace("What is the capital of France?", "What is the capital of Mars?"))
    result = cli("check", suite)
    assert result.code == 1, result.out
    line = next(line for line in result.out.splitlines() if "capital-of-france" in line)
    assert line.split()[0] == "REGRESSED"
    warned = " ".join(result.out.split())
    assert "warning: input changed since the baseline for 1 case(s) (capital-of-france)" in warned
    report = cli("diff", "--format", "json").json()
    case = next(c for c in report["cases"] if c["case_id"] == "capital-of-france")
    assert case["verdict"] == "regressed"
    changed = case["input_changed"]
    assert len({changed["baseline"], changed["candidate"]}) == 2
    assert report["runs"]["baseline"]["run_id"] == report["baseline"]
    other = next(c for c in report["cases"] if c["case_id"] == "refuses-unknown")
    assert "input_changed" not in other and "input changed" not in other["reason"]
    assert any("input changed" in w for w in report["warnings"])


def test_record_edit_the_prompt_record_compare(cli, tmp_path):
    """The quarantine-lane workflow joins the two labels by case id."""
    work = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, work)
    suite = work / "suite.yaml"
    assert cli("record", suite, "--label", "before").code == 0
    text = suite.read_text()
    suite.write_text(text.replace("What is the capital of France?", "What is the capital of Mars?"))
    assert cli("record", suite, "--label", "after").code == 0
    result = cli("compare", "--baseline", "before", "--current", "after", "--format", "json")
    assert result.code == 1, result.out
    case = next(c for c in result.json()["cases"] if c["case_id"] == "capital-of-france")
    assert case["verdict"] == "regressed"
    assert case["reason"].startswith("input changed since the baseline; ")


def test_an_edited_scorer_is_compared_and_says_so(cli, project):
    suite, _ = logged_suite(project)
    cli("check", suite)
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][1]["scorers"][1]["needle"] = "Lyon"
    suite.write_text(yaml.safe_dump(doc))
    report = cli("check", suite, "--format", "json").json()
    beta = next(c for c in report["cases"] if c["case_id"] == "beta")
    assert beta["verdict"] == "unchanged"  # both sides scored with the new needle: 0/5 -> 0/5
    edited = beta["scorers"][1]
    assert edited["reason"].endswith(
        "; scorer redefined since the baseline: baseline samples re-scored"
    )
    redefined = edited["evidence"]["scorer_redefined"]
    assert redefined["baseline"]["params"]["needle"] == "Paris"
    assert redefined["candidate"]["params"]["needle"] == "Lyon"
    untouched = [s for c in report["cases"] for s in c["scorers"] if s is not edited]
    assert all("scorer_redefined" not in s["evidence"] for s in untouched)
    out = cli("diff", "-v").out  # the statistics say it of the scorer
    out = " ".join(out.split())
    assert "1:contains: 0/5 [0, 0.434] -> 0/5 [0, 0.434]" in out
    assert "scorer redefined since the baseline: baseline samples re-scored" in out


def test_ci_without_a_baseline_exits_3_unless_adopt(cli, project, monkeypatch):
    suite, log = logged_suite(project)
    monkeypatch.setenv("CI", "true")
    refused = cli("check", suite)
    assert refused.code == 3
    assert f"{suite}: no baseline for suite 'fake'" in refused.err
    for words in ("CI is set", "noisefloor check SUITE --adopt", "--set-baseline", "commit"):
        assert words in refused.err, words
    assert calls(log) == 0
    assert cli("check", suite, "--require-baseline").code == 3  # the flag still works in CI
    adopted = cli("check", suite, "--adopt", "--format", "json")
    assert adopted.code == 0
    assert adopted.json()["adopted"] is True
    assert cli("check", suite).code == 0  # with a baseline, CI compares as anywhere else
    assert calls(log) == 10


def test_ci_adopts_a_run_set_as_the_baseline_deliberately(cli, project, monkeypatch):
    suite, _ = logged_suite(project)
    monkeypatch.setenv("CI", "true")
    result = cli("check", suite, "--set-baseline", "--format", "json")
    assert result.code == 0
    assert result.json()["adopted"] is True


@pytest.mark.parametrize("value", ["", None])
def test_without_ci_the_first_check_adopts(cli, project, monkeypatch, value):
    suite, _ = logged_suite(project)
    if value is not None:
        monkeypatch.setenv("CI", value)
    assert cli("check", suite, "--format", "json").json()["adopted"] is True


def test_adopt_and_require_baseline_contradict(cli, project):
    suite, log = logged_suite(project)
    result = cli("check", suite, "--adopt", "--require-baseline")
    assert result.code == 3
    assert "--adopt and --require-baseline" in result.err
    assert calls(log) == 0


def test_partial_crashes_are_a_verdict_not_a_warning(cli, project):
    # Half the repeats crash. At 10 repeats that is not significant once alpha is shared by
    # two cases, two scorers and the error-rate test (p=0.016 > 0.0125: inconclusive, which
    # --strict fails); at 12 repeats it is (p=0.0069): broken.
    suite, _ = logged_suite(project, repeats=12)
    assert cli("check", suite).code == 0
    crashing = {"NOISEFLOOR_FAKE_FAIL_EVERY": "2"}
    suite, _ = logged_suite(project, repeats=12, env=crashing)
    result = cli("check", suite, "--repeats", "12", "--format", "json")  # a fixed design
    assert result.code == 2
    assert "valid results 12/12 -> 6/12" in result.json()["cases"][0]["reason"]
    assert cli("diff", "--strict").code == 2


def test_second_check_of_unchanged_target_makes_no_calls(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    cli("check", suite)
    cli("check", suite)
    assert calls(log) == 10


def test_scorer_edit_rescoring_makes_no_calls(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][0]["scorers"].append({"type": "contains", "needle": "nowhere"})
    suite.write_text(yaml.safe_dump(doc))
    result = cli("check", suite, "--format", "json")
    assert calls(log) == 10
    assert result.json()["work"]["executed"]["score"] >= 1
    alpha = next(c for c in result.json()["cases"] if c["case_id"] == "alpha")
    assert alpha["verdict"] == "unchanged"  # both sides re-scored with the new scorer: 0/5 -> 0/5


def test_scorer_edit_rescores_only_the_edited_case(cli, project):
    suite, _ = logged_suite(project)
    cli("check", suite)
    cli("check", suite)
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][1]["scorers"][1]["needle"] = "Par"
    suite.write_text(yaml.safe_dump(doc))
    report = cli("check", suite, "--format", "json").json()
    assert report["work"]["executed"]["score"] == 1  # one scorer of one case, one sample set


def half_broken(cli, project: Path) -> tuple[Path, Path]:
    """A one-case suite at 10 repeats whose baseline passes 10/10, then a new version of the
    target that answers off-topic on every other repeat (5/10: a significant drop of 0.5)."""
    suite, log = logged_suite(project, cases=[answer_case("alpha")], repeats=10)
    cli("check", suite)
    code = project / "fake_target.py"
    code.write_text(code.read_text().replace('("flake-every", int, 0)', '("flake-every", int, 2)'))
    return suite, log


def test_editing_a_scorer_threshold_reruns_verdicts_only(cli, project):
    """A gate threshold tunes the verdict, not the scores: editing it scores nothing again."""
    suite, log = half_broken(cli, project)
    first = cli("check", suite, "--repeats", "10", "--format", "json")  # a fixed design
    assert (first.code, first.json()["counts"]) == (1, {"regressed": 1})  # 10/10 -> 5/10
    assert calls(log) == 20
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][0]["scorers"][1]["min_effect"] = 0.6
    suite.write_text(yaml.safe_dump(doc))

    second = cli("check", suite, "--repeats", "10", "--format", "json")

    report = second.json()
    assert second.code == 0
    assert report["counts"] == {"inconclusive": 1}  # a drop of 0.5, below the 0.6 now asked
    assert report["cases"][0]["scorers"][1]["evidence"]["min_effect"] == 0.6
    assert calls(log) == 20
    executed = report["work"]["executed"]
    assert executed["verdict"] == 1
    assert not {"sample", "score", "band"} & set(executed), executed


def test_min_effect_from_the_flag_over_the_suite_defaults_over_the_rule(cli, project):
    suite, _ = half_broken(cli, project)
    assert cli("check", suite).code == 1  # the rule's 0.10
    doc = yaml.safe_load(suite.read_text())
    doc["defaults"]["min_effect"] = 0.6
    suite.write_text(yaml.safe_dump(doc))
    report = cli("check", suite, "--format", "json").json()
    assert (report["counts"], report["settings"]["min_effect"]) == ({"inconclusive": 1}, 0.6)
    report = cli("check", suite, "--min-effect", "0.1", "--format", "json").json()
    assert (report["counts"], report["settings"]["min_effect"]) == ({"regressed": 1}, 0.1)


def test_raising_repeats_runs_only_the_new_repeats(cli, project):
    suite, log = logged_suite(project, repeats=3)
    cli("check", suite)
    assert calls(log) == 6
    cli("check", suite, "--repeats", "5")
    assert calls(log) == 6 + 2 * 2


def test_a_code_change_takes_a_full_new_set(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    with (project / "fake_target.py").open("a") as fh:
        fh.write("\n# a change to the code under test\n")
    assert cli("check", suite).code == 0
    assert calls(log) == 20


def test_fresh_forces_new_samples(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    cli("check", suite, "--fresh")
    assert calls(log) == 20


def test_missing_baseline_with_require_baseline_exits_3(cli, project):
    suite, log = logged_suite(project)
    result = cli("check", suite, "--require-baseline")
    assert result.code == 3
    assert "no baseline" in result.err
    assert calls(log) == 0


def test_target_spec_change_is_refused_before_any_call(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    doc = yaml.safe_load(suite.read_text())
    doc["target"]["command"].append("--confidence=high")
    suite.write_text(yaml.safe_dump(doc))
    result = cli("check", suite)
    assert result.code == 3
    assert "target spec changed" in result.err
    assert calls(log) == 10
    assert cli("check", suite, "--allow-target-change").code == 0


def test_repeats_1_cannot_pass_silently(cli, project):
    suite, _ = logged_suite(project)
    result = cli("check", suite, "--repeats", "1")
    assert result.code == 3
    assert "at least 2 repeats" in result.err


def test_output_file_gets_the_requested_format(cli, project, tmp_path):
    suite, _ = logged_suite(project)
    cli("check", suite)
    out = tmp_path / "report.md"
    result = cli("check", suite, "--format", "markdown", "--output", out)
    assert result.code == 0
    assert out.read_text().startswith("### noisefloor")
    assert "2 unchanged" in result.out


def test_diff_and_rescore_never_call_the_target(cli, project):
    suite, log = logged_suite(project)
    cli("check", suite)
    cli("check", suite, "--fresh")
    before = calls(log)
    assert cli("diff").code == 0
    assert cli("rescore", suite).code == 0
    assert calls(log) == before


def test_every_format_renders_every_rule(cli, project):
    suite, _ = logged_suite(project)
    cli("check", suite)
    cli("run", suite)
    for fmt in ("terminal", "json", "markdown", "junit"):
        for rule in ("exact", "band", "wilson"):
            result = cli("diff", "--rule", rule, "--format", fmt)
            assert result.code == 0, (fmt, rule, result.err)
            assert "alpha" in result.out or fmt != "terminal" or rule != "exact"
            assert "beta" in result.out


def test_dodo_lists_the_gate_and_the_pipeline():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-m", "doit", "list", "--all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "check:quickstart" in out
    # one sample task per case-repeat (the suite takes 5 repeats)
    samples = [line.split()[0] for line in out.splitlines() if "capital-of-france@" in line]
    samples = [name for name in samples if name.startswith("pipeline:sample:")]
    assert [name.rsplit(":", 1)[1] for name in samples] == [f"r{i}" for i in range(5)]
    assert "pipeline:band:gate-quickstart:" in out


def test_rescore_names_a_run_by_id_prefix_or_label(cli, project):
    suite, log = logged_suite(project)
    labelled = cli("run", suite, "--label", "first", "--format", "json").json()["run"]["run_id"]
    latest = cli("run", suite, "--format", "json").json()["run"]["run_id"]
    for ref, expected in ((latest, latest), (latest[:22], latest), ("first", labelled)):
        result = cli("rescore", suite, ref, "--format", "json")
        assert result.code == 0, result.err
        assert result.json()["run"]["rescored_from"] == expected
    assert calls(log) == 10
    assert cli("rescore", suite, "nope").code == 3


def test_diff_and_compare_report_zero_target_calls(cli, project):
    suite, log = logged_suite(project)
    cli("record", suite, "--label", "before")
    cli("record", suite, "--label", "after", "--fresh")
    cli("baseline", "set", "before")
    assert calls(log) == 20
    for args in (("diff",), ("compare", "--baseline", "before", "--current", "after")):
        result = cli(*args)
        assert result.out.splitlines()[0].endswith(" · 0 calls"), result.err
        text = " ".join(cli(*args, "-v").out.split())
        assert "0 target calls" in text and "calls made" not in text
        assert "runs' own calls: baseline 10, candidate 10" in text
        assert cli(*args, "--format", "json").json()["calls"] == 0
        assert "0 target calls" in cli(*args, "--format", "markdown").out
    assert calls(log) == 20
    checked = cli("check", suite, "--fresh", "--format", "json").json()
    assert checked["calls"] == 10 == calls(log) - 20


def test_runs_lists_runs_newest_first_with_label_and_baseline(cli, project):
    suite, _ = logged_suite(project)
    first = cli("run", suite, "--format", "json").json()["run"]["run_id"]
    labelled = cli("run", suite, "--label", "nightly", "--format", "json").json()["run"]
    newest = cli("run", suite, "--repeats", "7", "--format", "json").json()["run"]["run_id"]
    assert cli("baseline", "set", "nightly").code == 0
    other_dir = project / "other"
    other_dir.mkdir()
    (other_dir / "fake_target.py").write_bytes((project / "fake_target.py").read_bytes())
    other = cli("run", fake_suite(other_dir, CASES, name="other", repeats=2), "--format", "json")
    other_id = other.json()["run"]["run_id"]

    listed = cli("runs", "fake")
    assert listed.code == 0, listed.err
    lines = [line for line in listed.out.splitlines() if "-fake" in line]
    assert [line[2:].split()[0] for line in lines] == [newest, labelled["run_id"], first]
    assert lines[1].startswith("*") and not lines[0].startswith("*")
    assert "nightly" in lines[1] and "nightly" not in lines[0] + lines[2]
    # calls (2 new repeats for each of 2 cases), repeats, cases
    assert lines[0].split()[-3:] == ["4", "7", "2"]
    assert other_id not in listed.out

    rows = cli("runs", "--format", "json").json()
    assert [r["run_id"] for r in rows] == [other_id, newest, labelled["run_id"], first]
    row = rows[2]
    assert row["suite"] == "fake" and row["label"] == "nightly" and row["baseline"] is True
    assert row["calls"] == 0  # its samples were cached
    assert row["repeats"] == 5 and row["cases"] == 2
    assert row["target_key"] and row["started_at"]
    assert [r["baseline"] for r in rows] == [False, False, True, False]

    missing = cli("runs", "nope")
    assert missing.code == 3 and "no runs of suite 'nope'" in missing.err


def test_a_regressed_scorer_shows_one_failing_output_of_the_candidate(cli, project):
    suite, _ = logged_suite(project, cases=[answer_case("beta")])
    assert cli("check", suite).code == 0
    long_answer = "Lyon, " + "and more " * 30
    suite, _ = logged_suite(
        project, cases=[answer_case("beta")], env={"NOISEFLOOR_FAKE_ANSWER": long_answer}
    )
    result = cli("check", suite)
    assert result.code == 1, result.out
    lines = result.out.splitlines()
    assert lines[1].startswith("REGRESSED  beta  contains")
    # under the case: why, then the output's gist, cut to the line; json_valid still passes,
    # so its reason is not among them
    assert lines[2].startswith('    \'Paris\' not found at answer · r0: {"answer": "Lyon, and')
    assert lines[2].endswith("…") and len(lines[2]) == 80, lines[2]

    example = cli("diff", "--format", "json").json()["cases"][0]["scorers"][1]["candidate"]
    assert example["example"]["repeat"] == 0
    assert example["example"]["detail"] == "'Paris' not found at answer"
    assert example["example"]["output"].startswith('{"answer": "Lyon, and more')
    assert example["example"]["output"].endswith("...")


def test_a_broken_case_shows_what_the_target_said_on_stderr(cli, project):
    suite, _ = logged_suite(project, cases=[answer_case("beta")])
    assert cli("check", suite).code == 0
    suite, _ = logged_suite(
        project, cases=[answer_case("beta")], env={"NOISEFLOOR_FAKE_EXIT_CODE": "3"}
    )
    result = cli("check", suite)
    assert result.code == 2
    assert result.out.splitlines()[1] == (
        "BROKEN  beta  0 of 5 repeats gave a valid result, was 5 of 5"
    )
    shown = [line.strip() for line in result.out.splitlines() if " · r0: " in line]
    assert len(shown) == 1, result.out  # once per case, not once per scorer
    assert shown[0] == "exited with status 3 · r0: stderr: exiting with 3 on request"
    # the outcome's code stays in the statistics and the JSON report
    assert "error:exit" in cli("diff", "-v").out


_DODO = """
from noisefloor.pipeline.tasks import suite_tasks

DOIT_CONFIG = {"backend": "sqlite3", "dep_file": "doit.sqlite", "verbosity": 0}


def task_pipeline():
    for task in suite_tasks("suite.yaml", "store"):
        yield {**task, "task_dep": [f"pipeline:{n}" for n in task.get("task_dep", [])]}
"""


def test_pipeline_view_has_a_sample_task_per_repeat_done_when_its_file_exists(project):
    import subprocess
    import sys

    suite, log = logged_suite(project, repeats=3)
    (project / "dodo.py").write_text(_DODO, encoding="utf-8")

    def doit(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "doit", *args], cwd=project, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = [line.split()[0] for line in doit("list", "--all").splitlines()]
    samples = sorted(name for name in listed if name.startswith("pipeline:sample:"))
    assert len(samples) == 2 * 3
    assert {name.rsplit(":", 1)[1] for name in samples} == {"r0", "r1", "r2"}
    doit()
    assert calls(log) == 6
    assert len(list((project / "store" / "bands").rglob("*.json"))) == 2
    doit()
    assert calls(log) == 6  # every sample file exists: no task runs the target
    files = sorted((project / "store" / "samples").rglob("r*.json"))
    files[1].write_bytes(b"")  # a sample the kernel never flushed
    files[4].unlink()
    doit()
    assert calls(log) == 8
    assert all(path.stat().st_size > 0 for path in files)


MODULARITY = """import json, sys
NOISE = [0.0, 0.002, -0.002, 0.001, -0.001, 0.0015, -0.0015, 0.0005]
repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
print(json.dumps({"modularity": MEAN + NOISE[repeat % len(NOISE)]}))
"""


def test_strict_with_a_number_scorer_is_inconclusive_only_where_the_interval_reaches_an_effect(
    cli, project
):
    """A noisy score worse by 0.0009, no min_effect: its interval rules out 2% of the mean, so
    --strict passes. With min_effect 0.0005 it can still be a regression that matters: exit 1."""
    target = project / "fake_target.py"
    target.write_text("MEAN = 0.566\n" + MODULARITY)
    case = {
        "id": "karate",
        "input": "karate club",
        "scorers": [{"type": "json_path_number", "path": "modularity"}],
    }
    suite = fake_suite(project, [case], repeats=8)
    assert cli("check", suite).code == 0  # adopts the baseline
    target.write_text("MEAN = 0.5651\n" + MODULARITY)

    tiny = cli("check", suite, "--strict", "--format", "json")

    assert tiny.code == 0, tiny.out
    assert tiny.json()["counts"] == {"unchanged": 1}
    assert "cannot reach" in tiny.json()["cases"][0]["scorers"][0]["reason"]
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][0]["scorers"][0]["min_effect"] = 0.0005
    suite.write_text(yaml.safe_dump(doc))

    stated = cli("check", suite, "--strict", "--format", "json")

    assert stated.code == 1, stated.out
    assert stated.json()["counts"] == {"inconclusive": 1}
    assert "reaches min_effect 0.0005" in stated.json()["cases"][0]["reason"]
