"""Paired statistics over seeds, where the seed is the statistical unit.

Pure float64 functions: a percentile bootstrap CI of the mean, paired t / Wilcoxon / sign
summaries of per-seed differences, a TOST equivalence test, and a descriptive summary.
Degenerate inputs (too few seeds, zero variance) give ``nan`` for undefined quantities instead
of raising; non-finite inputs raise ``ValueError`` because callers must exclude and count
diverged or unmatched seeds explicitly.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

__all__ = [
    "PairedTests",
    "Summary",
    "Tost",
    "bootstrap_ci",
    "describe",
    "paired_tests",
    "tost",
]

NAN = float("nan")

# Beyond this many non-zero differences scipy's exact Wilcoxon distribution is slow and the
# normal approximation is accurate; it also matches scipy's own "auto" cut-off.
_WILCOXON_EXACT_MAX_N = 50


class _AsDict:
    def as_dict(self) -> dict[str, Any]:
        """Field name -> value, for building table rows."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclasses.dataclass(frozen=True)
class PairedTests(_AsDict):
    """Tests of paired differences against zero. ``wilcoxon_method`` is "exact", "approx" or
    "none" (not computed: fewer than 2 differences or all differences zero)."""

    n: int
    mean: float
    sd: float
    t: float
    p_t: float
    p_wilcoxon: float
    wilcoxon_method: str
    n_pos: int
    n_neg: int
    n_zero: int
    d_z: float


@dataclasses.dataclass(frozen=True)
class Tost(_AsDict):
    """Two one-sided paired t tests for equivalence within ``±margin``."""

    n: int
    mean: float
    margin: float
    se: float
    df: float
    p_lower: float
    p_upper: float
    p: float
    ci_low: float
    ci_high: float
    equivalent: bool


@dataclasses.dataclass(frozen=True)
class Summary(_AsDict):
    """Mean, sample SD and percentile-bootstrap CI of the mean."""

    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float


def _as_vector(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise ValueError(
            f"{name} contains {bad} non-finite value(s) (NaN/inf) out of {arr.size}; "
            "exclude diverged or unmatched seeds explicitly before calling"
        )
    return arr


def _mean(arr: np.ndarray) -> float:
    return float(arr.mean()) if arr.size else NAN


def _sd(arr: np.ndarray) -> float:
    if arr.size < 2:
        return NAN
    # Identical values can leave a ~1e-17 residue through the floating-point mean; report the
    # exact zero so degenerate cases are recognised.
    if np.ptp(arr) == 0:
        return 0.0
    return float(arr.std(ddof=1))


def bootstrap_ci(
    values: ArrayLike, resamples: int = 10_000, seed: int = 12345, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean.

    A fresh generator per call makes each CI reproducible regardless of call order.
    ``n == 0`` gives ``(nan, nan)``; ``n == 1`` gives ``(v, v)``.
    """
    arr = _as_vector(values, "values")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1; got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level}")
    n = arr.size
    if n == 0:
        return (NAN, NAN)
    if n == 1:
        v = float(arr[0])
        return (v, v)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    means = arr[idx].mean(axis=1)
    low, high = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return (float(low), float(high))


def _wilcoxon(d: np.ndarray) -> tuple[float, str]:
    nonzero = d[d != 0]
    if d.size < 2 or nonzero.size == 0:
        return NAN, "none"
    abs_d = np.abs(d)
    has_zero = nonzero.size < d.size
    has_ties = np.unique(abs_d).size < abs_d.size
    if d.size <= _WILCOXON_EXACT_MAX_N and not has_zero and not has_ties:
        res = sps.wilcoxon(d, alternative="two-sided", method="exact")
        return float(res.pvalue), "exact"
    # "asymptotic" is scipy's current name for the normal approximation (formerly "approx").
    with warnings.catch_warnings():
        # scipy warns that very small samples are too small for the normal approximation;
        # the method is recorded alongside the p-value, so the caller can judge it.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sps.wilcoxon(
            d, zero_method="wilcox", correction=False, alternative="two-sided", method="asymptotic"
        )
    return float(res.pvalue), "approx"


def paired_tests(d: ArrayLike) -> PairedTests:
    """One-sample t test, Wilcoxon signed-rank test and sign counts for paired differences ``d``.

    Wilcoxon uses the exact null distribution when n <= 50 with no zero differences and no ties
    among ``|d|``; otherwise the normal approximation with zeros dropped (``zero_method="wilcox"``,
    no continuity correction). ``t``, ``p_t`` and ``d_z`` are nan when n < 2 or sd == 0.
    """
    arr = _as_vector(d, "d")
    n = int(arr.size)
    mean = _mean(arr)
    sd = _sd(arr)
    if n >= 2 and sd > 0:
        with warnings.catch_warnings():
            # Near-constant data triggers scipy's precision-loss RuntimeWarning; the statistic
            # is still well defined because sd > 0.
            warnings.simplefilter("ignore", RuntimeWarning)
            res = sps.ttest_1samp(arr, 0.0, alternative="two-sided")
        t_stat, p_t = float(res.statistic), float(res.pvalue)
        d_z = mean / sd
    else:
        t_stat = p_t = d_z = NAN
    p_w, method = _wilcoxon(arr)
    return PairedTests(
        n=n,
        mean=mean,
        sd=sd,
        t=t_stat,
        p_t=p_t,
        p_wilcoxon=p_w,
        wilcoxon_method=method,
        n_pos=int(np.count_nonzero(arr > 0)),
        n_neg=int(np.count_nonzero(arr < 0)),
        n_zero=int(np.count_nonzero(arr == 0)),
        d_z=d_z,
    )


def tost(d: ArrayLike, margin: float, alpha: float = 0.05) -> Tost:
    """Paired TOST: is the mean difference within ``(-margin, +margin)``?

    ``p_lower`` tests H0: mean <= -margin, ``p_upper`` tests H0: mean >= +margin, and
    ``p = max(p_lower, p_upper)``. The reported CI is the matching (1 - 2 alpha) t interval,
    so ``equivalent`` (p < alpha) holds exactly when that CI lies inside ``±margin``.
    With n < 2 or zero variance the test is undefined: p values are nan and ``equivalent`` is
    False (for zero variance the CI collapses to the mean).
    """
    arr = _as_vector(d, "d")
    if not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive finite number; got {margin}")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5); got {alpha}")
    n = int(arr.size)
    mean = _mean(arr)
    sd = _sd(arr)
    df = float(n - 1) if n >= 2 else NAN
    se = sd / np.sqrt(n) if n >= 2 else NAN
    if n >= 2 and se > 0:
        # sf(x) == 1 - cdf(x) but keeps precision for tiny p values.
        p_lower = float(sps.t.sf((mean + margin) / se, df))
        p_upper = float(sps.t.cdf((mean - margin) / se, df))
        p = max(p_lower, p_upper)
        half = float(sps.t.ppf(1 - alpha, df)) * se
        ci_low, ci_high = mean - half, mean + half
        equivalent = bool(p < alpha)
    else:
        p_lower = p_upper = p = NAN
        ci_low = ci_high = mean if n >= 2 else NAN
        equivalent = False
    return Tost(
        n=n,
        mean=mean,
        margin=float(margin),
        se=float(se),
        df=df,
        p_lower=p_lower,
        p_upper=p_upper,
        p=p,
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        equivalent=equivalent,
    )


def describe(
    values: ArrayLike, resamples: int = 10_000, seed: int = 12345, level: float = 0.95
) -> Summary:
    """n, mean, sample SD (ddof=1; nan if n < 2) and bootstrap CI of the mean.

    Raises ``ValueError`` on NaN/inf rather than dropping values silently.
    """
    arr = _as_vector(values, "values")
    ci_low, ci_high = bootstrap_ci(arr, resamples=resamples, seed=seed, level=level)
    return Summary(n=int(arr.size), mean=_mean(arr), sd=_sd(arr), ci_low=ci_low, ci_high=ci_high)
