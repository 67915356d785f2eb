"""Tests for workflow.cka: invariances, golden values and agreement with reference formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from workflow.cka import debiased_linear_cka, linear_cka

RTOL = 1e-12


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _pair(seed: int = 0, n: int = 40, dx: int = 6, dy: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Correlated, non-zero-mean representations so centring and alignment both matter."""
    rng = _rng(seed)
    x = rng.normal(size=(n, dx)) + rng.normal(size=dx) * 3.0
    y = x @ rng.normal(size=(dx, dy)) + 0.5 * rng.normal(size=(n, dy)) + 2.0
    return x, y


def _random_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    # Sign fix makes Q Haar-distributed; any orthogonal Q would do for invariance.
    return q * np.sign(np.diag(r))


def _cka_example_space(x: np.ndarray, y: np.ndarray) -> float:
    """Gram-matrix form with explicit centring matrix H, on uncentred inputs."""
    n = x.shape[0]
    h = np.eye(n) - np.ones((n, n)) / n
    k = x @ x.T
    gram_l = y @ y.T

    def hsic(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.trace(a @ h @ b @ h)) / (n - 1) ** 2

    return hsic(k, gram_l) / math.sqrt(hsic(k, k) * hsic(gram_l, gram_l))


def _hsic_u_matrix(k: np.ndarray, gram_l: np.ndarray) -> float:
    """Song et al. (2012) eq. 5 written with explicit ones vectors and matrix products."""
    n = k.shape[0]
    kt = k - np.diag(np.diag(k))
    lt = gram_l - np.diag(np.diag(gram_l))
    one = np.ones(n)
    value = (
        np.trace(kt @ lt)
        + (one @ kt @ one) * (one @ lt @ one) / ((n - 1) * (n - 2))
        - 2.0 / (n - 2) * (one @ kt @ lt @ one)
    )
    return float(value) / (n * (n - 3))


def _hsic_u_tuples(k: np.ndarray, gram_l: np.ndarray) -> float:
    """HSIC_u as the U-statistic over ordered 4-tuples of distinct indices (its definition)."""
    n = k.shape[0]
    total = 0.0
    count = 0
    for i, j, q, r in itertools.permutations(range(n), 4):
        total += k[i, j] * gram_l[i, j] + k[i, j] * gram_l[q, r] - 2.0 * k[i, j] * gram_l[i, q]
        count += 1
    return total / count


def _debiased_reference(x: np.ndarray, y: np.ndarray, hsic=_hsic_u_matrix) -> float:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    k = x @ x.T
    gram_l = y @ y.T
    return hsic(k, gram_l) / math.sqrt(hsic(k, k) * hsic(gram_l, gram_l))


# --- linear CKA -----------------------------------------------------------------------------


def test_self_similarity_is_one() -> None:
    x, _ = _pair()
    assert linear_cka(x, x) == pytest.approx(1.0, rel=RTOL, abs=0)


def test_golden_value_by_hand() -> None:
    x = np.array([[1, 2], [3, 2], [5, 6], [7, 6]])
    y = np.array([[0, 1, 2], [0, 3, 2], [2, 1, 2], [2, 3, 6]])
    # Column means are X: (4, 4), Y: (1, 2, 3), so the centred matrices are
    #   Xc = [[-3,-2],[-1,-2],[1,2],[3,2]]
    #   Yc = [[-1,-1,-1],[-1,1,-1],[1,-1,-1],[1,1,3]]
    # Xc^T Xc = [[20,16],[16,16]]                 -> ||.||_F^2 = 400+256+256+256 = 1168
    # Yc^T Yc = [[4,0,4],[0,4,4],[4,4,12]]         -> ||.||_F^2 = 16+16+144+2*(0+16+16) = 240
    # Yc^T Xc = [[8,8],[4,0],[12,8]]               -> ||.||_F^2 = 64+64+16+0+144+64 = 352
    expected = 352 / math.sqrt(1168 * 240)
    assert expected == pytest.approx(0.66483767, abs=1e-8)
    assert linear_cka(x, y) == pytest.approx(expected, rel=RTOL, abs=0)


def test_isotropic_scaling_invariance() -> None:
    x, y = _pair(1)
    base = linear_cka(x, y)
    assert linear_cka(3.7 * x, y) == pytest.approx(base, rel=RTOL, abs=0)
    assert linear_cka(x, 0.01 * y) == pytest.approx(base, rel=RTOL, abs=0)


def test_orthogonal_invariance() -> None:
    rng = _rng(2)
    x, y = _pair(2)
    qx = _random_orthogonal(x.shape[1], rng)
    qy = _random_orthogonal(y.shape[1], rng)
    assert not np.allclose(qx, np.eye(x.shape[1]))
    base = linear_cka(x, y)
    assert linear_cka(x @ qx, y @ qy) == pytest.approx(base, rel=RTOL, abs=0)


def test_offset_invariance() -> None:
    x, y = _pair(3)
    offset = np.arange(1, x.shape[1] + 1) * 10.0
    assert linear_cka(x + offset, y) == pytest.approx(linear_cka(x, y), rel=1e-11, abs=0)


def test_symmetry() -> None:
    x, y = _pair(4)
    assert linear_cka(x, y) == pytest.approx(linear_cka(y, x), rel=RTOL, abs=0)


def test_range_and_not_trivially_one() -> None:
    values = []
    for seed in range(10):
        rng = _rng(100 + seed)
        x = rng.normal(size=(30, 4))
        y = rng.normal(size=(30, 7)) + seed * 0.1 * x[:, :1]
        values.append(linear_cka(x, y))
    values_arr = np.array(values)
    assert np.all(values_arr >= 0.0)
    assert np.all(values_arr <= 1.0)
    assert values_arr.max() < 0.99  # unrelated data must not score near 1


@pytest.mark.parametrize(
    ("n", "dx", "dy"),
    [(50, 4, 3), (8, 40, 30), (12, 2, 60)],  # exercises both the feature and Gram code paths
)
def test_matches_example_space_formula(n: int, dx: int, dy: int) -> None:
    rng = _rng(n + dx + dy)
    x = rng.normal(size=(n, dx)) + 5.0
    y = np.tanh(x[:, :1] @ rng.normal(size=(1, dy))) + rng.normal(size=(n, dy))
    assert linear_cka(x, y) == pytest.approx(_cka_example_space(x, y), rel=1e-11, abs=0)


def test_not_invariant_to_general_linear_transform() -> None:
    x, y = _pair(5)
    a = np.eye(x.shape[1])
    a[0, 0] = 100.0  # stretch one axis and shear another: invertible but not orthogonal
    a[1, 2] = 5.0
    assert abs(np.linalg.det(a)) > 1.0
    assert linear_cka(x, x @ a) < 0.99
    assert abs(linear_cka(x @ a, y) - linear_cka(x, y)) > 1e-3


def test_float32_input_computed_in_float64() -> None:
    x, y = _pair(6)
    x32 = x.astype(np.float32)
    y32 = y.astype(np.float32)
    expected = linear_cka(x32.astype(np.float64), y32.astype(np.float64))
    assert linear_cka(x32, y32) == expected


def test_inputs_not_modified() -> None:
    x, y = _pair(7)
    x_copy, y_copy = x.copy(), y.copy()
    linear_cka(x, y)
    debiased_linear_cka(x, y)
    np.testing.assert_array_equal(x, x_copy)
    np.testing.assert_array_equal(y, y_copy)


@pytest.mark.parametrize("fn", [linear_cka, debiased_linear_cka])
def test_constant_representation_gives_nan(fn) -> None:
    x, y = _pair(8)
    assert math.isnan(fn(np.zeros_like(x), y))
    assert math.isnan(fn(x, np.full_like(y, 0.1)))  # 0.1 is inexact in binary: no residue left


@pytest.mark.parametrize("fn", [linear_cka, debiased_linear_cka])
def test_invalid_inputs_raise(fn) -> None:
    x, y = _pair(9)
    with pytest.raises(ValueError, match="same number of rows"):
        fn(x, y[:-1])
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        fn(bad, y)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="finite"):
        fn(x, bad)
    with pytest.raises(ValueError, match="2-D"):
        fn(x[:, 0], y)


def test_too_few_examples_raise() -> None:
    x, y = _pair(10, n=3)
    with pytest.raises(ValueError, match="at least 2"):
        linear_cka(x[:1], y[:1])
    with pytest.raises(ValueError, match="at least 4"):
        debiased_linear_cka(x, y)


# --- debiased CKA ---------------------------------------------------------------------------


def test_debiased_self_similarity_is_one() -> None:
    x, _ = _pair(11)
    assert debiased_linear_cka(x, x) == pytest.approx(1.0, rel=RTOL, abs=0)


def test_debiased_symmetry() -> None:
    x, y = _pair(12)
    assert debiased_linear_cka(x, y) == pytest.approx(debiased_linear_cka(y, x), rel=RTOL, abs=0)


@pytest.mark.parametrize(("n", "dx", "dy"), [(4, 2, 3), (25, 6, 5), (10, 30, 3)])
def test_debiased_matches_explicit_formula(n: int, dx: int, dy: int) -> None:
    x, y = _pair(13 + n, n=n, dx=dx, dy=dy)
    expected = _debiased_reference(x, y)
    assert debiased_linear_cka(x, y) == pytest.approx(expected, rel=1e-11, abs=0)


def test_debiased_matches_u_statistic_definition() -> None:
    x, y = _pair(14, n=7, dx=3, dy=2)
    expected = _debiased_reference(x, y, hsic=_hsic_u_tuples)
    assert debiased_linear_cka(x, y) == pytest.approx(expected, rel=1e-11, abs=0)


def test_debiased_differs_from_biased_and_is_offset_invariant() -> None:
    x, y = _pair(15, n=12)
    d = debiased_linear_cka(x, y)
    assert abs(d - linear_cka(x, y)) > 1e-3
    assert debiased_linear_cka(x + 50.0, y - 7.0) == pytest.approx(d, rel=1e-10, abs=0)


def test_debiased_near_zero_for_independent_data() -> None:
    rng = _rng(16)
    x = rng.normal(size=(400, 20))
    y = rng.normal(size=(400, 20))
    # The biased estimator is inflated by dimension/sample size; the debiased one is not.
    assert abs(debiased_linear_cka(x, y)) < 0.02
    assert linear_cka(x, y) > 0.03
