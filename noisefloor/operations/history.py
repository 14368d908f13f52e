"""`noisefloor history`: a case's runs, or a suite's, read from the ledger, with the messages for a
case or suite the ledger does not hold. Never calls a target.
"""

from __future__ import annotations

from noisefloor.errors import NoisefloorError, UsageError
from noisefloor.pipeline.indexing import open_ledger
from noisefloor.rules.history import CaseHistory, case_history, suite_history
from noisefloor.store.store import Store

__all__ = ["history_of_case", "history_of_suite"]

_REBUILD = "`noisefloor ledger rebuild` indexes runs made before the ledger existed"


def history_of_case(store: Store, case_id: str, suite: str | None, last: int) -> CaseHistory:
    """One case across its newest `last` runs (of `suite`, when given).

    Raises:
        NoisefloorError: No run in the ledger holds the case.
        UsageError: Several suites hold it and `suite` is None.
    """
    with open_ledger(store.root) as ledger:
        rows = ledger.history(case_id, suite)
    if not rows:
        where = f" of suite {suite!r}" if suite else ""
        raise NoisefloorError(f"no run{where} in the ledger has a case {case_id!r}", hint=_REBUILD)
    return case_history(rows, case_id, last)


def history_of_suite(
    store: Store, suite: str | None, last: int, case_id: str | None = None
) -> tuple[str, list[CaseHistory]]:
    """Every case of a suite (or one) across its newest `last` runs; without `suite`, the only
    suite the store holds. Returns the suite's name and its cases, worst first.

    Raises:
        UsageError: No suite is named and the store holds several, or none.
        NoisefloorError: The ledger holds no run of the suite (with that case).
    """
    if suite is None:
        suites = sorted({name for name, _ in store.runs()})
        if len(suites) != 1:
            raise UsageError(
                f"the store under {store.root} holds "
                + (f"{len(suites)} suites: {', '.join(suites)}" if suites else "no run"),
                hint=f"`--suite {suites[0]}` picks one" if suites else "`noisefloor run SUITE`",
            )
        suite = suites[0]
    with open_ledger(store.root) as ledger:
        rows = ledger.history(case_id, suite)
    if not rows:
        what = f"a case {case_id!r}" if case_id else "any case"
        raise NoisefloorError(f"no run of suite {suite!r} in the ledger has {what}", hint=_REBUILD)
    return suite, suite_history(rows, last)
