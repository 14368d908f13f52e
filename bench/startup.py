"""Start-up: `noisefloor --version` and `noisefloor --help` against the interpreter's own start-up,
measured alternately in the same run; prints each one's own cost beyond `python -c pass`.

Usage: python bench/startup.py [--rounds 21]. Target: under 60 ms of their own each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median  # noqa: E402

#: What each measurement runs, after the interpreter: the reference first.
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "noisefloor --version": ["-m", "noisefloor", "--version"],
    "noisefloor --help": ["-m", "noisefloor", "--help"],
}


def one(args: list[str]) -> float:
    """Wall seconds of one fresh process."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.rounds):
        for name, argv in COMMANDS.items():
            times[name].append(one(argv))
    reference = median(times["python -c pass"])
    print(f"start-up, medians of {args.rounds} alternated rounds")
    print(f"  python -c pass (the interpreter's start-up): {1000 * reference:.1f} ms")
    for name in list(COMMANDS)[1:]:
        own = median(times[name]) - reference
        print(
            f"  {name}: {1000 * median(times[name]):.1f} ms, {1000 * own:.1f} ms of its own"
            "  (target < 60 ms)"
        )


if __name__ == "__main__":
    main()
