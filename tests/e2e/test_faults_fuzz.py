"""The fuzz fault trials, CI-sized: generated suite files, JSONL case files and target outputs
in-process, and a few through the real command line in a fresh process."""

from __future__ import annotations

from pathlib import Path

from bench.fault_trials import cli_run, fuzz, has_traceback


def test_generated_inputs_are_refused_cleanly_or_fail_a_repeat(tmp_path: Path) -> None:
    for tally in fuzz.trials(60, tmp_path):
        assert tally.trials == 60, tally.name
        assert tally.clean, f"{tally.name}: {tally.notes}"


def test_deep_suites_and_cases_exit_3_with_file_and_line_in_a_real_process(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text("name: x\ncases: " + "[" * 3000 + "1" + "]" * 3000 + "\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b'{"id": "a", "prompt": "p"}\n' + b"[" * 3000 + b'\n{"id": NaN}\n')
    runs = [
        (cli_run("run", suite, root=tmp_path / "store"), "suite.yaml:2"),
        (
            cli_run(
                "run",
                "--cases",
                cases,
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                root=tmp_path / "store",
            ),
            "cases.jsonl:2",
        ),
    ]
    for done, where in runs:
        assert done.returncode == 3, done.stderr
        assert where in done.stderr, done.stderr
        assert not has_traceback(done.stdout + done.stderr)
