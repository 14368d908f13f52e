"""Progress of a long run through the real CLI: when stderr is not a terminal, plain lines with
the figures on stderr, and never a byte of it in stdout's JSON or in a file given to --output."""

from __future__ import annotations

import json
import re

from tests.builders import answer_case, fake_suite

LINE = re.compile(r"sampling: (\d+)/10 \(\d+%\), \d+ in flight, 0 retries, 0 errors, 0:0\d elapsed")


def _slow_suite(project):
    # ten calls of ~0.2 s each, one at a time: longer than the second a quiet run may take
    return fake_suite(
        project, [answer_case("alpha")], repeats=10, env={"NOISEFLOOR_FAKE_SLEEP": "0.1"}
    )


def test_a_run_logs_plain_progress_lines_and_stdout_stays_json(cli, project):
    result = cli("run", _slow_suite(project), "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["calls"] == 10  # stdout is the JSON summary alone
    done = [int(m.group(1)) for m in LINE.finditer(result.err)]
    assert done and done[-1] == 10, result.err
    assert done == sorted(done)


def test_progress_stays_out_of_the_output_file_and_json_stdout(cli, project, tmp_path):
    out = tmp_path / "report.json"
    result = cli("check", _slow_suite(project), "--format", "json", "--output", out)
    assert result.code == 0, result.err
    assert LINE.search(result.err)
    assert "sampling:" not in result.out  # stdout holds the terminal report then
    assert json.loads(out.read_text())["adopted"] is True
