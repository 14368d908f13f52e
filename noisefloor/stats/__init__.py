"""Exact statistics behind the gate: Fisher, Tarone, Holm, Wilson, Newcombe, Welch and power.

Binary statistics are pure Python and exact; scipy is imported lazily, only by the continuous ones.
"""

from __future__ import annotations

from noisefloor.stats.binary import (
    fisher_improve,
    fisher_improve_min,
    fisher_regress,
    fisher_regress_min,
    newcombe,
    wilson,
)
from noisefloor.stats.continuous import WelchResult, paired_mean_ci, welch
from noisefloor.stats.multiplicity import holm, holm_thresholds, tarone, tarone_threshold
from noisefloor.stats.power import (
    doubt_chance,
    fisher_power,
    min_detectable_drop,
    repeats_needed,
    sequential_power,
    t_power,
    t_repeats_needed,
)
from noisefloor.stats.tolerance import P_RTOL, TOL, close, significant

__all__ = [
    "P_RTOL",
    "TOL",
    "WelchResult",
    "close",
    "doubt_chance",
    "fisher_improve",
    "fisher_improve_min",
    "fisher_power",
    "fisher_regress",
    "fisher_regress_min",
    "holm",
    "holm_thresholds",
    "min_detectable_drop",
    "newcombe",
    "paired_mean_ci",
    "repeats_needed",
    "sequential_power",
    "significant",
    "t_power",
    "t_repeats_needed",
    "tarone",
    "tarone_threshold",
    "welch",
    "wilson",
]
