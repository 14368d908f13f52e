"""Start-up: `noisefloor --version`, `noisefloor --help` and a check on a warm store (the
quickstart, every sample cached: what a re-run in CI or at a desk pays) against the interpreter's
own start-up, measured alternately in the same run; prints each one's own cost beyond `python -c
pass`. With `--other DIR`, the same commands run from another copy of the package too (an older
commit's, say), alternated with this one's, and the check's medians are compared.

Usage: python bench/startup.py [--rounds 21] [--other DIR] [--depth 100]. Target: under 60 ms of their own for
--version and --help.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: What each measurement runs, after the interpreter: the reference first.
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "noisefloor --version": ["-m", "noisefloor", "--version"],
    "noisefloor --help": ["-m", "noisefloor", "--help"],
}


def one(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Wall seconds of one fresh process."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args], check=False, stdout=subprocess.DEVNULL, env=env, cwd=cwd
    )
    return time.perf_counter() - start


def _warm_store(work: Path, env: dict[str, str], depth: int) -> list[str]:
    """The quickstart adopted in `work` at `depth` repeats per case, and a check run once: the
    arguments of a check that finds every sample and derived file there."""
    shutil.copytree(ROOT / "examples" / "quickstart", work / "quickstart")
    depth_flag = ["--baseline-repeats", str(depth)]
    args = ["-m", "noisefloor", "check", "quickstart/suite.yaml", *depth_flag]
    for extra in (["--jobs", "4"], []):
        subprocess.run(
            [sys.executable, *args, *extra], check=True, env=env, cwd=work, capture_output=True
        )
    return args


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--other", type=Path, help="also run the package found in this directory")
    parser.add_argument(
        "--depth", type=int, default=100, help="the warm store's baseline repeats per case"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="noisefloor-startup-") as tmp:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("NOISEFLOOR_", "CI"))}
        runs: dict[str, tuple[list[str], dict[str, str] | None, Path | None]] = {
            name: (argv, None, None) for name, argv in COMMANDS.items()
        }
        copies: dict[str, dict[str, str]] = {"noisefloor check (warm store)": {}}
        if args.other is not None:
            copies["noisefloor check (warm store), --other"] = {
                "PYTHONPATH": str(args.other.resolve())
            }
        for i, (name, extra) in enumerate(copies.items()):
            # a store of each copy's own: a copy may not read the derived files another wrote
            work = Path(tmp) / str(i)
            work.mkdir()
            env = {**clean, **extra, "NOISEFLOOR_ROOT": str(work / "store")}
            runs[name] = (_warm_store(work, env, args.depth), env, work)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (argv, run_env, cwd) in runs.items():
                times[name].append(one(argv, run_env, cwd))
    reference = median(times["python -c pass"])
    print(f"start-up, medians of {args.rounds} alternated rounds")
    print(f"  python -c pass (the interpreter's start-up): {1000 * reference:.1f} ms")
    for name in list(runs)[1:]:
        own = median(times[name]) - reference
        target = "  (target < 60 ms)" if "check" not in name else ""
        print(
            f"  {name}: {1000 * median(times[name]):.1f} ms, {1000 * own:.1f} ms of its own{target}"
        )
    if args.other is not None:
        mine = median(times["noisefloor check (warm store)"])
        theirs = median(times["noisefloor check (warm store), --other"])
        print(f"  check: this copy / --other = {mine / theirs:.3f}")


if __name__ == "__main__":
    main()
