"""A check's cost budget (`--max-cost`), beside its budget of calls: whether the samples it is about
to take fit in what is left, each priced as the most tokens an answer of its case has taken.

The price of a call is known only once it is answered, so samples are priced before they are
taken from the case's answers seen so far (the baseline's, then the check's own): an answer
longer than any before it can take a check past its budget by that difference, never by a call
the budget did not allow.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from noisefloor.errors import CorruptFile, UsageError
from noisefloor.executors.usage_tally import UsageTally
from noisefloor.model.records import CaseRecord
from noisefloor.model.usage import Price, Tokens, envelope_tokens
from noisefloor.pipeline.banding import read_sample
from noisefloor.store.store import Store

__all__ = ["CostBudget", "check_priced", "cost_budget"]


def _most(a: Tokens | None, b: Tokens | None) -> Tokens | None:
    if a is None or b is None:
        return a or b
    return Tokens(max(a.prompt, b.prompt), max(a.completion, b.completion))


def _stored(store: Store, sample_dir: str) -> Tokens | None:
    """The most tokens of each kind an answer stored in `sample_dir` took."""

    directory = store.abs_str(sample_dir)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return None
    most = None
    for name in names:
        if not (name.startswith("r") and name.endswith(".json")):
            continue
        try:
            sample = read_sample(os.path.join(directory, name))
        except CorruptFile:  # taken again when a run needs it; it prices nothing
            continue
        most = _most(most, envelope_tokens(sample.envelope))
    return most


@dataclass
class CostBudget:
    """What a check may still spend (`max_cost`, at `price`), and what each case's calls cost."""

    max_cost: Decimal
    price: Price
    spent: UsageTally
    """The usage of the samples this check took so far."""
    known: Mapping[str, Tokens | None]
    """Per case id, the most tokens an answer stored before the check took."""

    def per_call(self, case_id: str) -> Decimal:
        """The price of one more call of `case_id`: of its dearest answer so far, else of the
        dearest answer of any case.

        Raises:
            UsageError: No answer of any case reported usage, so nothing can be priced.
        """
        mine = _most(self.known.get(case_id), self.spent.dearest(case_id))
        if mine is None:
            for other in [*self.known, *self.spent.case_ids()]:
                mine = _most(mine, _most(self.known.get(other), self.spent.dearest(other)))
        if mine is None:
            raise UsageError(
                f"--max-cost {self.max_cost} cannot price a call: no stored answer of this "
                "suite reports token usage yet",
                hint="run the check once without --max-cost (its samples are kept and priced "
                "from), or budget with --max-calls",
            )
        return self.price.cost(mine)

    def check_first_look(self, needs: Iterable[tuple[str, int]]) -> None:
        """Refuse a first look that would not fit, before any call (as `--max-calls` does).

        Args:
            needs: Each case id with the samples its first look misses.

        Raises:
            UsageError: The first look's price is above `max_cost`.
        """
        needs = [(case_id, n) for case_id, n in needs if n]
        price = sum((n * self.per_call(case_id) for case_id, n in needs), Decimal(0))
        if price > self.max_cost:
            calls = sum(n for _, n in needs)
            raise UsageError(
                f"--max-cost {self.max_cost} is below the first look's {_amount(price, self.price)} "
                f"({calls} samples, each priced as its case's longest answer so far)",
                hint="raise --max-cost, or look first at fewer repeats (the suite's `repeats`)",
            )

    def left(self) -> Decimal:
        """What the check may still spend: `max_cost` less what its answers so far cost."""
        return self.max_cost - self.spent.spent(self.price)

    def cost_of(self, case_id: str, need: int) -> Decimal:
        """The price of `need` more calls of `case_id`, each as its dearest answer so far."""
        return need * self.per_call(case_id) if need else Decimal(0)


def _amount(value: Decimal, price: Price) -> str:
    return f"{value.normalize():f}" + (f" {price.currency}" if price.currency else "")


def check_priced(max_cost: Decimal | None, price: Price | None) -> None:
    """Refuse `--max-cost` for a target without a price, before any call.

    Raises:
        UsageError: `max_cost` is given and `price` is not.
    """
    if max_cost is not None and price is None:
        raise UsageError(
            f"--max-cost {max_cost} needs the price of a token: the suite's target has none",
            hint="give the endpoint's price under `target.http.price` (`input_per_million`, "
            "`output_per_million`), or budget with --max-calls",
        )


def cost_budget(
    store: Store,
    max_cost: Decimal | None,
    price: Price | None,
    spent: UsageTally,
    before: Iterable[CaseRecord],
) -> CostBudget | None:
    """The check's cost budget, or None without `--max-cost`; `before` are the cases whose
    stored answers price the first calls (the baseline's).

    Raises:
        UsageError: `--max-cost` with a target that has no price.
    """
    check_priced(max_cost, price)
    if max_cost is None or price is None:
        return None
    known: dict[str, Tokens | None] = {}
    for case in before:
        known[case.case_id] = _most(known.get(case.case_id), _stored(store, case.sample_dir))
    return CostBudget(max_cost, price, spent, known)
