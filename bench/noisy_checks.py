"""The sequential check on the noisy mix through the command line: 21 cases, checked in git.

A randomized program answers each case right with the rate its id names (7 cases at 1.0, 4 at
0.9, 4 at 0.7, 4 at 0.5, 2 at 0.2: the calibration's noisy mix in 21 cases, `noisy-21`); each
draw is fixed by the world's seed, the case and the repeat. A first check adopts the baseline
(100 repeats per case), then checks run through the command line, each on its own commit and in
a world of its own: an unchanged version (a commit of the README only), and a version where
the case `p100-planted` passes 60% of the time. Prints how often the planted case is caught, how
often an unchanged check fails, the candidate calls per case (concurrent controls included), and
the floor under them: the calls of the looks alone, which the controls add to. With --simulate,
the same design's expectation over that many simulated suites (bench/calibration.py).

Usage: python bench/noisy_checks.py [--checks 10] [--jobs 4] [--simulate 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

#: How many cases at each pass rate; the first case at 1.0 is the planted one.
RATES = {100: 7, 90: 4, 70: 4, 50: 4, 20: 2}
PLANTED = "p100-planted"
#: The planted version's rate for the planted case.
PLANTED_RATE = 0.6
PROGRAM = """\
import json, os, random, sys
PLANTED = {planted}
case, repeat = sys.argv[1], sys.argv[2]
rate = int(case.split("-")[0][1:]) / 100
if case == "p100-planted" and PLANTED:
    rate = PLANTED
draw = random.Random(f"{{os.environ['WORLD']}}/{{case}}/{{repeat}}").random()
print(json.dumps({{"answer": "Paris" if draw < rate else "Lyon"}}))
"""


def case_ids() -> list[str]:
    """The suite's case ids: `p<rate>-<n>`, the planted one first."""
    ids = [PLANTED]
    for rate, count in RATES.items():
        first = 1 if rate == 100 else 0
        ids += [f"p{rate:03d}-{n}" for n in range(first, first + count - (rate == 100))]
    return ids


def git(repo: Path, *args: str) -> None:
    """One git command in `repo`, as a fixed author."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def build(repo: Path) -> Path:
    """The repository: the program (not planted), its suite and a README, committed."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "answer.py").write_text(PROGRAM.format(planted=0.0))
    (repo / "README.md").write_text("# an answerer\n")
    scorers = [{"type": "contains", "needle": "Paris", "path": "answer"}]
    suite = {
        "name": "noisy",
        "target": {
            "command": [sys.executable, "-S", "answer.py", "{{case_id}}", "{{repeat}}"],
            "output": "json",
            "timeout_s": 30,
        },
        "cases": [{"id": cid, "input": "capital?", "scorers": scorers} for cid in case_ids()],
    }
    (repo / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    commit(repo, "an answerer")
    return repo


def check(
    repo: Path, world: str, jobs: int, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """One check through the command line in `world`; its JSON report."""
    done = subprocess.run(
        [
            sys.executable, "-m", "noisefloor", "--root", str(repo / ".noisefloor"), "check",
            str(repo / "suite.yaml"), "--jobs", str(jobs), "--format", "json",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "WORLD": world},
        cwd=repo,
    )  # fmt: skip
    if done.returncode == 3 or not done.stdout.strip():
        raise SystemExit(f"check in world {world} exited {done.returncode}: {done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


#: A check of the repository in a world, with so many calls at once: its JSON report.
Checker = Callable[[Path, str, int], dict[str, Any]]


def adopt(repo: Path, jobs: int, run: Checker = check) -> dict[str, Any]:
    """The first check, which adopts the baseline; the baseline committed."""
    report = run(repo, "adoption", jobs)
    if not report.get("adopted"):
        raise SystemExit(f"the first check did not adopt: {report.get('warnings')}")
    commit(repo, "the baseline")
    return report


def unchanged_check(repo: Path, i: int, jobs: int, run: Checker = check) -> dict[str, Any]:
    """A check of a commit that changes the README alone, in world `unchanged-i`."""
    (repo / "README.md").write_text(f"# an answerer, revision {i}\n")
    commit(repo, f"docs, revision {i}")
    return run(repo, f"unchanged-{i}", jobs)


def planted_check(repo: Path, i: int, jobs: int, run: Checker = check) -> dict[str, Any]:
    """A check of the planted version in world `planted-i`; the program restored after it."""
    program = repo / "answer.py"
    program.write_text(PROGRAM.format(planted=PLANTED_RATE))
    commit(repo, f"planted, {i}")
    report = run(repo, f"planted-{i}", jobs)
    program.write_text(PROGRAM.format(planted=0.0))
    commit(repo, f"restored, {i}")
    return report


def calls_per_case(reports: list[dict[str, Any]]) -> tuple[float, float]:
    """Candidate calls per case (controls included), and those of the looks alone: every
    case's candidate repeats less those taken beside its control, and no control's."""
    cases = sum(len(r["cases"]) for r in reports)
    looks = 0
    for report in reports:
        for case in report["cases"]:
            sequential = case.get("sequential") or {}
            control = sequential.get("control") or {}
            looks += sequential.get("candidate_repeats", 0) - control.get("candidate_repeats", 0)
    return sum(r["calls"] for r in reports) / cases, looks / cases


def caught(report: dict[str, Any]) -> bool:
    """The planted case is regressed, and nothing else is."""
    return report["exit_code"] == 1 and [
        c["case_id"] for c in report["cases"] if c["verdict"] == "regressed"
    ] == [PLANTED]


def measure(
    work: Path, checks: int, jobs: int, run: Checker = check
) -> dict[str, list[dict[str, Any]]]:
    """Adopt, then `checks` unchanged and `checks` planted checks, alternated; `run` takes each
    check (default: the command line in a process of its own)."""
    repo = build(work / "repo")
    adopt(repo, jobs, run)
    out: dict[str, list[dict[str, Any]]] = {"unchanged": [], "planted": []}
    for i in range(checks):
        out["unchanged"].append(unchanged_check(repo, i, jobs, run))
        out["planted"].append(planted_check(repo, i, jobs, run))
    return out


def _simulated(suites: int) -> tuple[float, float, float]:
    """The design's expected calls per unchanged case (controls included), those of the looks
    alone, and the standard deviation of a 10-check mean, over simulated noisy-21 suites."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench import calibration

    variant = calibration.Variant("noisy-21", 100, 60, 1.0, guard=calibration.CHECKS_GUARD)
    null = calibration.sequential_cell((variant, 5, suites, 5, "null binary"))
    total = [(o.calls + o.control_calls) / 21 for o in null]
    mean = sum(total) / len(total)
    sd = (sum((x - mean) ** 2 for x in total) / len(total)) ** 0.5
    return mean, sum(o.calls for o in null) / (21 * len(null)), sd / 10**0.5


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checks", type=int, default=10, help="checks of each version")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument(
        "--simulate", type=int, default=0, help="also simulate this many suites of the design"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        found = measure(Path(scratch), args.checks, args.jobs)
    print(
        f"# noisy mix in {len(case_ids())} cases through the command line, baseline adopted at "
        f"100 repeats per case, {args.checks} checks per version on their own commits, "
        f"--jobs {args.jobs}\n"
    )
    print(
        "| version | checks | exit 1 | planted case regressed alone | calls per case | of them the looks' |"
    )
    print("|---|---|---|---|---|---|")
    for name, reports in (
        ("planted 1.0 -> 0.6", found["planted"]),
        ("unchanged", found["unchanged"]),
    ):
        failed = sum(1 for r in reports if r["exit_code"] != 0)
        hits = sum(1 for r in reports if caught(r))
        total, looks = calls_per_case(reports)
        print(f"| {name} | {len(reports)} | {failed} | {hits} | {total:.2f} | {looks:.2f} |")
    if args.simulate:
        mean, looks, sd = _simulated(args.simulate)
        print(
            f"\nsimulated over {args.simulate} suites of the same design: {mean:.2f} calls per "
            f"unchanged case, {looks:.2f} of them the looks'; a mean over 10 checks has a "
            f"standard deviation of {sd:.2f}"
        )
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
