"""The noise floor's decision rule (docs/protocol.md, "Noise floor"), fixed before the data.

At an endpoint, with per-seed excesses ``d`` and the margin δ = ``margin_rel`` x mean noise
floor, each test a paired t test at level ``alpha``:

    larger than SGD noise             one-sided, rejects  mean(d) <= δ
    smaller than SGD noise            one-sided, rejects  mean(d) >= -δ
    indistinguishable from SGD noise  TOST, rejects both  mean(d) <= -δ  and  mean(d) >= δ
    inconclusive                      none of these

No two can hold at once: the first two put the (1 - 2 alpha) t interval beyond ±δ, the third
inside it. Beside the verdict, the power line: the smallest mean excess a two-sided paired t
test at level ``alpha`` detects with probability ``power`` at this n and observed SD, and the
half-width of the (1 - alpha) t interval of the observed mean.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import scipy.stats as sps
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from workflow.stats import tost

LARGER, SMALLER = "larger than SGD noise", "smaller than SGD noise"
INDISTINGUISHABLE, INCONCLUSIVE = "indistinguishable from SGD noise", "inconclusive"


@dataclass(frozen=True)
class Decision:
    n: int
    excess: float
    floor: float
    margin: float
    p_above_margin: float
    p_below_margin: float
    p_tost: float
    ci_low: float
    ci_high: float
    verdict: str
    detectable_excess: float
    ci_half_width: float

    def as_dict(self) -> dict:
        return asdict(self)


def detectable_excess(sd: float, n: int, alpha: float, power: float) -> float:
    """The smallest mean difference that a two-sided paired t test at level ``alpha`` detects
    with probability ``power``, for ``n`` differences of SD ``sd`` (noncentral t); nan when
    the test is undefined (n < 2 or sd not positive)."""
    if n < 2 or not sd > 0:
        return math.nan
    df, se = n - 1, sd / math.sqrt(n)
    critical = sps.t.ppf(1 - alpha / 2, df)

    def shortfall(delta: float) -> float:
        shift = delta / se
        # The lower tail as the upper tail of -shift: scipy's nct.cdf gives nan far out in
        # it for few degrees of freedom (df 1, shift 8), where this stays finite.
        detected = sps.nct.sf(critical, df, shift) + sps.nct.sf(critical, df, -shift)
        return detected - power

    upper = se
    while shortfall(upper) < 0:
        upper *= 2
    return float(brentq(shortfall, 0.0, upper, xtol=1e-12 * se))


def decide(excess: ArrayLike, floor: ArrayLike, margin_rel: float, alpha: float, power: float):
    """The verdict on the per-seed ``excess`` against ``margin_rel`` x mean(``floor``), with
    the power line (``Decision``). ``ci_low``/``ci_high``: the (1 - 2 alpha) t interval the
    rule reads; ``ci_half_width``: the half-width of the two-sided (1 - alpha) one."""
    d = np.asarray(excess, dtype=float)
    floor_mean = float(np.mean(np.asarray(floor, dtype=float)))
    margin = margin_rel * floor_mean
    equivalence = tost(d, margin, alpha)
    n, se, df = equivalence.n, equivalence.se, equivalence.df
    if n >= 2 and se > 0:
        p_above = float(sps.t.sf((equivalence.mean - margin) / se, df))
        p_below = float(sps.t.cdf((equivalence.mean + margin) / se, df))
    else:
        p_above = p_below = math.nan
    if p_above < alpha:
        verdict = LARGER
    elif p_below < alpha:
        verdict = SMALLER
    elif equivalence.equivalent:
        verdict = INDISTINGUISHABLE
    else:
        verdict = INCONCLUSIVE
    sd = float(np.std(d, ddof=1)) if n >= 2 else math.nan
    return Decision(
        n=n,
        excess=equivalence.mean,
        floor=floor_mean,
        margin=margin,
        p_above_margin=p_above,
        p_below_margin=p_below,
        p_tost=equivalence.p,
        ci_low=equivalence.ci_low,
        ci_high=equivalence.ci_high,
        verdict=verdict,
        detectable_excess=detectable_excess(sd, n, alpha, power),
        ci_half_width=float(sps.t.ppf(1 - alpha / 2, df) * se) if n >= 2 else math.nan,
    )
