"""What a run of a command suite imports: neither the HTTP kind, its client and its stack, asyncio,
nor the models of a comparison's report, which start-up would pay for on every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

#: Modules a run of a command suite has no use for.
_NOT_FOR_A_COMMAND_RUN = (
    "noisefloor.targets.http_kind",
    "noisefloor.targets.http",
    "noisefloor.targets.function",
    "noisefloor.report.model",
    "httpcore",
    "certifi",
    # a command's samples are taken from threads, without an event loop
    "asyncio",
    "ssl",
)


def test_a_command_suite_runs_without_the_http_stack_or_the_report_model(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "lazy",
                "target": {"command": [sys.executable, "-c", "print('ok')"]},
                "cases": [
                    {"id": "a", "input": "x", "scorers": [{"type": "contains", "needle": "ok"}]}
                ],
            }
        ),
        encoding="utf-8",
    )
    probe = (
        "import sys\nfrom noisefloor.cli import main\n"
        f"code = main(['--root', {str(tmp_path / 'store')!r}, 'run', {str(suite)!r}])\n"
        f"print(code, sorted(m for m in {_NOT_FOR_A_COMMAND_RUN!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 []", proc.stdout
