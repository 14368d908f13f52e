"""Unit tests of scoring: stored samples to score files to bands, with errors kept apart.

Samples are written as the store writes them; nothing here calls a target.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from noisefloor.model.records import RepeatScore, RepeatStatus, ScoreFile, ScorerUse
from noisefloor.pipeline.banding import band_case, one_line, read_sample, score_case
from noisefloor.scorers.registry import REGISTRY, Registry
from noisefloor.scorers.score import NoParams, ScoreInput, ScoreResult
from noisefloor.store.files import dumps
from noisefloor.store.store import Store
from noisefloor.targets.base import Outcome, RawSample, decode_stream


def sample(
    output: str | bytes = "",
    outcome: Outcome = Outcome.OK,
    *,
    error: str | None = None,
    repeat: int = 0,
    wall_s: float = 0.5,
    concurrency: int = 1,
) -> RawSample:
    data = output.encode() if isinstance(output, str) else output
    return RawSample(
        kind="command",
        case_id="c",
        repeat=repeat,
        outcome=outcome,
        error=error,
        output=decode_stream(data),
        exit_code=0 if outcome is Outcome.OK else 1,
        wall_s=wall_s,
        concurrency=concurrency,
    )


def write_samples(directory: Path, samples: list[RawSample]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, s in enumerate(samples):
        path = directory / f"r{i}.json"
        path.write_bytes(dumps(s.model_copy(update={"repeat": i})))
        paths.append(path)
    return paths


def use(name: str, label: str | None = None, **params: Any) -> ScorerUse:
    """A scorer as a run records it; the impl hash is stale on purpose."""
    return ScorerUse(label=label or f"0:{name}", name=name, params=params, impl_hash="stale")


def statuses(score: ScoreFile) -> list[str]:
    return [r.status.value for r in score.repeats]


@pytest.fixture
def test_scorer(monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """Register a scorer under a unique name on the global registry for one test only."""

    def register(fn: Callable[[ScoreInput, NoParams], Any]) -> str:
        name = f"test_{uuid.uuid4().hex[:12]}"
        scratch = Registry()
        scratch.scorer(name, params=NoParams)(fn)
        monkeypatch.setitem(REGISTRY._defs, name, scratch.get(name))
        return name

    return register


def _boom_on_b(inp: ScoreInput, p: NoParams) -> ScoreResult:
    """Raises on output `b`, passes otherwise."""
    if inp.text == "b":
        raise RuntimeError("boom")
    return ScoreResult(value=1.0, passed=True, detail="ok")


def _not_a_result(inp: ScoreInput, p: NoParams) -> ScoreResult:
    """Returns the wrong type."""
    return "yes"  # type: ignore[return-value]


# --- score_case ----------------------------------------------------------------------------


def test_ok_samples_are_scored(tmp_path: Path) -> None:
    paths = write_samples(tmp_path, [sample("Paris"), sample("London"), sample("paris!")])

    score = score_case("c", use("contains", needle="Paris"), paths)

    assert statuses(score) == ["pass", "fail", "pass"]
    assert [r.repeat for r in score.repeats] == [0, 1, 2]
    assert [r.value for r in score.repeats] == [1.0, 0.0, 1.0]
    assert score.repeats[1].detail == "'Paris' not found"
    assert (score.case_id, score.kind, score.direction) == ("c", "binary", "higher_is_better")


def test_target_errors_are_target_errors(tmp_path: Path) -> None:
    paths = write_samples(
        tmp_path,
        [
            sample("{}"),
            sample("", Outcome.EXIT, error="exit status 3"),
            sample("", Outcome.TIMEOUT, error="killed after 2s"),
            sample("{oops", Outcome.PARSE, error="output is not JSON"),
        ],
    )

    score = score_case("c", use("json_valid"), paths)

    assert statuses(score) == ["pass", "target_error", "target_error", "target_error"]
    assert score.repeats[1].detail == "error:exit: exit status 3"
    assert score.repeats[2].detail == "error:timeout: killed after 2s"
    assert all(r.value is None for r in score.repeats[1:])


def test_infrastructure_errors_are_infra_errors(tmp_path: Path) -> None:
    paths = write_samples(
        tmp_path, [sample("{}"), sample("", Outcome.INFRA, error="HTTP 503 after 5 retries")]
    )

    score = score_case("c", use("json_valid"), paths)

    assert statuses(score) == ["pass", "infra_error"]
    assert score.repeats[1].detail == "HTTP 503 after 5 retries"
    assert score.repeats[1].value is None


def test_a_scorer_that_raises_is_a_scorer_error(
    tmp_path: Path, test_scorer: Callable[..., str]
) -> None:
    name = test_scorer(_boom_on_b)
    paths = write_samples(tmp_path, [sample("a"), sample("b"), sample("c")])

    score = score_case("c", use(name), paths)

    assert statuses(score) == ["pass", "scorer_error", "pass"]
    # a user's scorer: the detail names the line of their code, the traceback is kept
    line = _boom_on_b.__code__.co_firstlineno + 3
    assert (
        score.repeats[1].detail
        == f"tests/unit/test_scoring.py:{line} in _boom_on_b: RuntimeError: boom"
    )
    trace = score.repeats[1].traceback
    assert trace is not None and 'raise RuntimeError("boom")' in trace
    assert "noisefloor/" not in trace  # the harness's own frames are left out
    assert score.repeats[1].value is None
    assert score.repeats[0].traceback is None


def test_a_scorer_returning_the_wrong_type_is_a_scorer_error(
    tmp_path: Path, test_scorer: Callable[..., str]
) -> None:
    name = test_scorer(_not_a_result)
    paths = write_samples(tmp_path, [sample("a")])

    score = score_case("c", use(name), paths)

    assert statuses(score) == ["scorer_error"]
    line = _not_a_result.__code__.co_firstlineno
    assert score.repeats[0].detail == (
        f"tests/unit/test_scoring.py:{line} in _not_a_result: TypeError: scorer {name!r} "
        "returned str 'yes', not a bool or a ScoreResult"
    )


def test_test_scorer_is_gone_after_its_test() -> None:
    assert not any(n.startswith("test_") for n in REGISTRY.names())


def test_score_file_records_the_scorer_as_the_code_is_now(tmp_path: Path) -> None:
    paths = write_samples(tmp_path, [sample("x")])
    stale = use("contains", label="2:contains", needle="x")
    stale = stale.model_copy(update={"min_effect": 0.3})

    score = score_case("c", stale, paths)

    built = REGISTRY.build("contains", {"needle": "x"})
    assert score.scorer.impl_hash == built.spec.impl_hash != "stale"
    assert score.scorer.params == {"needle": "x", "path": None, "case_sensitive": False}
    assert (score.scorer.label, score.scorer.min_effect) == ("2:contains", 0.3)


def test_continuous_scorer_kind_and_direction(tmp_path: Path) -> None:
    paths = write_samples(tmp_path, [sample("x", wall_s=0.25), sample("x", wall_s=2.0)])

    score = score_case("c", use("latency", max_s=1.0), paths)

    assert (score.kind, score.direction) == ("continuous", "lower_is_better")
    assert statuses(score) == ["pass", "fail"]
    assert [r.value for r in score.repeats] == [0.25, 2.0]


def test_no_sample_files_gives_no_repeats(tmp_path: Path) -> None:
    assert score_case("c", use("json_valid"), []).repeats == []


def test_read_sample_keeps_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    raw = b"caf\xe9 \x00\xff"
    (path,) = write_samples(tmp_path, [sample(raw)])

    assert read_sample(path).output.raw() == raw


# --- band_case -----------------------------------------------------------------------------


def _mixed(tmp_path: Path, test_scorer: Callable[..., str]) -> tuple[list[RawSample], ScoreFile]:
    samples = [
        sample("a"),
        sample("b"),  # the scorer raises
        sample("", Outcome.EXIT, error="exit status 1"),
        sample("", Outcome.INFRA, error="connection refused"),
        sample("a"),
        sample("", Outcome.EXIT, error="exit status 1"),
    ]
    name = test_scorer(_boom_on_b)
    score = score_case("c", use(name), write_samples(tmp_path, samples))
    return samples, score


def test_band_counts(tmp_path: Path, test_scorer: Callable[..., str]) -> None:
    samples, score = _mixed(tmp_path, test_scorer)

    band = band_case("c", "key", [score])
    (scorer,) = band.scorers

    # n counts passes, fails and target errors; infrastructure and scorer errors are out.
    assert (scorer.n, scorer.k) == (4, 2)
    assert (scorer.target_errors, scorer.infra_errors, scorer.scorer_errors) == (2, 1, 1)
    assert scorer.values == [1.0, 1.0]
    assert band.outcomes == {"error:exit": 2, "error:infra": 1, "ok": 3}
    assert list(band.outcomes) == sorted(band.outcomes)
    assert (band.repeats, band.answered, band.infra, band.valid) == (6, 3, 1, 5)
    assert band.errors == ["error:exit: exit status 1", "connection refused"]
    assert (band.case_id, band.case_key) == ("c", "key")


def test_band_quotes_the_first_failing_repeat_of_each_scorer(tmp_path: Path) -> None:
    """A fail or a target error is quoted from its sample; a scorer error is not a failing output."""
    samples = [
        sample("Paris"),
        sample("", Outcome.EXIT, error="exit status 1"),
        sample("Lyon\nand more"),
    ]
    paths = write_samples(tmp_path, samples)
    samples[1] = samples[1].model_copy(
        update={"stderr": decode_stream(b"Traceback\nValueError: x\n")}
    )
    paths[1].write_bytes(dumps(samples[1].model_copy(update={"repeat": 1})))
    scores = [
        score_case("c", use("contains", "0:contains", needle="Paris"), paths),
        score_case("c", use("contains", "1:contains", needle="a"), paths),
        score_case("c", use("contains", "2:contains", needle="P"), [paths[0]]),
    ]

    band = band_case("c", "key", scores, paths)

    first, second, passing = (b.example for b in band.scorers)
    assert first is not None and second is not None
    assert (first.repeat, first.output, first.stderr) == (1, "", "ValueError: x")
    assert first.detail == "error:exit: exit status 1"
    assert (second.repeat, second.output) == (1, "")
    assert passing is None
    fails_only = score_case(
        "c", use("contains", "0:contains", needle="Paris"), [paths[0], paths[2]]
    )
    (quoted,) = band_case("c", "key", [fails_only], [paths[0], paths[2]]).scorers
    assert quoted.example is not None
    assert (quoted.example.repeat, quoted.example.output) == (1, "Lyon\\nand more")
    assert quoted.example.detail == "'Paris' not found"
    # no sample files given: counts only, and the band bytes do not depend on the call
    assert band_case("c", "key", scores).scorers[0].example is None
    assert dumps(band_case("c", "key", scores, paths)) == dumps(band)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("two\nlines\tand\\ a \x07 bell", "two\\nlines\\tand\\\\ a \\x07 bell"),
        ("ünïcode stays \u2028", "ünïcode stays \\u2028"),
        ("x" * 200, "x" * 117 + "..."),
        ("\n" * 100, "\\n" * 58 + "..."),
    ],
    ids=["plain", "escapes", "unicode", "long", "long-escapes"],
)
def test_one_line_escapes_and_shortens(text: str, shown: str) -> None:
    assert one_line(text) == shown
    assert len(one_line(text)) <= 120


def test_band_values_come_only_from_scored_repeats(tmp_path: Path) -> None:
    samples = [
        sample('{"score": 3}'),
        sample('{"score": "n/a"}'),  # no number: a fail without a value
        sample('{"score": 1.5}'),
        sample("", Outcome.EXIT, error="exit status 1"),
        sample('{"score": 2}'),
    ]
    score = score_case(
        "c", use("json_path_number", path="score", min=2), write_samples(tmp_path, samples)
    )

    (band,) = band_case("c", "key", [score]).scorers

    assert band.kind == "continuous"
    assert (band.n, band.k, band.target_errors) == (5, 2, 1)
    assert band.values == [3.0, 1.5, 2.0]  # repeat order; the repeat without a number is out


def test_band_details_most_frequent_first() -> None:
    """Distinct failure details, most frequent first, ties by text, at most five; passes out."""
    failing = ["x", "b", "a", "b", "c", "a", "b", "d", "e", "f"]
    repeats = [
        RepeatScore(repeat=i, status=RepeatStatus.FAIL, value=0.0, detail=f"missing:{t}")
        for i, t in enumerate(failing)
    ]
    repeats += [RepeatScore(repeat=10 + i, status=RepeatStatus.PASS, value=1.0) for i in range(4)]
    score = ScoreFile(
        case_id="c",
        scorer=use("json_fields"),
        kind="binary",
        direction="higher_is_better",
        repeats=repeats,
    )

    (band,) = band_case("c", "key", [score]).scorers

    assert band.details == ["missing:b", "missing:a", "missing:c", "missing:d", "missing:e"]
    assert (band.n, band.k) == (14, 4)


def test_band_is_unreliable_when_any_repeat_is(tmp_path: Path) -> None:
    samples = [sample("x"), sample("x", concurrency=4), sample("x")]
    score = score_case("c", use("latency"), write_samples(tmp_path, samples))

    (band,) = band_case("c", "key", [score]).scorers

    assert band.reliable is False
    assert band_case("c", "key", [score]).scorers[0].n == 3


def test_band_of_several_scorers_keeps_their_order(tmp_path: Path) -> None:
    samples = [sample('{"a": 1}'), sample("nope")]
    paths = write_samples(tmp_path, samples)
    scores = [
        score_case("c", use("json_valid", label="0:json_valid"), paths),
        score_case("c", use("contains", label="1:contains", needle="a"), paths),
    ]

    band = band_case("c", "key", scores)

    assert [s.label for s in band.scorers] == ["0:json_valid", "1:contains"]
    assert [(s.k, s.n) for s in band.scorers] == [(1, 2), (1, 2)]
    assert band.scorers[0].details == ["not_json"]


# --- determinism ---------------------------------------------------------------------------


def test_score_and_band_files_are_byte_identical_when_recomputed(
    tmp_path: Path, test_scorer: Callable[..., str]
) -> None:
    samples, _ = _mixed(tmp_path / "first", test_scorer)
    paths = sorted((tmp_path / "first").glob("r*.json"), key=lambda p: int(p.stem[1:]))
    store = Store(tmp_path / "root")
    score_path = store.derived_dir("scores", "s", "c") / "0.json"
    band_path = store.derived_dir("bands", "s") / "c.json"
    scorer = use("contains", needle="a")

    first = score_case("c", scorer, paths)
    store.write_json(score_path, first)
    store.write_json(band_path, band_case("c", "key", [first]))

    # Recompute from a copy of the samples (new paths: nothing cached) and from the same ones.
    shutil.copytree(tmp_path / "first", tmp_path / "second")
    copies = sorted((tmp_path / "second").glob("r*.json"), key=lambda p: int(p.stem[1:]))
    for again in (score_case("c", scorer, copies), score_case("c", scorer, paths)):
        assert dumps(again) == score_path.read_bytes()
        assert dumps(band_case("c", "key", [again])) == band_path.read_bytes()
    assert b"stale" not in score_path.read_bytes()


def _answer_of(inp: ScoreInput, p: NoParams) -> bool:
    """Passes when the JSON output has an answer."""
    return bool(inp.json()["answer"])


def test_a_scorer_reading_an_output_that_is_not_json_fails_that_repeat(
    tmp_path: Path, test_scorer: Callable[..., str]
) -> None:
    name = test_scorer(_answer_of)
    paths = write_samples(tmp_path, [sample('{"answer": "yes"}'), sample("yes, plainly")])

    score = score_case("c", use(name), paths)

    assert statuses(score) == ["pass", "fail"]
    assert (score.repeats[1].value, score.repeats[1].detail) == (0.0, "output is not JSON")
