"""Paired statistics over seeds, where the seed is the statistical unit.

Pure functions: a percentile bootstrap CI of the mean, paired t / Wilcoxon / sign summaries of
per-seed differences, a TOST equivalence test, and a descriptive summary. ``paired_tests`` also
takes exact values (integers or :class:`fractions.Fraction`, e.g. differences of correct counts):
its signs, ties, Wilcoxon ranks, mean and sd come from the exact values, so differences that are
equal tie exactly and a zero mean is exactly zero; floats are taken at their exact binary value.
Degenerate inputs (too few seeds, zero variance) give ``nan`` for undefined quantities instead
of raising; non-finite inputs raise ``ValueError`` because callers must exclude and count
diverged or unmatched seeds explicitly.

:class:`Bootstrap` is the one home of the bootstrap settings (resamples, seed, CI level), built
from the config's ``statistics`` section with ``Bootstrap.from_config``; every summary, study
table and figure takes one. No function here defaults a resample count, a seed, a CI level, a
TOST margin or an alpha: each comes from the config, through the caller.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

__all__ = [
    "Bootstrap",
    "PairedTests",
    "Summary",
    "Tost",
    "bootstrap_ci",
    "describe",
    "paired_tests",
    "tost",
]

NAN = float("nan")

# Up to this many non-zero differences the Wilcoxon p-value comes from the exact null
# distribution, ties and zeros included. Computing it is cheap at any n (a count over integer
# rank sums), but 50 is scipy's own "auto" cut-off for untied data, so untied p-values stay
# those of scipy's defaults; above it the normal approximation errs by about 0.001 at most for
# p between 0.01 and 0.1 (0.003-0.004 at n = 20-25, which is why small n must be exact). Every
# study of the protocol has at most 20 seeds, so all its p-values are exact.
WILCOXON_EXACT_MAX_N = 50


class _AsDict:
    def as_dict(self) -> dict[str, Any]:
        """Field name -> value, for building table rows."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclasses.dataclass(frozen=True)
class PairedTests(_AsDict):
    """Tests of paired differences against zero. ``wilcoxon_method`` is "exact" (the exact null
    distribution, ties and zeros included), "approx" (the normal approximation, above
    ``WILCOXON_EXACT_MAX_N`` non-zero differences) or "none" (not computed: fewer than 2
    differences or all differences zero)."""

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


@dataclasses.dataclass(frozen=True)
class Bootstrap:
    """The percentile bootstrap behind every CI of the workflow (the seed is the unit): the
    number of resamples, the seed of the generator and the CI level.

    The one source of these settings: build it from the config's ``statistics`` section with
    :meth:`from_config` and pass it to every summary, study table and figure that draws a CI.
    """

    resamples: int
    seed: int
    level: float

    def __post_init__(self) -> None:
        for name in ("resamples", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"bootstrap {name} must be an integer; got {value!r}")
        if isinstance(self.level, bool) or not isinstance(self.level, numbers.Real):
            raise TypeError(f"CI level must be a number; got {self.level!r}")
        if self.resamples < 1:
            raise ValueError(f"bootstrap resamples must be >= 1; got {self.resamples}")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"CI level must be in (0, 1); got {self.level}")

    @classmethod
    def from_config(cls, statistics: Mapping[str, Any]) -> Bootstrap:
        """From the config's ``statistics`` section (``bootstrap_resamples``,
        ``bootstrap_seed``, ``ci_level``); other keys there (``common_endpoint``) are ignored,
        a missing one raises ``KeyError``."""
        return cls(
            resamples=statistics["bootstrap_resamples"],
            seed=statistics["bootstrap_seed"],
            level=statistics["ci_level"],
        )

    def ci(self, values: ArrayLike) -> tuple[float, float]:
        """Bootstrap CI of the mean of ``values``: :func:`bootstrap_ci` with these settings."""
        return bootstrap_ci(values, self)

    @property
    def label(self) -> str:
        """The CI as a legend or a text names it, e.g. ``95% CI``."""
        return f"{self.level:.0%} CI"


def bootstrap_ci(values: ArrayLike, bootstrap: Bootstrap) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean, with ``bootstrap``'s resamples, seed and level.

    A fresh generator per call makes each CI reproducible regardless of call order.
    ``n == 0`` gives ``(nan, nan)``; ``n == 1`` gives ``(v, v)``.
    """
    arr = _as_vector(values, "values")
    n = arr.size
    if n == 0:
        return (NAN, NAN)
    if n == 1:
        v = float(arr[0])
        return (v, v)
    level = bootstrap.level
    rng = np.random.default_rng(bootstrap.seed)
    idx = rng.integers(0, n, size=(bootstrap.resamples, n))
    means = arr[idx].mean(axis=1)
    low, high = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return (float(low), float(high))


def _as_exact(values: ArrayLike | Iterable[Any], name: str) -> list[Fraction]:
    """The values as exact rationals: integers and Fractions as they are, floats at their exact
    binary value (so nothing is rounded); non-finite values raise as in :func:`_as_vector`."""
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector; got shape {arr.shape}")
    exact = []
    bad = 0
    for value in arr:
        if isinstance(value, numbers.Rational):
            exact.append(Fraction(int(value.numerator), int(value.denominator)))
        elif math.isfinite(float(value)):
            exact.append(Fraction(float(value)))
        else:
            bad += 1
    if bad:
        raise ValueError(
            f"{name} contains {bad} non-finite value(s) (NaN/inf) out of {arr.size}; "
            "exclude diverged or unmatched seeds explicitly before calling"
        )
    return exact


def _signed_ranks(values: list[Fraction]) -> tuple[list[int], list[bool], list[int]]:
    """Doubled mid-ranks of ``|v|`` over the non-zero values (integers: a tie of the ranks
    i..j gets i + j), their signs (True: positive), and the sizes of the tie groups."""
    nonzero = sorted((abs(v), v > 0) for v in values if v != 0)
    ranks2: list[int] = []
    ties: list[int] = []
    i = 0
    while i < len(nonzero):
        j = i
        while j + 1 < len(nonzero) and nonzero[j + 1][0] == nonzero[i][0]:
            j += 1
        ranks2 += [(i + 1) + (j + 1)] * (j - i + 1)
        ties.append(j - i + 1)
        i = j + 1
    return ranks2, [positive for _, positive in nonzero], ties


def _exact_signed_rank_p(ranks2: list[int], w2: int) -> float:
    """Two-sided p of the signed-rank sum ``w2`` (doubled) under its exact null: each of the 2^m
    sign assignments of the given ranks equally likely; p = 2 min(P(W <= w), P(W >= w)), capped
    at 1. With ties this is the exact permutation (sign-flip) null of the mid-ranks."""
    total = sum(ranks2)
    # Counts reach 2^m: int64 holds them up to m = 62, Python integers beyond.
    counts = np.zeros(total + 1, dtype=np.int64 if len(ranks2) <= 62 else object)
    counts[0] = 1
    for r in ranks2:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[: total + 1 - r]
        counts += shifted
    lower = int(counts[: w2 + 1].sum())
    upper = int(counts[w2:].sum())
    return float(min(Fraction(1), Fraction(2 * min(lower, upper), 2 ** len(ranks2))))


def _normal_signed_rank_p(ranks2: list[int], w2: int, ties: list[int]) -> float:
    """Two-sided p of the normal approximation with the tie correction of the variance and no
    continuity correction (scipy's ``method="asymptotic"``, ``correction=False``)."""
    m = len(ranks2)
    mean = Fraction(m * (m + 1), 4)
    var = Fraction(m * (m + 1) * (2 * m + 1), 24) - Fraction(sum(t**3 - t for t in ties), 48)
    z = float(Fraction(w2, 2) - mean) / math.sqrt(float(var))
    return math.erfc(abs(z) / math.sqrt(2.0))


def _wilcoxon(values: list[Fraction]) -> tuple[float, str]:
    ranks2, signs, ties = _signed_ranks(values)
    if len(values) < 2 or not ranks2:
        return NAN, "none"
    w2 = sum(r for r, positive in zip(ranks2, signs, strict=True) if positive)
    if len(ranks2) <= WILCOXON_EXACT_MAX_N:
        return _exact_signed_rank_p(ranks2, w2), "exact"
    return _normal_signed_rank_p(ranks2, w2, ties), "approx"


def paired_tests(d: ArrayLike | Iterable[Any]) -> PairedTests:
    """One-sample t test, Wilcoxon signed-rank test and sign counts for paired differences ``d``.

    ``d`` may hold floats, integers or :class:`fractions.Fraction` values. Everything is computed
    from the exact values: signs and ties (``n_pos``, ``n_neg``, ``n_zero``, the Wilcoxon ranks)
    are decided exactly, and the mean and sd are exact until their final rounding to float.
    Pass exact differences (e.g. of correct counts) where the data are counts, so that results
    that are equal compare equal.

    Wilcoxon signed-rank test, two-sided. Zero differences are dropped before ranking
    (``zero_method="wilcox"``, Wilcoxon's own rule; they are counted in ``n_zero``) and tied
    ``|d|`` get mid-ranks. With at most ``WILCOXON_EXACT_MAX_N`` (50) non-zero differences the
    p-value comes from the exact null distribution of the signed-rank sum given those ranks (all
    sign flips equally likely), ties and zeros included: it can never fall below the smallest
    attainable p (2 / 2^m for m non-zero differences, 0.0625 for m = 5). Without ties or zeros
    this is the classic exact distribution (scipy's ``method="exact"``); with them it equals
    scipy's exhaustive ``PermutationMethod``. Above 50 it uses the normal approximation with the
    tie-corrected variance and no continuity correction (``wilcoxon_method`` "approx").

    ``t``, ``p_t`` and ``d_z`` are nan when n < 2 or sd == 0.
    """
    exact = _as_exact(d, "d")
    n = len(exact)
    mean_exact = sum(exact, Fraction(0)) / n if n else None
    mean = float(mean_exact) if mean_exact is not None else NAN
    if n >= 2:
        var = sum(((v - mean_exact) ** 2 for v in exact), Fraction(0)) / (n - 1)
        sd = math.sqrt(float(var))  # exactly 0.0 when every value is equal
    else:
        sd = NAN
    if n >= 2 and sd > 0:
        t_stat = mean / (sd / math.sqrt(n))
        p_t = float(2.0 * sps.t.sf(abs(t_stat), n - 1))
        d_z = mean / sd
    else:
        t_stat = p_t = d_z = NAN
    p_w, method = _wilcoxon(exact)
    return PairedTests(
        n=n,
        mean=mean,
        sd=sd,
        t=t_stat,
        p_t=p_t,
        p_wilcoxon=p_w,
        wilcoxon_method=method,
        n_pos=sum(v > 0 for v in exact),
        n_neg=sum(v < 0 for v in exact),
        n_zero=sum(v == 0 for v in exact),
        d_z=d_z,
    )


def tost(d: ArrayLike, margin: float, alpha: float) -> Tost:
    """Paired TOST at level ``alpha``: is the mean difference within ``(-margin, +margin)``?

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


def describe(values: ArrayLike, bootstrap: Bootstrap) -> Summary:
    """n, mean, sample SD (ddof=1; nan if n < 2) and ``bootstrap``'s CI of the mean.

    Raises ``ValueError`` on NaN/inf rather than dropping values silently.
    """
    arr = _as_vector(values, "values")
    ci_low, ci_high = bootstrap_ci(arr, bootstrap)
    return Summary(n=int(arr.size), mean=_mean(arr), sd=_sd(arr), ci_low=ci_low, ci_high=ci_high)
