"""The summary a run's result is printed from (`run`, `record`, `rescore`), built from the result's
public attributes: the run, what it cost, and every case's bands.
"""

from __future__ import annotations

from noisefloor.model.run import RunSummary
from noisefloor.model.verdict import side
from noisefloor.operations.run import RunResult

__all__ = ["run_summary"]


def run_summary(result: RunResult) -> RunSummary:
    """What a run without comparison prints, in every format."""
    # validated from the dumps, so that every key set there, and only those, is dumped again
    return RunSummary.model_validate(
        {
            "run": result.run.model_dump(
                mode="json", include={"run_id", "suite", "label", "cases", "rescored_from"}
            ),
            **result.spending(),
            "pending": result.pending,
            "warnings": result.warnings,
            "unmeasured": result.unmeasured,
            "work": result.stats.as_dict(),
            "cases": [
                {
                    "case_id": b.case_id,
                    "outcomes": b.outcomes,
                    "scorers": [{"key": s.label, "side": side(s)} for s in b.scorers],
                }
                for b in result.bands.values()
            ],
        }
    )
