"""Scoring stored samples with a user's scorer (a five-line plugin file, called through the
timeout and the lock every user scorer gets) against the built-in `contains` on the same samples.

Prints the median of alternated rounds for each and their ratio: scoring the stored samples as
a score task does (read, validate, score: `score_case` per case), and the calls alone (the
same outputs already in memory), which is where the two differ.

Usage: python bench/user_scorer.py [--cases 100] [--repeats 100] [--rounds 7]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median  # noqa: E402

from noisefloor.model.records import ScorerUse  # noqa: E402
from noisefloor.pipeline.banding import read_sample, score_case  # noqa: E402
from noisefloor.scorers.plugins import load_plugins  # noqa: E402
from noisefloor.scorers.registry import REGISTRY
from noisefloor.scorers.score import ScoreInput  # noqa: E402
from noisefloor.store.files import dumps  # noqa: E402
from noisefloor.targets.base import Outcome, RawSample, decode_stream  # noqa: E402

PLUGIN = '''\
import noisefloor


@noisefloor.scorer("mentions_ok")
def mentions_ok(inp, params):
    """Passes when the output mentions ok."""
    return "ok" in inp.text
'''


def write_samples(root: Path, cases: int, repeats: int) -> list[list[str]]:
    """`cases` directories of `repeats` sample files, as a run stores them."""
    paths = []
    for case in range(cases):
        directory = root / f"case-{case}"
        directory.mkdir()
        files = []
        for repeat in range(repeats):
            text = f'{{"answer": "{"ok" if repeat % 3 else "no"}", "case": {case}}}\n'
            sample = RawSample(
                kind="command",
                case_id=f"case-{case}",
                repeat=repeat,
                outcome=Outcome.OK,
                output=decode_stream(text.encode()),
                exit_code=0,
                wall_s=0.01,
            )
            path = directory / f"r{repeat}.json"
            path.write_bytes(dumps(sample))
            files.append(str(path))
        paths.append(files)
    return paths


def use(name: str, **params: object) -> ScorerUse:
    built = REGISTRY.build(name, params)
    return ScorerUse(
        label=f"0:{name}", name=name, params=built.spec.params, impl_hash=built.spec.impl_hash
    )


def rounds(work: dict[str, Callable[[], object]], count: int) -> dict[str, list[float]]:
    """Each piece of work timed `count` times, alternated so that drift hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(count):
        for name, fn in work.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "checks.py").write_text(PLUGIN, encoding="utf-8")
        load_plugins(["checks.py"], work, lambda i: f"plugins[{i}]", REGISTRY)
        (work / "samples").mkdir()
        paths = write_samples(work / "samples", args.cases, args.repeats)
        contains, mine = use("contains", needle="ok"), use("mentions_ok")

        def score_all(scorer: ScorerUse) -> Callable[[], object]:
            return lambda: [score_case(f"case-{i}", scorer, p) for i, p in enumerate(paths)]

        inputs = [ScoreInput.from_sample(read_sample(p)) for files in paths for p in files]
        built = {
            name: REGISTRY.build(u.name, u.params) for name, u in (("b", contains), ("u", mine))
        }

        def call_all(scorer: Callable[[ScoreInput], object]) -> Callable[[], object]:
            return lambda: [scorer(inp) for inp in inputs]

        stored = rounds({"contains": score_all(contains), "user": score_all(mine)}, args.rounds)
        calls = rounds(
            {"contains": call_all(built["b"]), "user": call_all(built["u"])}, args.rounds
        )

    n = args.cases * args.repeats
    print(
        f"{n:,} stored samples ({args.cases} cases x {args.repeats} repeats), "
        f"median of {args.rounds} alternated rounds"
    )
    print("| what | built-in contains | user scorer | ratio |")
    print("|---|---|---|---|")
    for what, times in (("scoring the stored samples", stored), ("the scorer calls alone", calls)):
        b, u = median(times["contains"]), median(times["user"])
        print(f"| {what} | {b * 1000:.1f} ms | {u * 1000:.1f} ms | {u / b:.2f}x |")


if __name__ == "__main__":
    main()
