"""The benchmarks still run on the code as it is: each is started on a tiny input in a real
process. Their figures are measured by hand (README), never asserted here."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        (
            "calibration.py",
            ["--suites", "3", "--repeats", "3", "--workers", "1", "--mixes", "noisy"],
            "| noisy | 100 | 5/10/20/40/60 | 1 | every |",
        ),
        (
            "calibration.py",
            [
                *("--suites", "2", "--rules", "--workers", "1", "--mixes", "noisy"),
                *("--drift", "0.05", "--off", "--look-sessions"),
                *(
                    "--control",
                    "matched:40,own,alpha=0.5",
                    "80,after,steps=5/10/20/40,doubt,futile",
                ),
                *("--deff-prior", "0.05"),
            ],
            "| noisy | control matched, at least 40, own family, alpha x0.5 | rho 0, baseline off, "
            "a session per look |",
        ),
        (
            "montecarlo_checks.py",
            ["--checks", "1", "--cases", "2", "--depth", "6", "--jobs", "2"],
            "| planted 1.0 -> 0.6 | 1 |",
        ),
        ("noop.py", ["--cases", "5", "--repeats", "2", "--rounds", "1"], "no-op check"),
        ("pipeline.py", ["--cases", "5", "--repeats", "2", "--rounds", "1"], "no-op doit"),
        ("startup.py", ["--rounds", "1", "--depth", "5"], "noisefloor check (warm store)"),
        ("report_size.py", ["--depth", "5"], "quickstart: check (Mars)"),
        ("pytest_overhead.py", ["--tests", "5", "--rounds", "1"], "5 trivial tests, 1 rounds"),
        (
            "user_scorer.py",
            ["--cases", "3", "--repeats", "4", "--rounds", "1"],
            "| scoring the stored samples |",
        ),
        ("faults.py", ["--only", "fuzz", "--scale", "0.01"], "| fuzz, suites | 10 | 0 |"),
        (
            "fleet.py",
            ["--cases", "2", "--depth", "3", "--runners", "2", "--rounds", "1"],
            "| 2 at once |",
        ),
        (
            "remote.py",
            ["--cases", "3", "--depth", "6", "--rounds", "1", "--remote", "file"],
            "| check, same runner again |",
        ),
        (
            "cluster.py",
            ["--cases", "3", "--repeats", "2", "--workers", "2", "--sleep", "0.05"],
            "dask, 2 workers x 1 thread",
        ),
    ],
)
def test_a_bench_runs_on_a_tiny_input(script: str, args: list[str], expected: str) -> None:
    proc = _bench(script, *args, timeout=120)
    assert expected in proc.stdout


def test_the_side_by_side_bench_times_another_harness(tmp_path: Path) -> None:
    """`versus.py` against a second copy of noisefloor itself, over a suite of the same calls."""
    suite = {
        "name": "other",
        "target": {"command": ["echo", "{{input}}"]},
        "defaults": {"repeats": 2, "baseline_repeats": 2},
        "cases": [
            {"id": f"case-{i}", "input": f"input {i}", "scorers": ["json_valid"]} for i in range(3)
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    other = f"{sys.executable} -m noisefloor --root {{root}} run suite.yaml"
    args = [
        "--other",
        other,
        "--cwd",
        str(tmp_path),
        "--cases",
        "3",
        "--repeats",
        "2",
        "--rounds",
        "1",
    ]
    proc = _bench("versus.py", *args, timeout=120)
    assert "the other harness:" in proc.stdout
    assert "noisefloor run against the other harness:" in proc.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ([], "none to start"),
        # a Python without llama-cpp-python: the server cannot be started
        (["--llm-python", sys.executable, "--qwen-model", __file__], "cannot import llama_cpp"),
        (["--llm-python", sys.executable, "--qwen-model", "missing.gguf"], "no Qwen GGUF"),
    ],
)
def test_the_real_model_bench_skips_without_a_model(extra: list[str], why: str) -> None:
    """`real_models.py` needs two served models; without them it says why in one line, exit 0."""
    urls = ["--qwen-url", f"http://127.0.0.1:{_free_port()}/v1"]
    urls += ["--smollm2-url", f"http://127.0.0.1:{_free_port()}/v1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOISEFLOOR_")}
    proc = _bench("real_models.py", *urls, *extra, timeout=60, env=env)
    _skipped(proc, why)


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ([], "no server at"),
        (["--llm-python", sys.executable, "--model", __file__], "cannot import llama_cpp"),
        (["--llm-python", sys.executable, "--model", "missing.gguf"], "no GGUF at"),
        (["--smollm2"], "need --llm-python"),
    ],
)
def test_the_drift_bench_skips_without_a_model(extra: list[str], why: str) -> None:
    """`drift.py` needs a served model; without one it says why in one line, exit 0."""
    url = [] if extra else ["--url", f"http://127.0.0.1:{_free_port()}/v1"]
    proc = _bench("drift.py", *url, *extra, timeout=60)
    _skipped(proc, why)


def test_the_drift_bench_prints_the_table_of_kept_counts(tmp_path: Path) -> None:
    """`drift.py --replay` prints each case's sessions, pooled rate, p, rho and design effect, per
    kept file and for a model's files together."""
    counts = [{"a": [k, 30], "b": [15, 30]} for k in (3, 27, 3, 27)]
    record = {
        "started": "2026-01-01T00:00:00Z",
        "server": "llama-cpp-python 0.3.36",
        "suite": "mid-range.yaml",
        "mode": "interleaved",
        "jobs": 1,
        "gap_s": 0.0,
        "restart": False,
        "repeats": 30,
        "servers": [{"model": "m", "sessions": [{"counts": c, "seconds": 1.0} for c in counts]}],
    }
    kept = tmp_path / "drift.json"
    kept.write_text(json.dumps(record), encoding="utf-8")
    proc = _bench("drift.py", "--replay", str(kept), str(kept), timeout=60)
    assert "| a | 3/30 27/30 3/30 27/30 | 60/120 (0.50) |" in proc.stdout
    assert (
        "| b | 15/30 15/30 15/30 15/30 | 60/120 (0.50) | 1 | 0.000 | 1.00 | 0 of 4 |" in proc.stdout
    )


def _bench(
    script: str, *args: str, timeout: int, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python bench/SCRIPT ARGS` in its own process, which must exit 0."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _skipped(proc: subprocess.CompletedProcess[str], why: str) -> None:
    """A bench that cannot run here said why in its one line of output, and nothing else."""
    assert proc.stdout.startswith("skipped: ") and proc.stdout.count("\n") == 1, proc.stdout
    assert why in proc.stdout
    assert not proc.stderr
