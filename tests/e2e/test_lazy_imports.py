"""What a run of a command suite imports: neither the HTTP kind, its client and its stack, asyncio,
the Inspect kind and Inspect AI, the models of a comparison's report, nor the plugin loader and
the installed packages' entry points, which start-up would pay for on every run; and which
pydantic models a process builds: none on import, only those a command uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.builders import write_suite

#: Modules a run of a command suite has no use for.
_NOT_FOR_A_COMMAND_RUN = (
    "noisefloor.targets.http_kind",
    "noisefloor.targets.http",
    "noisefloor.targets.function",
    "noisefloor.targets.inspect_kind",
    # the `inspect` extra: only a suite of an Inspect task, or `import --inspect`, imports it
    "inspect_ai",
    "noisefloor.model.report",
    "httpcore",
    "certifi",
    # a command's samples are taken from threads, without an event loop
    "asyncio",
    "ssl",
    # a suite without plugins and with built-in scorers alone reads no entry point (pydantic's
    # first model imports importlib.metadata itself: the plugin loader is what must stay out)
    "noisefloor.scorers.plugins",
)


def _one_case_suite(directory: Path) -> Path:
    """A suite of one case of a command that prints `ok`, with a `contains` scorer."""
    case = {"id": "a", "input": "x", "scorers": [{"type": "contains", "needle": "ok"}]}
    target = {"command": [sys.executable, "-c", "print('ok')"]}
    return write_suite(directory, {"name": "lazy", "target": target, "cases": [case]})


def test_a_command_suite_runs_without_the_http_stack_or_the_report_model(tmp_path: Path) -> None:
    suite = _one_case_suite(tmp_path)
    probe = (
        "import sys\nfrom noisefloor.cli.main import main\n"
        f"code = main(['--root', {str(tmp_path / 'store')!r}, 'run', {str(suite)!r}])\n"
        f"print(code, sorted(m for m in {_NOT_FOR_A_COMMAND_RUN!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 []", proc.stdout


#: Lists the noisefloor models a process has built (validator and serializer made).
_BUILT = (
    "from pydantic import BaseModel\n"
    "def walk(c):\n"
    "    for s in c.__subclasses__():\n"
    "        yield s\n"
    "        yield from walk(s)\n"
    "def built():\n"
    "    return sorted({c.__name__ for c in walk(BaseModel)"
    " if c.__module__.startswith('noisefloor') and c.__pydantic_complete__})\n"
)


def test_importing_every_module_builds_no_model() -> None:
    # building a model's validator costs 0.1-1 ms, and the first one imports pydantic's plugin
    # loader (importlib.metadata): a module must leave that to the command that validates
    probe = (
        "import importlib, pkgutil, sys, noisefloor\n"
        + _BUILT
        + "names = [m.name for m in pkgutil.walk_packages(noisefloor.__path__, 'noisefloor.')]\n"
        "for name in names:\n"
        "    if not name.endswith('__main__'):\n"
        "        importlib.import_module(name)\n"
        "print(len(names), built(), 'pydantic.plugin._loader' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    count, rest = proc.stdout.strip().split(" ", 1)
    assert int(count) > 50  # every module was imported
    assert rest == "[] False", proc.stdout


def test_a_cached_run_builds_only_the_models_it_reads_and_writes(tmp_path: Path) -> None:
    suite = _one_case_suite(tmp_path)
    args = ["--root", str(tmp_path / "store"), "run", str(suite)]
    cold = subprocess.run(
        [sys.executable, "-m", "noisefloor", *args], capture_output=True, text=True
    )
    assert cold.returncode == 0, cold.stderr
    probe = (
        "from noisefloor.cli.main import main\n" + _BUILT + f"code = main({args!r})\n"
        "print('built:', code, built())"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    code, models = proc.stdout.splitlines()[-1].removeprefix("built: ").split(" ", 1)
    assert code == "0"
    # what every run builds: its suite, its record, the bands and the summary it prints
    for model in ("SuiteFile", "CaseSpec", "RunRecord", "CaseBand", "RunSummary"):
        assert f"'{model}'" in models, models
    # a cached run takes, scores and bands nothing; nor does it build the HTTP kind, the
    # comparison's report, the public store's models, or `explain`'s
    for model in ("RawSample", "ScoreFile", "ScorerBand", "HttpSpec", "Report", "Said"):
        assert f"'{model}'" not in models, models
