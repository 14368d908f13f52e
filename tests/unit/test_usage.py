"""Unit tests of token usage and its price: the suite's price, what an envelope reports, the sums a
report shows (never a zero the endpoint did not say), the `tokens` scorer and the cost budget."""

from __future__ import annotations

import argparse
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from noisefloor.cli.options import money
from noisefloor.errors import SuiteError, UsageError
from noisefloor.executors.base import Pending
from noisefloor.executors.usage_tally import UsageTally
from noisefloor.model.records import CaseRecord
from noisefloor.model.usage import Price, Tokens, envelope_tokens
from noisefloor.operations.cost_budget import CostBudget, check_priced
from noisefloor.report._usage import amount, usage_text
from noisefloor.scorers.registry import REGISTRY
from noisefloor.scorers.score import ScoreInput
from noisefloor.suite.json_schema import suite_json_schema
from noisefloor.suite.load import load_suite
from noisefloor.suite.targets import build_target

SUITE = """\
name: priced
target:
  http:
    base_url: http://127.0.0.1:9/v1
    model: m
{price}cases:
  - id: a
    input: hello
    scorers: [json_valid]
"""


def suite_file(tmp_path: Path, price: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(price=price), encoding="utf-8")
    return path


def pending(case_id: str) -> Pending:
    case = CaseRecord(
        case_id=case_id, case_key="k", input="", repeats=1, sample_dir="d", scorers=[]
    )
    return Pending(case=case, repeat=0, file="r0.json", input="")


def written(tally: UsageTally, case_id: str, usage: Any) -> None:
    """Tell `tally` of one sample of `case_id` whose envelope holds `usage`."""
    envelope = None if usage is None else {"usage": usage}
    tally(pending(case_id), Path("r0.json"), {"envelope": envelope})


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


PRICE = Price(input_per_million=Decimal("0.5"), output_per_million=Decimal(2), currency="EUR")


# -- the suite's price ------------------------------------------------------------------------


def test_a_price_is_read_exactly_and_leaves_the_target_version_alone(tmp_path: Path) -> None:
    plain = build_target(load_suite(suite_file(tmp_path, "")))
    price = "    price: {input_per_million: 0.15, output_per_million: 0.6, currency: USD}\n"
    priced = build_target(load_suite(suite_file(tmp_path, price)))

    assert priced.price == Price(
        input_per_million=Decimal("0.15"), output_per_million=Decimal("0.6"), currency="USD"
    )
    assert plain.price is None
    # a new price changes what reports say a call costs, never which samples are reused
    assert priced.record.key == plain.record.key
    assert priced.record.spec == plain.record.spec


@pytest.mark.parametrize(
    ("price", "says"),
    [
        ("    price: {input_per_million: -1, output_per_million: 1}\n", "greater than or equal"),
        ("    price: {input_per_million: 1}\n", "output_per_million"),
        ("    price: {input_per_million: 1, output_per_million: 1, cost: 2}\n", "cost"),
    ],
    ids=["negative", "missing-output", "unknown-key"],
)
def test_a_bad_price_names_its_line_and_field(tmp_path: Path, price: str, says: str) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite(suite_file(tmp_path, price))
    message = info.value.format_message()
    assert "suite.yaml:6" in message and "target.http.price" in message and says in message


def test_the_suite_schema_describes_the_price() -> None:
    schema = suite_json_schema()
    price = schema["$defs"]["Price"]
    assert price["required"] == ["input_per_million", "output_per_million"]
    assert price["additionalProperties"] is False
    assert "a million prompt" in price["properties"]["input_per_million"]["description"]
    http = schema["$defs"]["HttpSpec"]["properties"]["price"]
    assert {"$ref": "#/$defs/Price"} in http["anyOf"]


def test_a_cost_is_exact_per_million_tokens() -> None:
    price = Price.model_validate({"input_per_million": 0.15, "output_per_million": 0.6})
    # floats would give 4.6500000000000005e-06
    assert price.cost(Tokens(3, 7)) == Decimal("0.00000465")
    assert price.cost(Tokens()) == 0


# -- what an envelope reports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("envelope", "tokens"),
    [
        ({"usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}}, Tokens(9, 2)),
        ({"usage": {"prompt_tokens": 0, "completion_tokens": 0}}, Tokens(0, 0)),
        (None, None),
        ({"usage": None}, None),
        ({"status": 500}, None),
        ({"usage": {"total_tokens": 11}}, None),
        ({"usage": {"prompt_tokens": 9, "completion_tokens": True}}, None),
        ({"usage": {"prompt_tokens": -1, "completion_tokens": 2}}, None),
        ({"usage": {"prompt_tokens": "9", "completion_tokens": 2}}, None),
        ({"usage": [9, 2]}, None),
    ],
    ids=[
        "counts",
        "zeros-said",
        "command",
        "null-usage",
        "error",
        "total-only",
        "bool",
        "negative",
        "text",
        "list",
    ],
)
def test_envelope_tokens_trusts_only_counts_the_endpoint_gave(
    envelope: dict[str, Any] | None, tokens: Tokens | None
) -> None:
    assert envelope_tokens(envelope) == tokens


# -- the sums a report shows ------------------------------------------------------------------


def test_a_tally_sums_per_case_and_in_all_and_prices_exactly() -> None:
    tally = UsageTally()
    written(tally, "a", usage(10, 2))
    written(tally, "a", usage(10, 4))
    written(tally, "b", usage(20, 1))

    total = tally.usage(PRICE).dump()
    assert total == {
        "samples": 3,
        "unreported": 0,
        "prompt_tokens": 40,
        "completion_tokens": 7,
        "cost": 0.000034,  # (40 * 0.5 + 7 * 2) / 1e6
        "currency": "EUR",
    }
    assert tally.usage(PRICE, "a").dump()["completion_tokens"] == 6
    assert tally.spent(PRICE) == Decimal("0.000034")
    assert tally.dearest("a") == Tokens(10, 4)


def test_samples_without_usage_are_counted_apart_never_as_zero() -> None:
    tally = UsageTally()
    written(tally, "a", None)
    written(tally, "a", None)
    written(tally, "b", usage(5, 1))

    unknown = tally.usage(PRICE, "a")
    assert (unknown.prompt_tokens, unknown.completion_tokens, unknown.cost) == (None, None, None)
    assert (unknown.samples, unknown.unreported) == (2, 2)
    assert "unknown" in usage_text(unknown)

    partial = tally.usage(PRICE)
    assert (partial.prompt_tokens, partial.unreported, partial.samples) == (5, 2, 3)
    assert usage_text(partial) == (
        "5 prompt + 1 completion tokens, cost 0.0000045 EUR "
        "(2 of 3 samples reported no usage: not counted)"
    )


def test_no_sample_taken_costs_nothing_and_without_a_price_no_cost_is_shown() -> None:
    tally = UsageTally()
    assert tally.usage(PRICE, "a").dump() == {
        "samples": 0,
        "unreported": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost": 0.0,
        "currency": "EUR",
    }
    written(tally, "a", usage(3, 1))
    shown = tally.usage(None).dump()
    assert "cost" not in shown and "currency" not in shown
    assert usage_text(tally.usage(None)) == "3 prompt + 1 completion tokens"


@pytest.mark.parametrize(
    ("value", "currency", "text"),
    [(0.0000275, None, "0.0000275"), (12.5, "USD", "12.5 USD"), (0.0, None, "0")],
)
def test_an_amount_is_written_without_an_exponent(
    value: float, currency: str | None, text: str
) -> None:
    assert amount(value, currency) == text


# -- the tokens scorer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "value", "passed", "detail"),
    [
        ({}, 4.0, True, "4 completion tokens"),
        ({"count": "prompt"}, 9.0, True, "9 prompt tokens"),
        ({"count": "total", "max": 12}, 13.0, False, "13 total over 12"),
        ({"max": 4}, 4.0, True, "4 completion tokens"),
    ],
)
def test_the_tokens_scorer_reads_the_reported_count(
    params: dict[str, Any], value: float, passed: bool, detail: str
) -> None:
    scorer = REGISTRY.build("tokens", params)
    result = scorer(ScoreInput(text="x", tokens=Tokens(9, 4)))
    assert (result.value, result.passed, result.detail) == (value, passed, detail)
    assert (scorer.kind, scorer.direction) == ("continuous", "lower_is_better")


def test_the_tokens_scorer_fails_an_answer_without_usage_with_no_made_up_count() -> None:
    result = REGISTRY.build("tokens")(ScoreInput(text="x"))
    assert (result.value, result.passed) == (None, False)
    assert "no usage" in result.detail


# -- the cost budget --------------------------------------------------------------------------

#: One call of case `a` costs (10 * 0.5 + 2 * 2) / 1e6 = 0.000009.
CALL = Decimal("0.000009")


def budget(max_cost: Decimal, known: dict[str, Tokens | None]) -> CostBudget:
    return CostBudget(max_cost, PRICE, UsageTally(), known)


def test_a_first_look_that_lands_exactly_on_the_budget_is_taken() -> None:
    budget(5 * CALL, {"a": Tokens(10, 2)}).check_first_look([("a", 5)])
    with pytest.raises(
        UsageError, match=r"--max-cost 0.000044 is below the first look's 0.000045 EUR"
    ):
        budget(Decimal("0.000044"), {"a": Tokens(10, 2)}).check_first_look([("a", 5)])


def test_what_is_left_is_the_budget_less_what_the_answers_cost() -> None:
    cost = budget(10 * CALL, {"a": Tokens(10, 2)})
    for _ in range(5):  # the first look took five calls of case a
        written(cost.spent, "a", usage(10, 2))
    assert cost.left() == 5 * CALL
    assert cost.cost_of("a", 5) == 5 * CALL  # a next look of five lands exactly on it
    assert cost.cost_of("a", 0) == 0


def test_a_confirmation_is_priced_by_the_longest_answer_its_case_gave() -> None:
    cost = budget(Decimal(1), {"a": Tokens(10, 2)})
    written(cost.spent, "a", usage(10, 50))  # the candidate answers longer than the baseline
    assert cost.per_call("a") == PRICE.cost(Tokens(10, 50))


def test_a_case_never_answered_is_priced_as_the_dearest_case() -> None:
    cost = budget(Decimal(1), {"a": Tokens(10, 2), "b": Tokens(30, 1), "new": None})
    assert cost.per_call("new") == PRICE.cost(Tokens(30, 2))


def test_nothing_to_price_from_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no stored answer of this suite reports token usage"):
        budget(Decimal(1), {"a": None}).check_first_look([("a", 5)])


def test_a_budget_without_a_price_is_refused() -> None:
    check_priced(None, None)
    check_priced(Decimal(1), PRICE)
    with pytest.raises(UsageError, match="needs the price of a token") as info:
        check_priced(Decimal(1), None)
    assert info.value.hint is not None and "target.http.price" in info.value.hint


@pytest.mark.parametrize("text", ["0", "-1", "abc", "nan", "inf"])
def test_max_cost_must_be_an_amount_above_zero(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        money(text)


def test_max_cost_is_kept_exactly_as_written() -> None:
    assert money("0.1") == Decimal("0.1")
