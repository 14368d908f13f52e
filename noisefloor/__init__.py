"""noisefloor: a regression gate for programs that don't give the same answer twice.

The public API is `__all__`; names load on first use so that `import noisefloor` stays cheap.
"""

from __future__ import annotations

from noisefloor.lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "BaselineMissing": "noisefloor.errors",
    "CommandTarget": "noisefloor.targets.command",
    "ExitCode": "noisefloor.errors",
    "FunctionTarget": "noisefloor.targets.function",
    "NoisefloorError": "noisefloor.errors",
    "Params": "noisefloor.scorers.score",
    "REGISTRY": "noisefloor.scorers.registry",
    "RawSample": "noisefloor.targets.base",
    "ReadOnlyStore": "noisefloor.store.store",
    "Report": "noisefloor.model.report",
    "RuleName": "noisefloor.settings",
    "RuleSettings": "noisefloor.settings",
    "RunOptions": "noisefloor.operations.run",
    "ScoreInput": "noisefloor.scorers.score",
    "ScoreResult": "noisefloor.scorers.score",
    "Store": "noisefloor.store.store",
    "Suite": "noisefloor.suite.model",
    "SuiteError": "noisefloor.errors",
    "Target": "noisefloor.targets.base",
    "Verdict": "noisefloor.model.verdict",
    "check_suite": "noisefloor.operations.check",
    "compare_runs": "noisefloor.pipeline.comparison",
    "diff_runs": "noisefloor.operations.resolve",
    "load_suite": "noisefloor.suite.load",
    "rescore_run": "noisefloor.operations.rescore",
    "run_suite": "noisefloor.operations.run",
    "scorer": "noisefloor.scorers.registry",
}

__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
