"""The doit view of noisefloor: `doit check` gates every suite under suites/ against its
committed baseline; `doit list` shows the tasks.

Each suite is checked in its own process through the real command line, so a suite that
regresses fails its task with the gate's exit code and evidence in the log.
"""

import sys
from pathlib import Path

from noisefloor.pipeline import suite_tasks

# doit's own state sits in the store root, where the store's .gitignore keeps it out of commits.
DOIT_CONFIG = {
    "default_tasks": ["check"],
    "verbosity": 2,
    "backend": "sqlite3",
    "dep_file": ".noisefloor/dodo.sqlite",
}

SUITES = sorted(Path(__file__).parent.joinpath("suites").glob("*.yaml"))


def task_check():
    """Gate every suite under suites/ against its committed baseline (exit 0 when none regressed)."""
    for suite in SUITES:
        yield {
            "name": suite.stem,
            "doc": f"noisefloor check {suite.relative_to(Path(__file__).parent)}",
            "actions": [
                [sys.executable, "-m", "noisefloor", "check", str(suite), "--require-baseline"]
            ],
            "file_dep": [str(suite)],
            "uptodate": [False],
        }


def task_pipeline():
    """The sample, score and band tasks of every suite under suites/ (`doit list --all`)."""
    for suite in SUITES:
        for task in suite_tasks(suite, Path(__file__).parent / ".noisefloor"):
            deps = [f"pipeline:{name}" for name in task.get("task_dep", [])]
            yield {**task, "task_dep": deps}
