"""A swap through the command line: several cases drop at once, as when a model is swapped for a
weaker one, and what the check spends confirming them beside a fixed design of the same power.

Eight cases answer right with the rates of a small real model's suite (issue #40: `add` at
1.0, `invoice-json` at 0.21, `person-json` at 0.45, five that do not move); the swapped version
drops the first three to 0.0, 0.0 and 0.1, as the swap to SmolLM2 did. The baseline (100
repeats per case) is taken in one session, or over several (`--sessions`: the adoption and
`baseline deepen`s, as a team deepens a baseline on different occasions), and each store is then
checked on the swapped version. Prints, per store, the regressions found, the calls the check
made (controls included) and those of a fixed design of the same power (the check's own
`sequential.fixed_calls`), and the drift each regression was tested against.

Usage: python bench/swap_checks.py [--sessions 1 4] [--jobs 4] [--worlds 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.noisy_checks import check, commit, git  # noqa: E402

#: Each case's rate before the swap and after it.
RATES = {
    "add": (1.0, 0.0),
    "invoice-json": (0.21, 0.0),
    "person-json": (0.45, 0.1),
    "capital-word": (0.9, 0.9),
    "refusal": (0.43, 0.43),
    "sum-ints": (0.7, 0.7),
    "translate": (0.55, 0.55),
    "list-json": (0.95, 0.95),
}
PROGRAM = """\
import json, os, random, sys
RATES = {rates!r}
case, repeat = sys.argv[1], sys.argv[2]
draw = random.Random(f"{{os.environ['WORLD']}}/{{case}}/{{repeat}}").random()
print(json.dumps({{"answer": "Paris" if draw < RATES[case] else "Lyon"}}))
"""
DEPTH = 100


def _program(repo: Path, swapped: bool) -> None:
    rates = {case: pair[int(swapped)] for case, pair in RATES.items()}
    (repo / "answer.py").write_text(PROGRAM.format(rates=rates))


def store_of(work: Path, sessions: int, jobs: int, world: str = "") -> Path:
    """A repository whose baseline, 100 repeats per case, was taken over `sessions` sessions
    of equal size (each in a world of its own, named after `world`), committed."""
    repo = work / f"over-{sessions}{world}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    _program(repo, swapped=False)
    scorers = [{"type": "contains", "needle": "Paris", "path": "answer"}]
    suite = {
        "name": "swap",
        "target": {
            "command": [sys.executable, "-S", "answer.py", "{{case_id}}", "{{repeat}}"],
            "output": "json",
            "timeout_s": 30,
        },
        "defaults": {"baseline_repeats": DEPTH // sessions},
        "cases": [{"id": cid, "input": "?", "scorers": scorers} for cid in RATES],
    }
    (repo / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    commit(repo, "eight cases")
    adopted = check(repo, f"{world}session-0", jobs)
    if not adopted.get("adopted"):
        raise SystemExit(f"the first check did not adopt: {adopted.get('warnings')}")
    suite["defaults"] = {"baseline_repeats": DEPTH}
    (repo / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    for s in range(1, sessions):
        deepen(repo, f"{world}session-{s}", (s + 1) * DEPTH // sessions)
    commit(repo, "the baseline")
    return repo


def deepen(repo: Path, world: str, repeats: int) -> None:
    """`baseline deepen` to `repeats`, in `world`."""
    done = subprocess.run(
        [
            sys.executable, "-m", "noisefloor", "--root", str(repo / ".noisefloor"), "baseline",
            "deepen", str(repo / "suite.yaml"), "--repeats", str(repeats),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "WORLD": world},
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"deepen to {repeats} exited {done.returncode}: {done.stderr}")


def swap(repo: Path, jobs: int, world: str = "") -> dict[str, Any]:
    """The swapped version, committed and checked."""
    _program(repo, swapped=True)
    commit(repo, "the swap")
    return check(repo, f"{world}swapped", jobs)


def row(sessions: int, report: dict[str, Any]) -> str:
    regressed = [c for c in report["cases"] if c["verdict"] == "regressed"]
    sequential = report.get("sequential") or {}
    fixed = sequential.get("fixed_calls")
    controls = sum(
        (c.get("sequential", {}).get("control") or {}).get("repeats", 0)
        + (c.get("sequential", {}).get("control") or {}).get("candidate_repeats", 0)
        for c in report["cases"]
    )
    drift = []
    for case in regressed:
        check = case["sequential"].get("control", {}).get("drift")
        if check is not None:
            mark = "beyond" if check["beyond"] else "within"
            drift.append(f"{case['case_id']} {mark} (rho {check['rho']:.3g}, p {check['p']:.2g})")
    ratio = f"{report['calls'] / fixed:.2f}" if fixed else "-"
    return (
        f"| {sessions} | {', '.join(c['case_id'] for c in regressed)} | {report['calls']} | "
        f"{controls} | {fixed} | {ratio} | {'; '.join(drift)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument(
        "--worlds", type=int, default=1, help="stores of each kind, each in worlds of its own"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"# a swap of {len(RATES)} cases ({', '.join(f'{c} {a:g} -> {b:g}' for c, (a, b) in RATES.items() if a != b)}), "
        f"baseline of {DEPTH} repeats per case taken over N sessions, --jobs {args.jobs}\n"
    )
    print(
        "| sessions | regressed | calls | of them controls | fixed design of the same power "
        "| ratio | drift each regression was tested against |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for sessions in args.sessions:
            for w in range(args.worlds):
                world = f"w{w}-" if w else ""
                repo = store_of(Path(scratch), sessions, args.jobs, world)
                print(row(sessions, swap(repo, args.jobs, world)), flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
