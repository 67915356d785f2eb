"""Golden and property tests for workflow.stats (paired statistics over seeds)."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from workflow.stats import (
    Bootstrap,
    PairedTests,
    Summary,
    Tost,
    bootstrap_ci,
    describe,
    paired_tests,
    tost,
)

# The settings are always passed explicitly: these are config.yaml's ``statistics`` values and
# the probe study's TOST alpha, written out here because the library defaults none of them.
BOOT = Bootstrap(resamples=10_000, seed=12345, level=0.95)
ALPHA = 0.05


def _t3_cdf(x: float) -> float:
    """Closed-form CDF of Student's t with 3 degrees of freedom (independent of scipy)."""
    s3 = math.sqrt(3.0)
    return 0.5 + (x / (s3 * (1 + x * x / 3)) + math.atan(x / s3)) / math.pi


# Small vector used for hand calculations: d = [1, 2, 3, 6]
#   mean = 12 / 4 = 3
#   deviations = -2, -1, 0, 3 -> sum of squares = 4 + 1 + 0 + 9 = 14
#   sd = sqrt(14 / 3), se = sd / sqrt(4) = sqrt(14 / 12) = sqrt(7 / 6)
#   t = 3 / sqrt(7 / 6) = 3 * sqrt(6 / 7) ~= 2.7775, df = 3
HAND_D = [1.0, 2.0, 3.0, 6.0]
HAND_MEAN = 3.0
HAND_SD = math.sqrt(14 / 3)
HAND_SE = math.sqrt(7 / 6)
HAND_T = 3 * math.sqrt(6 / 7)


# --- paired t -------------------------------------------------------------------------------


def test_t3_cdf_helper_is_correct() -> None:
    # Guard the hand formula itself: symmetric, 0.5 at 0, and a tabulated quantile
    # (t_{0.975, 3} = 3.182446...).
    assert _t3_cdf(0.0) == pytest.approx(0.5)
    assert _t3_cdf(3.182446305284263) == pytest.approx(0.975, abs=1e-9)
    assert _t3_cdf(-1.3) == pytest.approx(1 - _t3_cdf(1.3))


def test_paired_t_hand_values() -> None:
    res = paired_tests(HAND_D)
    assert res.n == 4
    assert res.mean == pytest.approx(HAND_MEAN, rel=1e-14)
    assert res.sd == pytest.approx(HAND_SD, rel=1e-14)
    assert res.t == pytest.approx(HAND_T, rel=1e-12)
    assert res.p_t == pytest.approx(2 * (1 - _t3_cdf(HAND_T)), rel=1e-9)
    assert res.p_t == pytest.approx(0.0690, abs=5e-4)
    assert res.d_z == pytest.approx(3 / math.sqrt(14 / 3), rel=1e-14)  # ~1.3887


def test_paired_t_matches_ttest_rel() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=15)
    b = a + rng.normal(0.3, 0.5, size=15)
    res = paired_tests(a - b)
    ref = sps.ttest_rel(a, b)
    assert res.t == pytest.approx(float(ref.statistic), rel=1e-12)
    assert res.p_t == pytest.approx(float(ref.pvalue), rel=1e-10)
    assert res.d_z == pytest.approx(np.mean(a - b) / np.std(a - b, ddof=1), rel=1e-12)


# --- Wilcoxon -------------------------------------------------------------------------------

# No zeros, no ties. |d| ranks: 0.3->1, 0.5->2, 1.2->3, 2.0->4, 3.1->5, 4.4->6.
# W+ = 2 + 4 + 5 + 6 = 17, W- = 1 + 3 = 4 (total 21).
# Subsets of {1..6} with rank sum <= 4: {}, {1}, {2}, {3}, {4}, {1,2}, {1,3} -> 7 of 64,
# so the exact two-sided p = 2 * 7 / 64 = 0.21875.
WILCOXON_D = [0.5, -1.2, 2.0, 3.1, -0.3, 4.4]


def _exact_wilcoxon_p_by_enumeration(d: list[float]) -> float:
    """Two-sided p over all 2^m sign flips of the mid-ranks of the non-zero |d| (zeros dropped)."""
    d = [v for v in d if v != 0]
    ranks = sps.rankdata(np.abs(d))
    w_plus = sum(r for r, v in zip(ranks, d, strict=True) if v > 0)
    null = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s)
        for signs in itertools.product([False, True], repeat=len(d))
    ]
    lower = sum(w <= w_plus for w in null) / len(null)
    upper = sum(w >= w_plus for w in null) / len(null)
    return min(1.0, 2 * min(lower, upper))


def _scipy_permutation_p(d: list[float]) -> float:
    # n_resamples=inf makes scipy enumerate every sign flip: its exact permutation null.
    method = sps.PermutationMethod(n_resamples=np.inf)
    return float(sps.wilcoxon(d, zero_method="wilcox", method=method).pvalue)


def _normal_p(d: list[float]) -> float:
    ref = sps.wilcoxon(d, zero_method="wilcox", correction=False, method="asymptotic")
    return float(ref.pvalue)


def test_wilcoxon_exact_hand_enumeration() -> None:
    res = paired_tests(WILCOXON_D)
    assert res.wilcoxon_method == "exact"
    assert _exact_wilcoxon_p_by_enumeration(WILCOXON_D) == pytest.approx(14 / 64, abs=1e-15)
    assert res.p_wilcoxon == pytest.approx(14 / 64, rel=1e-12)


def test_wilcoxon_exact_matches_enumeration_and_scipy_random() -> None:
    rng = np.random.default_rng(1)
    d = list(rng.normal(0.4, 1.0, size=9))
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == pytest.approx(_exact_wilcoxon_p_by_enumeration(d), rel=1e-12)
    ref = sps.wilcoxon(d, method="exact")
    assert res.p_wilcoxon == pytest.approx(float(ref.pvalue), rel=1e-12)


@pytest.mark.parametrize(
    "d",
    [[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 2.0, 3.0, 4.0], [0.1] * 5, [3, 3, 3, 3, 3]],
    ids=["distinct", "tied", "all-tied", "integers"],
)
def test_wilcoxon_five_positive_differences_give_the_exact_minimum(d: list[float]) -> None:
    # All 5 differences positive: only 1 of the 32 sign assignments is as extreme on each side,
    # so the exact two-sided p is 2 / 32 = 0.0625, whatever the ties.
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == 0.0625


@pytest.mark.parametrize(
    "d",
    [
        [1.0, 1.0, 2.0, 3.0, 4.0],  # normal approximation: p = 0.042
        [0.1] * 5,  # normal approximation: p = 0.025
        [0.0, 0.1, 0.1, 0.1, 0.1, 0.1],  # zero dropped, m = 5: normal approximation p = 0.025
        [0.0, 0.0, 2.0, 2.0, 1.0, 1.0, 3.0],  # m = 5 again
    ],
)
def test_wilcoxon_with_ties_or_zeros_never_below_the_exact_minimum(d: list[float]) -> None:
    m = sum(v != 0 for v in d)
    floor = 2 / 2**m  # the smallest attainable exact two-sided p for m non-zero differences
    assert _normal_p(d) < floor  # what the normal approximation used to report
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon >= floor
    assert res.p_wilcoxon == pytest.approx(_scipy_permutation_p(d), rel=1e-12)


def test_wilcoxon_exact_with_zero_and_ties_hand_value() -> None:
    d = [0.0, 1.0, -1.0, 2.0, 3.0, 4.0]
    # Zero dropped -> m = 5; |d| mid-ranks: 1, 1 -> 1.5 each; 2 -> 3; 3 -> 4; 4 -> 5.
    # W+ = 1.5 + 3 + 4 + 5 = 13.5 of 15. Sign assignments with W+ >= 13.5, i.e. a negative
    # rank sum <= 1.5: none negative, or only one of the two 1.5s -> 3 of 32.
    # Two-sided exact p = 2 * 3 / 32 = 0.1875 (the normal approximation said 0.104).
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == 0.1875
    assert res.p_wilcoxon == pytest.approx(_exact_wilcoxon_p_by_enumeration(d), rel=1e-12)
    assert res.p_wilcoxon == pytest.approx(_scipy_permutation_p(d), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_exact_with_ties_and_zeros_matches_enumeration(seed: int) -> None:
    # Small integer differences: plenty of ties and zeros, as differences of correct counts have.
    rng = np.random.default_rng(seed)
    d = [int(v) for v in rng.integers(-3, 5, size=int(rng.integers(4, 13)))]
    if not any(d):  # pragma: no cover
        pytest.skip("all zero")
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == pytest.approx(_exact_wilcoxon_p_by_enumeration(d), rel=1e-12)
    assert res.p_wilcoxon == pytest.approx(_scipy_permutation_p(d), rel=1e-12)


def test_wilcoxon_normal_approximation_above_fifty_hand_value() -> None:
    # 60 differences: 4 zeros (dropped), then 1.0 x 20, -1.0 x 10, 2.0 x 26 -> m = 56.
    d = [0.0] * 4 + [1.0] * 20 + [-1.0] * 10 + [2.0] * 26
    # |d| = 1 takes ranks 1..30 (mid-rank 15.5), |d| = 2 ranks 31..56 (mid-rank 43.5).
    # W+ = 20 * 15.5 + 26 * 43.5 = 1441; E[W] = 56 * 57 / 4 = 798;
    # Var = 56 * 57 * 113 / 24 - ((30^3 - 30) + (26^3 - 26)) / 48 = 15029 - 927.5 = 14101.5.
    z = (1441 - 798) / math.sqrt(14101.5)
    res = paired_tests(d)
    assert res.wilcoxon_method == "approx"
    assert res.p_wilcoxon == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-12)
    assert res.p_wilcoxon == pytest.approx(_normal_p(d), rel=1e-12)


def test_wilcoxon_approx_above_fifty_without_ties() -> None:
    d = list(np.linspace(-1.0, 3.0, 51) + 0.013)
    res = paired_tests(d)
    assert res.wilcoxon_method == "approx"
    assert res.p_wilcoxon == pytest.approx(_normal_p(d), rel=1e-12)


def test_wilcoxon_exact_at_fifty_non_zero_differences() -> None:
    d = list(np.linspace(-1.0, 3.0, 50) + 0.013)
    res = paired_tests(d)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == pytest.approx(float(sps.wilcoxon(d, method="exact").pvalue))
    # The cut-off counts non-zero differences: zeros are dropped before ranking.
    assert paired_tests([*d, 0.0, 0.0]).wilcoxon_method == "exact"


# --- exact values -----------------------------------------------------------------------------


def test_exact_differences_of_counts_tie_where_float_percentages_do_not() -> None:
    # One image of 2,000 at three accuracy levels: as float accuracy differences these are three
    # distinct numbers, so ties are broken by rounding noise; as exact rationals they are equal.
    counts = [(1503, 1502), (1501, 1500), (1701, 1700), (1598, 1600), (1902, 1900)]
    floats = [100 * a / 2000 - 100 * b / 2000 for a, b in counts]
    assert len(set(floats[:3])) == 2
    exact = [Fraction(100 * (a - b), 2000) for a, b in counts]
    res = paired_tests(exact)
    # Mid-ranks: |0.05| x 3 -> 2 each; |0.1| x 2 -> 4.5 each. W- = 4.5; P(W- <= 4.5) counts the
    # negative sets {}, {2}, {2'}, {2''}, {2,2'}, {2,2''}, {2',2''}, {4.5}, {4.5'}: 9 of 32.
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == 2 * 9 / 32
    assert (res.n_pos, res.n_neg, res.n_zero) == (4, 1, 0)
    assert res.mean == float(sum(exact) / 5)


def test_exact_zero_mean_is_exactly_zero() -> None:
    # As floats the mean of 0.1, 0.2 and -0.3 is 1.9e-17, a sign where there is none.
    assert np.mean([0.1, 0.2, -0.3]) != 0.0
    res = paired_tests([Fraction(1, 10), Fraction(2, 10), Fraction(-3, 10)])
    assert res.mean == 0.0 and res.t == 0.0 and res.d_z == 0.0 and res.p_t == 1.0
    assert (res.n_pos, res.n_neg, res.n_zero) == (2, 1, 0)
    assert paired_tests([Fraction(1, 3)] * 4).sd == 0.0


def test_exact_and_float_inputs_agree_when_floats_are_exact() -> None:
    ints = paired_tests(np.array([3, -1, 4, 1, 5, 9, 2, 6], dtype=np.int64))
    floats = paired_tests([3.0, -1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    assert ints == floats


# --- signs, degenerate cases, dataclass -----------------------------------------------------


def test_sign_counts() -> None:
    res = paired_tests([1.0, -2.0, 0.0, 0.0, 3.0, 0.5, -0.0])
    assert (res.n_pos, res.n_neg, res.n_zero) == (3, 1, 3)
    assert res.n == 7


@pytest.mark.parametrize(
    "d",
    [[], [0.7], [0.0, 0.0, 0.0], [0.1, 0.1, 0.1, 0.1]],
    ids=["empty", "single", "all-zero", "constant"],
)
def test_degenerate_inputs_give_nan_without_warnings(d: list[float]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_tests(d)
        eq = tost(d, margin=1.0, alpha=ALPHA)
    assert res.n == len(d)
    assert math.isnan(res.t) and math.isnan(res.p_t) and math.isnan(res.d_z)
    if len(d) >= 2:
        assert res.sd == 0.0
    else:
        assert math.isnan(res.sd)
    if d and d[0] == 0.0 or len(d) < 2:
        assert math.isnan(res.p_wilcoxon)
        assert res.wilcoxon_method == "none"
    assert math.isnan(eq.p) and not eq.equivalent


def test_constant_nonzero_still_gets_wilcoxon() -> None:
    # Every difference positive and tied: sign information exists even though t is undefined.
    res = paired_tests([0.1] * 8)
    assert res.wilcoxon_method == "exact"
    assert res.p_wilcoxon == 2 / 2**8
    assert res.n_pos == 8


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_raises(bad: float) -> None:
    with pytest.raises(ValueError, match="non-finite"):
        paired_tests([1.0, bad, 2.0])
    with pytest.raises(ValueError, match="non-finite"):
        tost([1.0, bad, 2.0], margin=1.0, alpha=ALPHA)
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_ci([1.0, bad, 2.0], BOOT)


def test_dataclasses_frozen_and_as_dict() -> None:
    res = paired_tests(HAND_D)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n = 5  # type: ignore[misc]
    row = res.as_dict()
    assert list(row) == [f.name for f in dataclasses.fields(PairedTests)]
    assert row["t"] == res.t
    assert list(tost(HAND_D, 6.0, ALPHA).as_dict()) == [f.name for f in dataclasses.fields(Tost)]
    assert list(describe(HAND_D, BOOT).as_dict()) == ["n", "mean", "sd", "ci_low", "ci_high"]
    assert {f.name for f in dataclasses.fields(Summary)} == set(describe(HAND_D, BOOT).as_dict())


# --- bootstrap ------------------------------------------------------------------------------


def _bootstrap_reference(values: list[float], resamples: int, seed: int, level: float):
    v = np.asarray(values, dtype=np.float64)
    gen = np.random.default_rng(seed)
    draws = gen.integers(0, len(v), size=(resamples, len(v)))
    boot = np.array([v[row].mean() for row in draws])
    return tuple(np.percentile(boot, [100 * (1 - level) / 2, 100 * (1 + level) / 2]))


def test_bootstrap_matches_reference_recipe() -> None:
    values = [0.3, 1.1, -0.4, 2.5, 0.9, 1.7, 0.2]
    for resamples, seed, level in [(10_000, 12345, 0.95), (2_000, 7, 0.90)]:
        got = bootstrap_ci(values, Bootstrap(resamples=resamples, seed=seed, level=level))
        want = _bootstrap_reference(values, resamples, seed, level)
        assert got == pytest.approx(want, rel=1e-12)
    assert bootstrap_ci(values, BOOT) == pytest.approx(
        _bootstrap_reference(values, 10_000, 12345, 0.95), rel=1e-12
    )


def test_bootstrap_reproducible_and_seed_dependent() -> None:
    values = [0.3, 1.1, -0.4, 2.5, 0.9, 1.7, 0.2]
    seed3, seed4 = dataclasses.replace(BOOT, seed=3), dataclasses.replace(BOOT, seed=4)
    first = bootstrap_ci(values, seed3)
    bootstrap_ci([5.0, 6.0, 7.0], seed3)  # an intervening call must not change the next one
    assert bootstrap_ci(values, seed3) == first
    assert bootstrap_ci(values, seed4) != first


def test_bootstrap_ci_contains_mean_and_is_narrower_than_range() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(2.0, 1.0, size=20)
    low, high = bootstrap_ci(values, BOOT)
    assert low < values.mean() < high
    assert values.min() < low and high < values.max()


def test_bootstrap_edge_cases() -> None:
    low, high = bootstrap_ci([], BOOT)
    assert math.isnan(low) and math.isnan(high)
    assert bootstrap_ci([0.42], BOOT) == (0.42, 0.42)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], dataclasses.replace(BOOT, level=1.0))
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], dataclasses.replace(BOOT, resamples=0))


def test_bootstrap_settings_from_config() -> None:
    statistics = {
        "bootstrap_resamples": 321,
        "bootstrap_seed": 9,
        "ci_level": 0.9,
        "common_endpoint": 100,
    }
    settings = Bootstrap.from_config(statistics)
    assert settings == Bootstrap(resamples=321, seed=9, level=0.9)
    assert settings.label == "90% CI"
    values = [0.3, 1.1, -0.4, 2.5]
    assert settings.ci(values) == bootstrap_ci(values, settings)
    assert settings.ci(values) == pytest.approx(_bootstrap_reference(values, 321, 9, 0.9))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.level = 0.5  # type: ignore[misc]
    with pytest.raises(KeyError):
        Bootstrap.from_config({"bootstrap_resamples": 321, "bootstrap_seed": 9})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 1  # type: ignore[misc]
    with pytest.raises(KeyError):
        Bootstrap.from_config({"bootstrap_resamples": 321, "bootstrap_seed": 9})


@pytest.mark.parametrize(
    "bad", [{"resamples": 10.0}, {"resamples": True}, {"seed": 1.5}, {"level": "0.95"}]
)
def test_bootstrap_settings_reject_wrong_types(bad: dict) -> None:
    with pytest.raises(TypeError):
        Bootstrap(**{"resamples": 10, "seed": 1, "level": 0.9, **bad})


def test_no_statistic_defaults_its_settings() -> None:
    """Resamples, seed, level and alpha come from the caller (the config), never a default."""
    from workflow import noise_floor, studies, summary

    functions = [
        bootstrap_ci,
        describe,
        tost,
        summary.stat_row,
        summary.summarize,
        studies.pilot_summary,
        studies.long_summary,
        noise_floor.noise_floor_summary,
        studies.activation_summary,
        studies.probes_summary,
    ]
    for func in functions:
        params = inspect.signature(func).parameters
        assert not {"resamples", "seed", "level", "stats"} & set(params), func.__name__
        for name in ("bootstrap", "margin", "alpha"):
            if name in params:
                assert params[name].default is inspect.Parameter.empty, (func.__name__, name)
    assert "bootstrap" in inspect.signature(describe).parameters
    assert "alpha" in inspect.signature(tost).parameters


# --- TOST -----------------------------------------------------------------------------------


def test_tost_hand_example_equivalent() -> None:
    # d = [1, 2, 3, 6]: mean 3, se = sqrt(7/6) ~= 1.0801, df = 3, t_{0.95,3} = 2.353363.
    # 90% CI = 3 +- 2.353363 * 1.080123 = (0.45808, 5.54192), inside +-6 -> equivalent.
    res = tost(HAND_D, margin=6.0, alpha=ALPHA)
    assert res.n == 4 and res.df == 3.0
    assert res.se == pytest.approx(HAND_SE, rel=1e-14)
    assert (res.ci_low, res.ci_high) == pytest.approx((0.45808, 5.54192), abs=1e-5)
    assert res.p_lower == pytest.approx(1 - _t3_cdf((3 + 6) / HAND_SE), rel=1e-8)
    assert res.p_upper == pytest.approx(_t3_cdf((3 - 6) / HAND_SE), rel=1e-9)
    assert res.p == res.p_upper  # mean is nearer the upper margin
    assert res.p < 0.05
    assert res.equivalent


def test_tost_hand_example_not_equivalent() -> None:
    # Same data, margin 5: the CI's upper end 5.54192 exceeds 5 -> not equivalent.
    res = tost(HAND_D, margin=5.0, alpha=ALPHA)
    assert res.ci_high > 5.0
    assert res.p == pytest.approx(_t3_cdf((3 - 5) / HAND_SE), rel=1e-9)
    assert res.p > 0.05
    assert not res.equivalent


def test_tost_p_is_max_of_one_sided_t_tests() -> None:
    rng = np.random.default_rng(8)
    d = rng.normal(0.1, 0.4, size=12)
    margin = 0.35
    res = tost(d, margin=margin, alpha=ALPHA)
    p_lower = float(sps.ttest_1samp(d + margin, 0.0, alternative="greater").pvalue)
    p_upper = float(sps.ttest_1samp(d - margin, 0.0, alternative="less").pvalue)
    assert res.p_lower == pytest.approx(p_lower, rel=1e-10)
    assert res.p_upper == pytest.approx(p_upper, rel=1e-10)
    assert res.p == pytest.approx(max(p_lower, p_upper), rel=1e-10)


def test_tost_ci_matches_scipy_interval() -> None:
    rng = np.random.default_rng(9)
    d = rng.normal(-0.2, 1.0, size=10)
    res = tost(d, margin=1.0, alpha=ALPHA)
    se = np.std(d, ddof=1) / math.sqrt(len(d))
    low, high = sps.t.interval(0.90, len(d) - 1, loc=np.mean(d), scale=se)
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high), rel=1e-12)
    # alpha controls the interval width: alpha = 0.025 gives the 95% interval.
    res95 = tost(d, margin=1.0, alpha=0.025)
    low95, high95 = sps.t.interval(0.95, len(d) - 1, loc=np.mean(d), scale=se)
    assert (res95.ci_low, res95.ci_high) == pytest.approx((low95, high95), rel=1e-12)


def test_tost_decision_agrees_with_ci_inclusion() -> None:
    rng = np.random.default_rng(10)
    seen = set()
    for _ in range(200):
        d = rng.normal(rng.uniform(-1, 1), 1.0, size=int(rng.integers(3, 15)))
        res = tost(d, margin=0.8, alpha=ALPHA)
        inside = -0.8 < res.ci_low and res.ci_high < 0.8
        assert res.equivalent == inside
        seen.add(res.equivalent)
    assert seen == {True, False}  # both branches exercised


def test_tost_rejects_bad_margin() -> None:
    with pytest.raises(ValueError, match="margin"):
        tost(HAND_D, margin=0.0, alpha=ALPHA)
    with pytest.raises(ValueError, match="alpha"):
        tost(HAND_D, margin=1.0, alpha=0.6)


# --- describe -------------------------------------------------------------------------------


def test_describe_values() -> None:
    settings = Bootstrap(resamples=5_000, seed=1, level=0.95)
    res = describe(HAND_D, settings)
    assert res.n == 4
    assert res.mean == pytest.approx(HAND_MEAN)
    assert res.sd == pytest.approx(HAND_SD, rel=1e-14)
    assert (res.ci_low, res.ci_high) == bootstrap_ci(HAND_D, settings)


def test_describe_single_value() -> None:
    res = describe([2.5], BOOT)
    assert res.n == 1 and res.mean == 2.5 and math.isnan(res.sd)
    assert (res.ci_low, res.ci_high) == (2.5, 2.5)


def test_describe_raises_on_nan() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        describe([1.0, float("nan"), 3.0], BOOT)
