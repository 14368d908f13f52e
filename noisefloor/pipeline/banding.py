"""From stored samples to score files and bands: pure, deterministic, never calls a target.

A scorer that raises is recorded as a scorer error beside the scores, never as the target's fault.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import orjson
from pydantic import ValidationError

from noisefloor.errors import CorruptFile, NoisefloorError
from noisefloor.model.records import (
    CaseBand,
    FailingExample,
    RepeatScore,
    RepeatStatus,
    ScoreFile,
    ScorerBand,
    ScorerUse,
)
from noisefloor.scorers.calls import ScorerTimeout, failure
from noisefloor.scorers.registry import REGISTRY, Scorer, UnknownScorer
from noisefloor.scorers.score import NotJson, ScoreInput, unmatched_in
from noisefloor.store.files import dumps
from noisefloor.targets.base import Outcome, RawSample

__all__ = [
    "band_case",
    "build_scorer",
    "keep_written",
    "keepers_for",
    "one_line",
    "read_sample",
    "score_case",
    "scorer_config",
]

#: Characters of a failing output quoted in a band: one terminal line with the scorer's detail.
EXCERPT_CHARS = 120

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class _SampleCache:
    """Samples by file, each kept with the identity of the file it stands for (inode, size,
    modification time): a file replaced or rewritten since is read again. The most recently
    used are kept, at most `size` of them and `budget` bytes of files; the writer's thread puts
    while scoring gets."""

    def __init__(self, size: int, budget: int) -> None:
        self._size = size
        self._budget = budget
        self._bytes = 0
        self._kept: OrderedDict[str, tuple[tuple[int, int, int], RawSample]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str, stat: os.stat_result) -> RawSample | None:
        with self._lock:
            hit = self._kept.get(name)
            if hit is None or hit[0] != _identity(stat):
                return None
            self._kept.move_to_end(name)
            return hit[1]

    def put(self, name: str, stat: os.stat_result, sample: RawSample) -> None:
        with self._lock:
            self._drop(name)
            if stat.st_size > self._budget:
                return
            self._kept[name] = (_identity(stat), sample)
            self._bytes += stat.st_size
            while len(self._kept) > self._size or self._bytes > self._budget:
                self._drop(next(iter(self._kept)))

    def _drop(self, name: str) -> None:
        gone = self._kept.pop(name, None)
        if gone is not None:
            self._bytes -= gone[0][1]


def _identity(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


#: How many samples, and how many bytes of their files, are kept in memory: a run scores the
#: samples it just took without reading them, and a case's repeats are read once.
SAMPLES_KEPT = 4096
SAMPLE_BYTES_KEPT = 64 << 20
_samples = _SampleCache(SAMPLES_KEPT, SAMPLE_BYTES_KEPT)


def _parse_sample(raw: bytes) -> RawSample:
    return RawSample.model_validate(orjson.loads(raw))


def keep_written(item: object, path: Path, data: dict[str, object]) -> None:
    """Keep a sample just written as scoring would read it back (an `OnWritten`, called from
    the writer's thread while the next calls are in flight): parsed from the bytes its file
    holds (the store's serialization of `data`), so that scoring it reads no file. One that
    would not read back is not kept: reading its file says what is wrong with it."""
    raw = dumps(data)
    name = os.fspath(path)
    try:
        sample = _parse_sample(raw)
        _samples.put(name, os.stat(name), sample)
    except (OSError, orjson.JSONDecodeError, ValidationError):
        pass


def keepers_for(count: int) -> tuple[Callable[[object, Path, dict[str, object]], None], ...]:
    """The listeners that keep `count` samples about to be written: `keep_written` when they
    all fit in the cache, none otherwise (a larger run would push each one out before it is
    scored: the writer's thread would parse and validate every sample for nothing)."""
    return (keep_written,) if count <= SAMPLES_KEPT else ()


def read_sample(path: str | Path) -> RawSample:
    """Read one sample file (cached, with the file's identity: a file replaced since is read
    again). A plain string spares a scoring of thousands of samples as many paths to parse.

    Raises:
        CorruptFile: It does not read back as a sample (cut, emptied, garbage, another shape,
            a directory or a symlink loop in its place): it counts as missing, and a run that
            drops it (`Store.drop_sample`) takes it again.
    """
    name = os.fspath(path)
    try:
        stat = os.stat(name)
        kept = _samples.get(name, stat)
        if kept is not None:
            return kept
        with open(name, "rb") as file:
            sample = _parse_sample(file.read())
        _samples.put(name, stat, sample)
        return sample
    except (OSError, orjson.JSONDecodeError, ValidationError) as exc:
        if isinstance(exc, FileNotFoundError) and not os.path.islink(name):
            raise
        if isinstance(exc, ValidationError):
            first = exc.errors(include_url=False)[0]
            why = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        else:
            why = str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
        raise CorruptFile(
            f"corrupt sample {path}: {why}",
            Path(name),
            hint="it counts as missing: `noisefloor store verify --repair` deletes it, and the "
            "next run takes it again",
        ) from None


@lru_cache(maxsize=1024)
def _build(name: str, params_json: bytes, generation: int) -> Scorer:
    return REGISTRY.build(name, orjson.loads(params_json))


def build_scorer(use: ScorerUse) -> Scorer:
    """The scorer a stored spec names, as the code is now (cached: scorers are immutable, until
    a plugin edited since is loaded again in the same process)."""
    params = orjson.dumps(use.params, option=orjson.OPT_SORT_KEYS)
    return _build(use.name, params, REGISTRY.generation)


def scorer_config(use: ScorerUse) -> dict[str, object]:
    """What a score file depends on besides the samples: the scorer as the code is now; a
    plugin's scorer where no suite loaded the plugin (`diff` of stored runs) as the run recorded
    it, so that its score files are found without importing the plugin."""
    try:
        built = build_scorer(use)
    except UnknownScorer:
        return {"name": use.name, "params": use.params, "impl_hash": use.impl_hash}
    return {"name": use.name, "params": built.spec.params, "impl_hash": built.spec.impl_hash}


def _brief(sample: RawSample) -> str:
    text = sample.error or sample.outcome.value
    return text if len(text) <= 200 else text[:197] + "..."


def one_line(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` on one line: backslashes and control characters escaped, cut to `limit` characters
    (then ending in `...`), never in the middle of an escape."""
    out: list[str] = []
    used = 0
    for ch in text:
        if ch in _ESCAPES:
            piece = _ESCAPES[ch]
        elif ch.isprintable():
            piece = ch
        else:
            piece = f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
        if used + len(piece) > limit - 3:
            return "".join(out) + "..."
        out.append(piece)
        used += len(piece)
    return "".join(out)


def _example(
    repeat: RepeatScore, path: str | Path, quoted: dict[int, tuple[str, str]]
) -> FailingExample:
    """One failing repeat as a report quotes it; `quoted` holds the repeats already read."""
    if repeat.repeat not in quoted:
        sample = read_sample(path)
        output = sample.output.text.strip()
        stderr = ""
        if not output and sample.stderr is not None:
            lines = [line for line in sample.stderr.text.splitlines() if line.strip()]
            stderr = one_line(lines[-1].strip()) if lines else ""
        quoted[repeat.repeat] = (one_line(output), stderr)
    output, stderr = quoted[repeat.repeat]
    return FailingExample(repeat=repeat.repeat, output=output, stderr=stderr, detail=repeat.detail)


def score_case(
    case_id: str, use: ScorerUse, sample_paths: Sequence[str | Path], start: int = 0
) -> ScoreFile:
    """Apply one scorer to every repeat of one case: `sample_paths` hold repeats `start`, ...

    Raises:
        NoisefloorError: The scorer is not registered: a plugin's, its suite not loaded.
    """
    try:
        scorer = build_scorer(use)
    except UnknownScorer as exc:
        raise NoisefloorError(
            f"case {case_id}: {exc}, which these samples were never scored with",
            hint="a plugin's scorer is known once its suite is loaded: `noisefloor rescore SUITE` "
            "scores stored samples with the suite's plugins",
        ) from None
    current = use.model_copy(
        update={"impl_hash": scorer.spec.impl_hash, "params": scorer.spec.params}
    )
    repeats: list[RepeatScore] = []
    # a scorer that ran past its timeout is not called on the case's other repeats: one stuck
    # on every output would take its timeout times the repeats
    stuck: str | None = None
    for repeat, path in enumerate(sample_paths, start):
        sample = read_sample(path)
        if sample.outcome is Outcome.INFRA:
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.INFRA_ERROR,
                    outcome=sample.outcome.value,
                    detail=_brief(sample),
                )
            )
            continue
        if sample.outcome is not Outcome.OK:
            detail = f"{sample.outcome.value}: {_brief(sample)}"
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.TARGET_ERROR,
                    outcome=sample.outcome.value,
                    detail=detail,
                )
            )
            continue
        if stuck is not None:
            repeats.append(
                RepeatScore(repeat=repeat, status=RepeatStatus.SCORER_ERROR, detail=stuck)
            )
            continue
        try:
            result = scorer(ScoreInput.from_sample(sample))
        except NotJson as exc:  # `inp.json()` on an output that is not: the output fails
            value = 0.0 if scorer.kind == "binary" else None
            repeats.append(
                RepeatScore(repeat=repeat, status=RepeatStatus.FAIL, value=value, detail=str(exc))
            )
            continue
        except Exception as exc:  # a scorer bug: kept apart from the target's results
            if scorer.definition.builtin:
                detail, trace = f"{type(exc).__name__}: {exc}", None
            else:  # a user's: where in their code, and the traceback for `show`
                detail, trace = failure(exc, scorer.definition.defined_at)
            if isinstance(exc, ScorerTimeout):
                stuck = (
                    f"{scorer.definition.defined_at}: not called: it ran past its timeout on "
                    f"repeat {repeat} of this case"
                )
            repeats.append(
                RepeatScore(
                    repeat=repeat,
                    status=RepeatStatus.SCORER_ERROR,
                    detail=detail,
                    traceback=trace,
                )
            )
            continue
        repeats.append(
            RepeatScore(
                repeat=repeat,
                status=RepeatStatus.PASS if result.passed else RepeatStatus.FAIL,
                value=result.value,
                detail=result.detail,
                reliable=result.reliable,
            )
        )
    return ScoreFile(
        case_id=case_id,
        scorer=current,
        kind=scorer.kind,
        direction=scorer.direction,
        repeats=repeats,
    )


def _top(details: Sequence[str], limit: int = 5) -> list[str]:
    counts = Counter(d for d in details if d)
    return [d for d, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def band_case(
    case_id: str,
    case_key: str,
    scores: Sequence[ScoreFile],
    sample_paths: Sequence[str | Path] = (),
    start: int = 0,
) -> CaseBand:
    """Collapse every scorer's repeats of one case into counts and values.

    Every score file records each repeat's outcome, so the case's outcomes come from the first.
    Given the case's sample files (repeats `start`, ...), each scorer's first failing repeat is
    quoted from its sample
    (samples never change, so the band stays a function of its score files).
    """
    first = scores[0].repeats if scores else []
    outcomes = Counter(r.outcome for r in first)
    # scorers of one case often fail on the same repeat: read each quoted sample once
    quoted: dict[int, tuple[str, str]] = {}
    errors = _top([r.detail for r in first if r.outcome != Outcome.OK.value])
    bands = []
    for score in scores:
        counts = Counter(r.status for r in score.repeats)
        values = [
            r.value
            for r in score.repeats
            if r.status in (RepeatStatus.PASS, RepeatStatus.FAIL) and r.value is not None
        ]
        failing = [r.detail for r in score.repeats if r.status is not RepeatStatus.PASS]
        first_fail = next(
            (
                r
                for r in score.repeats
                if r.status in (RepeatStatus.FAIL, RepeatStatus.TARGET_ERROR)
                and 0 <= r.repeat - start < len(sample_paths)
            ),
            None,
        )
        scored = {
            unmatched_in(r.detail)
            for r in score.repeats
            if r.status in (RepeatStatus.PASS, RepeatStatus.FAIL)
        }
        use = score.scorer
        error = next((r for r in score.repeats if r.status is RepeatStatus.SCORER_ERROR), None)
        bands.append(
            ScorerBand(
                label=use.label,
                name=use.name,
                kind=score.kind,
                direction=score.direction,
                impl_hash=use.impl_hash,
                params=use.params,
                n=counts[RepeatStatus.PASS]
                + counts[RepeatStatus.FAIL]
                + counts[RepeatStatus.TARGET_ERROR],
                k=counts[RepeatStatus.PASS],
                target_errors=counts[RepeatStatus.TARGET_ERROR],
                infra_errors=counts[RepeatStatus.INFRA_ERROR],
                scorer_errors=counts[RepeatStatus.SCORER_ERROR],
                values=[float(v) for v in values],
                reliable=all(r.reliable for r in score.repeats),
                details=_top(failing),
                example=_example(first_fail, sample_paths[first_fail.repeat - start], quoted)
                if first_fail is not None
                else None,
                scorer_error=f"repeat {error.repeat}: {error.detail}" if error else None,
                unmatched=next(iter(scored)) if len(scored) == 1 else None,
            )
        )
    return CaseBand(
        case_id=case_id,
        case_key=case_key,
        repeats=len(first),
        outcomes=dict(sorted(outcomes.items())),
        errors=errors,
        scorers=bands,
    )
