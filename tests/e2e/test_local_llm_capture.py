"""The committed capture of a real local model (examples/local-llm), replayed through the real CLI.

Two runs of Qwen2.5-Coder-0.5B-Instruct, recorded with nothing changed in between, are stored in
`examples/local-llm/capture/`. These tests copy that store and check, without any model, that
every command, rule and format reads it and reaches the verdicts it reached when it was recorded.

An optional test samples a live endpoint: set NOISEFLOOR_TEST_LLM_URL (for example
`http://127.0.0.1:8765/v1`, served by `examples/local-llm/serve.py`) to run it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from noisefloor.cli.main import main
from tests.capture_checks import committed_files, gitignore_problems, leaks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "local-llm"
CAPTURE = EXAMPLE / "capture"
SUITE = "local-llm"
MODEL = "qwen2.5-coder-0.5b"
CASES = [json.loads(line)["id"] for line in (EXAMPLE / "cases.jsonl").read_text().splitlines()]
REPEATS = 5

#: Pass counts (first, second) per case, as the capture holds them.
PASSES = {
    "capital_word": (5, 5),
    "sum_17_25": (5, 5),
    "invoice_json": (1, 0),
    "count_r": (0, 2),
    "refusal_boundary": (3, 1),
    "multiply_37_23": (1, 1),
    "prime_91": (0, 1),
    "japan_json": (2, 1),
}
#: What each rule concluded on the capture: exit code, counts, and the cases not `unchanged`.
VERDICTS = {
    "exact": (
        0,
        {"inconclusive": 3, "unchanged": 5},
        {
            "invoice_json": "inconclusive",
            "japan_json": "inconclusive",
            "refusal_boundary": "inconclusive",
        },
    ),
    "band": (
        1,
        {"regressed": 1, "improved": 1, "unchanged": 6},
        {"refusal_boundary": "regressed", "count_r": "improved"},
    ),
    "wilson": (
        0,
        {"quarantine": 6, "unchanged": 2},
        {case: "quarantine" for case in CASES if case not in ("capital_word", "sum_17_25")},
    ),
}
FORMATS = ["terminal", "json", "markdown", "junit"]


class Cli:
    """Runs `noisefloor --root STORE ARGS...` in-process, returning (code, stdout, stderr)."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys

    def __call__(self, *args: str | Path) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(["--root", str(self.root), *map(str, args)])
        out, err = self.capsys.readouterr()
        return code, out, err


@pytest.fixture(scope="module")
def replay_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the capture for the module: derived files are computed once, then reused."""
    root = tmp_path_factory.mktemp("local-llm") / "capture"
    shutil.copytree(CAPTURE, root)
    return root


@pytest.fixture
def cli(replay_root: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(replay_root, capsys)


def run_records() -> dict[str, Any]:
    records = [json.loads(p.read_text()) for p in (CAPTURE / "runs" / SUITE).glob("*.json")]
    return {record["label"]: record for record in records}


# -- the capture itself ---------------------------------------------------------------------


def test_the_capture_holds_two_labelled_runs_of_forty_samples() -> None:
    records = run_records()
    assert sorted(records) == ["first", "second"]
    baseline = json.loads((CAPTURE / "baselines" / f"{SUITE}.json").read_text())
    assert baseline["run_id"] == records["first"]["run_id"]
    for record in records.values():
        assert record["calls"] == len(CASES) * REPEATS
        assert [case["case_id"] for case in record["cases"]] == CASES
        for case in record["cases"]:
            samples = sorted((CAPTURE / case["sample_dir"]).glob("r*.json"))
            assert len(samples) == REPEATS, case["case_id"]


def test_the_capture_names_the_served_model_everywhere() -> None:
    for record in run_records().values():
        assert record["target"]["spec"]["model"] == MODEL
        assert record["served_models"] == {MODEL: len(CASES) * REPEATS}
    samples = list((CAPTURE / "samples").rglob("r*.json"))
    assert len(samples) == 2 * len(CASES) * REPEATS
    for path in samples:
        envelope = json.loads(path.read_text())["envelope"]
        assert envelope["served_model"] == MODEL
        assert envelope["requested_model"] == MODEL
        assert envelope["request"]["seed"] == -1
        assert envelope["request"]["temperature"] == 0.8


def test_no_committed_file_holds_a_machine_path_or_a_secret() -> None:
    assert len(committed_files(CAPTURE)) > 80
    assert leaks(CAPTURE) == []


def test_the_capture_gitignore_keeps_both_runs() -> None:
    assert gitignore_problems(CAPTURE) == []


# -- replaying it ---------------------------------------------------------------------------


def test_diff_replays_the_recorded_verdict_with_every_case(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli("diff")
    assert code == 0, out
    assert out.startswith("3 inconclusive, 5 unchanged · exit 0 · 0 calls\n")
    monkeypatch.setenv("COLUMNS", "300")  # the statistics, each on a line of its own
    code, out, _ = cli("diff", "-v")
    assert "rule exact" in out
    lines = out.splitlines()
    for case, (first, second) in PASSES.items():
        (at,) = [i for i, line in enumerate(lines) if f"  {case}  " in f"{line}  "]
        verdict = VERDICTS["exact"][2].get(case, "unchanged")
        assert lines[at].split()[0] == verdict, lines[at]
        evidence = next(line for line in lines[at + 1 :] if f"/{REPEATS} [" in line)
        assert f"{first}/{REPEATS} [" in evidence and f"-> {second}/{REPEATS} [" in evidence


@pytest.mark.parametrize("rule", sorted(VERDICTS))
def test_every_rule_reaches_its_recorded_verdict(cli: Cli, rule: str) -> None:
    code, out, _ = cli("diff", "--rule", rule, "--format", "json")
    report = json.loads(out)
    want_code, want_counts, want_cases = VERDICTS[rule]
    assert (code, report["exit_code"]) == (want_code, want_code)
    assert report["rule"] == rule
    assert report["counts"] == want_counts
    # the two cases the model failed in every repeat of the baseline can never regress
    assert [w.split(",", 1)[0] for w in report["warnings"]] == ["case count_r", "case prime_91"]
    assert all("failed all 5 repeats of the baseline" in w for w in report["warnings"])
    verdicts = {case["case_id"]: case["verdict"] for case in report["cases"]}
    assert sorted(verdicts) == sorted(CASES)
    assert verdicts == {case: want_cases.get(case, "unchanged") for case in CASES}
    for case in report["cases"]:
        (scorer,) = case["scorers"]
        counts = (scorer["baseline"]["k"], scorer["candidate"]["k"])
        assert counts == PASSES[case["case_id"]], case["case_id"]
        assert scorer["baseline"]["n"] == scorer["candidate"]["n"] == REPEATS


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("rule", sorted(VERDICTS))
def test_every_format_renders_under_every_rule(cli: Cli, rule: str, fmt: str) -> None:
    # -v lists every unchanged case too (more than five fold into a count without it)
    code, out, _ = cli("diff", "--rule", rule, "--format", fmt, "-v")
    assert code == VERDICTS[rule][0]
    if fmt == "json":
        assert {case["case_id"] for case in json.loads(out)["cases"]} == set(CASES)
    elif fmt == "junit":
        assert out.lstrip().startswith("<") and f'tests="{len(CASES)}"' in out
    for case in CASES:
        assert case in out, (rule, fmt, case)


def test_json_report_names_both_labelled_runs(cli: Cli) -> None:
    code, out, _ = cli("diff", "--format", "json")
    assert code == 0
    runs = json.loads(out)["runs"]
    records = run_records()
    for side, label in (("baseline", "first"), ("candidate", "second")):
        assert runs[side]["label"] == label
        assert runs[side]["run_id"] == records[label]["run_id"]
        assert runs[side]["calls"] == len(CASES) * REPEATS
        assert runs[side]["repeats"] == REPEATS
        assert runs[side]["target_key"] == records[label]["target"]["key"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_compare_first_with_second(cli: Cli, fmt: str) -> None:
    # the design's table is rule wilson; compare judges as check does by default
    args = ("compare", "--baseline", "first", "--current", "second", "--rule", "wilson")
    code, out, _ = cli(*args, "--format", fmt)
    assert code == 0, out
    if fmt == "json":
        report = json.loads(out)
        assert report["rule"] == "wilson"
        assert report["counts"] == {"quarantine": 6, "unchanged": 2}
    elif fmt == "terminal":
        assert "6 quarantine, 2 unchanged" in out
        assert "repeats_disagree" in " ".join(cli(*args, "-v")[1].split())


@pytest.mark.parametrize("label", ["first", "second"])
def test_show_prints_the_stored_outputs(cli: Cli, label: str) -> None:
    record = run_records()[label]
    code, out, _ = cli("show", label, "--case", "refusal_boundary")
    assert code == 0
    (case,) = [c for c in record["cases"] if c["case_id"] == "refusal_boundary"]
    for repeat in range(REPEATS):
        sample = json.loads((CAPTURE / case["sample_dir"] / f"r{repeat}.json").read_text())
        text = sample["output"]["text"]
        assert text.splitlines()[0] in out
    code, out, _ = cli("show", label)
    assert code == 0
    for case_id in CASES:
        assert case_id in out


# -- optional: a live endpoint --------------------------------------------------------------

LIVE_URL = os.environ.get("NOISEFLOOR_TEST_LLM_URL")


@pytest.mark.skipif(not LIVE_URL, reason="set NOISEFLOOR_TEST_LLM_URL to sample a live endpoint")
def test_live_endpoint_check_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.yaml"
    doc = {
        "name": "live-llm",
        "target": {
            "http": {
                "base_url": LIVE_URL,
                "model": os.environ.get("NOISEFLOOR_TEST_LLM_MODEL", MODEL),
                "temperature": 0.8,
                "seed": -1,
                "max_tokens": 48,
                "timeout_s": 120,
                "max_retries": 2,
            }
        },
        "cases": [
            {
                "id": "capital",
                "input": "Answer with exactly one word: the capital of France.",
                "scorers": [{"type": "must_include", "all": ["Paris"]}],
            },
            {
                "id": "json_object",
                "input": "Return only a JSON object with the keys country and capital for Japan.",
                "scorers": ["json_valid"],
            },
        ],
    }
    suite.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    root = tmp_path / "store"
    run = Cli(root, capsys)
    first, out, err = run("check", suite, "--repeats", "3", "--format", "json")
    assert first in (0, 1), out + err
    assert json.loads(out)["adopted"] is True
    second, out, err = run("check", suite, "--repeats", "3", "--fresh", "--format", "json")
    assert second in (0, 1), out + err
    assert json.loads(out)["calls"] == 2 * 3
    samples = list((root / "samples").rglob("r*.json"))
    assert len(samples) == 2 * 2 * 3
    for path in samples:
        sample = json.loads(path.read_text())
        assert sample["outcome"] == "ok", sample["error"]
        assert sample["envelope"]["served_model"]
