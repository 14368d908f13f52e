"""Exact statistics behind the gate: Fisher, Tarone, Holm, Wilson, Newcombe, Welch, power and
the group-sequential looks.

Binary statistics are pure Python and exact; scipy is imported lazily, only by the continuous ones.
"""

from __future__ import annotations

from noisefloor.stats.binary import (
    binomial_below,
    binomial_upper,
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
    fisher_power,
    min_detectable_drop,
    repeats_needed,
    t_power,
    t_repeats_needed,
)
from noisefloor.stats.sequential import Looks, look_outcome, spending
from noisefloor.stats.tolerance import P_RTOL, TOL, close, significant

__all__ = [
    "Looks",
    "P_RTOL",
    "TOL",
    "WelchResult",
    "binomial_below",
    "binomial_upper",
    "close",
    "fisher_improve",
    "fisher_improve_min",
    "fisher_power",
    "fisher_regress",
    "fisher_regress_min",
    "holm",
    "holm_thresholds",
    "look_outcome",
    "min_detectable_drop",
    "newcombe",
    "paired_mean_ci",
    "repeats_needed",
    "significant",
    "spending",
    "t_power",
    "t_repeats_needed",
    "tarone",
    "tarone_threshold",
    "welch",
    "wilson",
]
