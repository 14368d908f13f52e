"""Scorers users bring, through the real command line (`python -m noisefloor` in a subprocess):
from a suite's plugin file, and from an installed package's entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson

from tests.builders import write_suite

#: The target: prints the same JSON answer each time, and counts its calls in `calls.txt`.
_TARGET = (
    "import json, pathlib\n"
    "with open('calls.txt', 'a') as f: f.write('x')\n"
    "print(json.dumps({'retrieved': ['d1', 'd2'], 'citations': [{'doc_id': 'd1'}]}))\n"
)

CHECKS = '''\
import noisefloor


@noisefloor.scorer("cites_retrieved")
def cites_retrieved(inp, params):
    """Passes when every citation is one of the retrieved documents."""
    out = inp.json()
    return all(c["doc_id"] in out["retrieved"] for c in out["citations"])
'''


def nf(
    *args: str | Path, cwd: Path, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "noisefloor", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def scorers_suite(project: Path, scorers: dict[str, list[object]], plugins: list[str]) -> Path:
    """A suite of one case per entry of `scorers` (case id: its scorers), repeated 3 times."""
    doc: dict[str, Any] = {
        "name": "mine",
        "target": {"command": [sys.executable, "-c", _TARGET], "cwd": str(project)},
        "defaults": {"repeats": 3, "baseline_repeats": 3},
        "cases": [{"id": cid, "input": cid, "scorers": s} for cid, s in scorers.items()],
    }
    if plugins:
        doc["plugins"] = plugins
    return write_suite(project, doc)


def calls(project: Path) -> int:
    path = project / "calls.txt"
    return len(path.read_text()) if path.exists() else 0


def test_a_plugin_scorer_adopts_checks_without_calls_and_rescores_after_an_edit(
    tmp_path: Path,
) -> None:
    # the plugin notes each import of it, to show which commands import it
    noted = CHECKS + "\nopen('imported.txt', 'a').write('x')\n"
    (tmp_path / "checks.py").write_text(noted, encoding="utf-8")
    both = {"cited": ["cites_retrieved"], "plain": [{"type": "contains", "needle": "d1"}]}
    suite = scorers_suite(tmp_path, both, ["checks.py"])

    adopted = nf("check", suite, cwd=tmp_path)
    assert adopted.returncode == 0, adopted.stderr
    assert calls(tmp_path) == 6

    again = nf("check", suite, "--format", "json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert calls(tmp_path) == 6
    assert orjson.loads(again.stdout)["counts"] == {"unchanged": 2}

    listed = nf("scorers", suite, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "from checks.py:4 in cites_retrieved" in listed.stdout

    # an edit of the plugin file: exactly the case using its scorer is re-scored, no call made
    (tmp_path / "checks.py").write_text(noted + "# reviewed\n", encoding="utf-8")
    edited = nf("check", suite, "--format", "json", cwd=tmp_path)
    assert edited.returncode == 0, edited.stderr
    assert calls(tmp_path) == 6
    reasons = {
        c["case_id"]: c["scorers"][0]["reason"] for c in orjson.loads(edited.stdout)["cases"]
    }
    assert "scorer redefined since the baseline: baseline samples re-scored" in reasons["cited"]
    assert "redefined" not in reasons["plain"]

    # stored runs compared again: their scores are found as recorded, the plugin not imported
    imports = (tmp_path / "imported.txt").read_text()
    diffed = nf("diff", cwd=tmp_path)
    assert diffed.returncode == 0, diffed.stdout + diffed.stderr
    assert (tmp_path / "imported.txt").read_text() == imports

    schema = nf("schema", cwd=tmp_path)
    assert "plugins" in orjson.loads(schema.stdout)["properties"]


def test_a_raising_scorer_exits_3_naming_its_file_and_show_prints_the_traceback(
    tmp_path: Path,
) -> None:
    (tmp_path / "checks.py").write_text(
        CHECKS.replace('out["citations"]', 'out["quotes"]'), encoding="utf-8"
    )
    suite = scorers_suite(tmp_path, {"cited": ["cites_retrieved"]}, ["checks.py"])

    failed = nf("check", suite, cwd=tmp_path)
    assert failed.returncode == 3, failed.stdout + failed.stderr
    said = " ".join((failed.stdout + failed.stderr).split())  # the terminal's lines wrap
    assert (
        "a scorer failed (case cited, scorer cites_retrieved, repeat 0: "
        "checks.py:8 in cites_retrieved: KeyError: 'quotes')" in said
    )

    shown = nf("show", "--case", "cited", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "scorer error (0:cites_retrieved): checks.py:8 in cites_retrieved" in shown.stdout
    assert 'for c in out["quotes"])' in shown.stdout  # the line, from the traceback

    kept = nf("check", suite, "--continue-on-scorer-error", cwd=tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr


def test_a_scorer_in_an_endless_loop_is_stopped_at_its_timeout_and_exits_3(
    tmp_path: Path,
) -> None:
    (tmp_path / "checks.py").write_text(
        textwrap.dedent(
            '''\
            import noisefloor


            @noisefloor.scorer("spins", timeout_s=0.2)
            def spins(inp, params):
                """Never returns."""
                while True:
                    pass
            '''
        ),
        encoding="utf-8",
    )
    suite = scorers_suite(tmp_path, {"stuck": ["spins"]}, ["checks.py"])

    started = time.monotonic()
    stopped = nf("check", suite, cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert time.monotonic() - started < 30
    # named at the line it was stuck on (the loop's, or its body's: where the stop landed)
    said = " ".join((stopped.stdout + stopped.stderr).split())  # the terminal's lines wrap
    assert re.search(
        r"checks\.py:[78] in spins: ScorerTimeout: stopped after its timeout_s=0\.2s", said
    )
    # stopped once per case: the case's other repeats are not given to it
    shown = nf("show", "--case", "stuck", cwd=tmp_path).stdout
    assert (
        len(re.findall(r"scorer error \(0:spins\): checks\.py:[78] in spins: ScorerTimeout", shown))
        == 1
    )
    assert shown.count("not called: it ran past its timeout on repeat 0 of this case") == 2


def test_a_plugin_that_fails_to_import_or_takes_a_name_twice_exits_3_naming_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken.py").write_text("import noisefloor\n\n1 / 0\n", encoding="utf-8")
    suite = scorers_suite(tmp_path, {"a": ["contains_text"]}, ["broken.py"])
    broken = nf("check", suite, cwd=tmp_path)
    assert broken.returncode == 3
    line = suite.read_text().splitlines().index("plugins:") + 2
    assert f"{suite}:{line}: plugins[0]: plugin broken.py failed to import: " in broken.stderr
    assert "broken.py:3 in <module>: ZeroDivisionError: division by zero" in broken.stderr

    (tmp_path / "checks.py").write_text(CHECKS, encoding="utf-8")
    (tmp_path / "again.py").write_text(CHECKS, encoding="utf-8")
    suite = scorers_suite(tmp_path, {"a": ["cites_retrieved"]}, ["checks.py", "again.py"])
    twice = nf("check", suite, cwd=tmp_path)
    assert twice.returncode == 3
    assert "plugin again.py failed to import: again.py:4 in <module>:" in twice.stderr
    assert "'cites_retrieved' is already registered (checks.py:4 in cites_retrieved)" in (
        twice.stderr
    )

    # an unknown name is matched against the plugins' scorers too
    suite = scorers_suite(tmp_path, {"a": ["cites_retreived"]}, ["checks.py"])
    typo = nf("check", suite, cwd=tmp_path)
    assert typo.returncode == 3
    assert "unknown scorer 'cites_retreived' (did you mean 'cites_retrieved'?)" in typo.stderr


def test_a_scorer_that_needs_token_usage_refuses_a_command_target_before_any_call(
    tmp_path: Path,
) -> None:
    (tmp_path / "checks.py").write_text(
        textwrap.dedent(
            '''\
            import noisefloor


            @noisefloor.scorer("brief_answer", needs="usage")
            def brief_answer(inp, params):
                """Passes when the answer took under 50 completion tokens."""
                return inp.tokens is not None and inp.tokens.completion < 50
            '''
        ),
        encoding="utf-8",
    )
    suite = scorers_suite(tmp_path, {"brief": ["brief_answer"]}, ["checks.py"])

    refused = nf("check", suite, cwd=tmp_path)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert (
        "case 'brief': scorer 'brief_answer' needs usage (the tokens each answer took, as an "
        "endpoint reports them), which a command target does not provide" in refused.stderr
    )
    assert calls(tmp_path) == 0

    listed = nf("scorers", suite, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "needs from its target: usage\n" in listed.stdout


def _install(venv: Path, name: str, version: str, files: dict[str, str], entry_points: str) -> None:
    """Install a package into `venv` as pip lays one out: its files, and a dist-info with its
    metadata and entry points. (`pip install --no-deps --no-build-isolation` of the same
    package took 4.7 s here, and needs `wheel`; this takes milliseconds.)"""
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    for rel, text in files.items():
        (purelib / rel).parent.mkdir(parents=True, exist_ok=True)
        (purelib / rel).write_text(text, encoding="utf-8")
    info = purelib / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    (info / "INSTALLER").write_text("test\n", encoding="utf-8")
    records = [*files, *(f"{info.name}/{f}" for f in ("METADATA", "entry_points.txt", "INSTALLER"))]
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in records), encoding="utf-8")


def test_a_scorer_of_an_installed_package_is_found_through_its_entry_point(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    # the venv sees this environment's packages (noisefloor and its dependencies) ...
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    here = sysconfig.get_path("purelib")
    Path(purelib, "outer.pth").write_text(
        f"import site; site.addsitedir({here!r})\n", encoding="utf-8"
    )
    # ... and holds the package, which no suite names as a plugin
    checks = CHECKS.replace("cites_retrieved", "nf_cites")
    _install(
        venv,
        "nf-demo",
        "1.2.3",
        {"nf_demo/__init__.py": "", "nf_demo/checks.py": checks},
        "[noisefloor.scorers]\nnf_cites = nf_demo.checks\n",
    )
    python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    suite = scorers_suite(tmp_path, {"cited": ["nf_cites"]}, [])

    adopted = nf("check", suite, "-v", cwd=tmp_path, python=python)
    assert adopted.returncode == 0, adopted.stderr
    assert "nf_cites: - -> 3/3" in adopted.stdout

    listed = nf("scorers", suite, cwd=tmp_path, python=python)
    assert listed.returncode == 0, listed.stderr
    assert "nf_demo/checks.py:4 in nf_cites (nf-demo 1.2.3)" in listed.stdout

    typo = scorers_suite(tmp_path, {"cited": ["nf_cite"]}, [])
    suggested = nf("check", typo, cwd=tmp_path, python=python)
    assert suggested.returncode == 3
    assert "unknown scorer 'nf_cite' (did you mean 'nf_cites'?)" in suggested.stderr
