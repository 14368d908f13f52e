"""The sequential check on a real randomized program: the monte-carlo example, end to end.

A first check adopts the example's baseline at the design's depth (100 repeats per case unless
--depth says otherwise), then fresh checks run through the CLI: on a version with one
always-passing case planted to pass about 60% of the time (pi-10k-loose takes a fiftieth of its
samples), and on a version that behaves as the baseline's (a comment edited). Prints how often
the planted case is regressed, how often an unchanged check fails, the candidate calls per case,
the repeats spent on the planted case, and the baseline's one-time calls.

Usage: python bench/montecarlo_checks.py [--checks 10] [--jobs 2] [--cases N] [--depth 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from noisefloor.settings import BASELINE_REPEATS  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "monte-carlo"
PLANTED = "pi-10k-loose"
PLANT = (
    "    rand = rng.random\n",
    "    rand = rng.random\n    if tol == 0.1:  # planted: this case keeps a fiftieth of its samples\n"
    "        samples //= 50\n",
)
HARMLESS = ("Five small randomized algorithms", "Five small, randomized algorithms")


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", *map(str, args)], capture_output=True, text=True
    )


def edit(program: Path, old: str, new: str) -> None:
    text = program.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    program.write_text(text.replace(old, new), encoding="utf-8")


def checks(
    suite: Path, root: Path, count: int, jobs: int, depth: tuple[str, str]
) -> list[dict[str, object]]:
    out = []
    for _ in range(count):
        proc = cli(
            "--root", root, "check", suite, "--fresh", "--jobs", jobs, *depth, "--format", "json"
        )
        if proc.returncode == 3:
            raise SystemExit(proc.stderr)
        out.append(json.loads(proc.stdout))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checks", type=int, default=10, help="fresh checks per version")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--depth", type=int, default=BASELINE_REPEATS, help="the deep baseline's repeats"
    )
    parser.add_argument("--cases", type=int, help="only the first N cases (and the planted one)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "mc"
        shutil.copytree(EXAMPLE, work)
        suite = work / "suite.yaml"
        if args.cases is not None:
            doc = yaml.safe_load(suite.read_text(encoding="utf-8"))
            kept = doc["cases"][: args.cases]
            if all(c["id"] != PLANTED for c in kept):
                kept.append(next(c for c in doc["cases"] if c["id"] == PLANTED))
            doc["cases"] = kept
            suite.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        root = Path(scratch) / "store"
        depth = ("--baseline-repeats", str(args.depth))
        adopted = cli(
            "--root",
            root,
            "check",
            suite,
            "--adopt",
            "--jobs",
            args.jobs,
            *depth,
            "--format",
            "json",
        )
        if adopted.returncode != 0:
            raise SystemExit(adopted.stdout + adopted.stderr)
        baseline_calls = json.loads(adopted.stdout)["calls"]
        program = work / "montecarlo.py"
        edit(program, *PLANT)
        planted = checks(suite, root, args.checks, args.jobs, depth)
        edit(program, PLANT[1], PLANT[0])
        edit(program, *HARMLESS)
        unchanged = checks(suite, root, args.checks, args.jobs, depth)
    cases = len(planted[0]["cases"])  # type: ignore[arg-type]

    def flagged(report: dict[str, object]) -> bool:
        return any(
            c["case_id"] == PLANTED and c["verdict"] == "regressed"
            for c in report["cases"]  # type: ignore[attr-defined]
        )

    def per_case(reports: list[dict[str, object]]) -> float:
        return sum(r["calls"] for r in reports) / (len(reports) * cases)  # type: ignore[misc]

    def spent(report: dict[str, object]) -> int:
        case = next(c for c in report["cases"] if c["case_id"] == PLANTED)  # type: ignore[attr-defined]
        return int(case["sequential"]["candidate_repeats"])

    print(
        f"# monte-carlo example, {cases} cases, baseline adopted at {args.depth} repeats per case "
        f"({baseline_calls} calls, once), {args.checks} fresh checks per version, "
        f"--jobs {args.jobs}\n"
    )
    print("| version | checks | exit 1 | planted case regressed | calls per case | repeats on it |")
    print("|---|---|---|---|---|---|")
    for name, reports in (("planted 1.0 -> 0.6", planted), ("unchanged", unchanged)):
        failed = sum(1 for r in reports if r["exit_code"] != 0)
        hits = sum(1 for r in reports if flagged(r))
        mean_spent = sum(spent(r) for r in reports) / len(reports)
        print(
            f"| {name} | {len(reports)} | {failed} | {hits} | {per_case(reports):.1f} | "
            f"{mean_spent:.1f} |"
        )
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
