"""Linear centred kernel alignment (CKA) between two sets of representations.

Both functions take activations of shape (n_examples, n_features), rows paired by example, and
compute in float64 whatever the input dtype. References: Kornblith et al. 2019 (linear CKA);
Nguyen, Raghu & Kornblith 2021 (debiased CKA), using the unbiased HSIC estimator of
Song et al. 2012.

A representation with no variance across examples (e.g. a dead ReLU layer) makes CKA undefined;
both functions return ``nan`` in that case rather than raising, so callers can record it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["debiased_linear_cka", "linear_cka"]


def _validate(x: np.ndarray, y: np.ndarray, min_n: int) -> tuple[np.ndarray, np.ndarray]:
    """Check shapes and finiteness; return float64 copies with each feature column centred."""
    x = np.asarray(x)
    y = np.asarray(y)
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(
            f"CKA inputs must be 2-D (n_examples, n_features); got shapes {x.shape} and {y.shape}"
        )
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"CKA inputs must have the same number of rows (examples); "
            f"got shapes {x.shape} and {y.shape}"
        )
    if x.shape[0] < min_n:
        raise ValueError(f"CKA needs at least {min_n} examples; got shapes {x.shape} and {y.shape}")
    if x.shape[1] == 0 or y.shape[1] == 0:
        raise ValueError(f"CKA inputs must have at least one feature; got {x.shape} and {y.shape}")
    # Copy (never modify the caller's array) and check after the cast so that values which
    # overflow float64 are caught too.
    x = np.array(x, dtype=np.float64)
    y = np.array(y, dtype=np.float64)
    if not np.isfinite(x).all() or not np.isfinite(y).all():
        raise ValueError(
            f"CKA inputs must be finite (no NaN/inf); got shapes {x.shape} and {y.shape}"
        )
    return _centre(x), _centre(y)


def _centre(a: np.ndarray) -> np.ndarray:
    """Subtract each column's mean in place (``a`` must be a private float64 copy)."""
    constant = np.ptp(a, axis=0) == 0
    a -= a.mean(axis=0)
    # A constant column minus its floating-point mean can leave ~1e-17 residue; zero it exactly
    # so a dead layer is recognised as such instead of producing CKA of rounding noise.
    a[:, constant] = 0.0
    return a


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA: ``||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)`` with column-centred X, Y.

    Returns ``nan`` if either centred matrix is all zeros (no variance across examples).
    Raises ``ValueError`` for non-2-D input, mismatched rows, fewer than 2 rows or non-finite
    values.
    """
    xc, yc = _validate(x, y, min_n=2)
    if not xc.any() or not yc.any():
        return float("nan")
    n, dx = xc.shape
    dy = yc.shape[1]
    # The feature-space and example-space (Gram) forms are identical, since
    # ||Y^T X||_F^2 = <X X^T, Y Y^T>_F; pick the cheaper so wide conv activations
    # (features >> examples) never build a features x features matrix.
    feature_cost = n * (dx * dy + dx * dx + dy * dy)
    gram_cost = n * n * (dx + dy)
    if feature_cost <= gram_cost:
        cross = np.sum((yc.T @ xc) ** 2)
        norm_x = np.linalg.norm(xc.T @ xc)
        norm_y = np.linalg.norm(yc.T @ yc)
    else:
        k = xc @ xc.T
        gram_y = yc @ yc.T
        cross = np.sum(k * gram_y)
        norm_x = np.linalg.norm(k)
        norm_y = np.linalg.norm(gram_y)
    return float(cross / (norm_x * norm_y))


def _hsic_unbiased(k: np.ndarray, gram_l: np.ndarray) -> float:
    """Song et al. (2012) unbiased HSIC; both Gram matrices must already have zero diagonals."""
    n = k.shape[0]
    # Gram matrices are symmetric, so 1^T K L 1 is the dot product of their column sums.
    col_k = k.sum(axis=0)
    col_l = gram_l.sum(axis=0)
    trace_kl = np.sum(k * gram_l)
    term = (
        trace_kl
        + col_k.sum() * col_l.sum() / ((n - 1) * (n - 2))
        - 2.0 / (n - 2) * np.dot(col_k, col_l)
    )
    return float(term / (n * (n - 3)))


def debiased_linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Debiased linear CKA (Nguyen, Raghu & Kornblith 2021).

    ``HSIC_u(K, L) / sqrt(HSIC_u(K, K) HSIC_u(L, L))`` with ``K = X X^T``, ``L = Y Y^T``.
    Needs at least 4 examples. Unlike plain linear CKA the value can be slightly negative.
    Returns ``nan`` if either self-HSIC term is <= 0 (e.g. a representation with no variance).
    Builds two n x n float64 Gram matrices, so memory is O(n^2).
    """
    # Centring does not change HSIC_u (it is translation invariant for linear kernels) but
    # reduces cancellation when activations have large means.
    xc, yc = _validate(x, y, min_n=4)
    k = xc @ xc.T
    gram_l = yc @ yc.T
    np.fill_diagonal(k, 0.0)
    np.fill_diagonal(gram_l, 0.0)
    hsic_xx = _hsic_unbiased(k, k)
    hsic_yy = _hsic_unbiased(gram_l, gram_l)
    if not (hsic_xx > 0 and hsic_yy > 0):
        return float("nan")
    hsic_xy = _hsic_unbiased(k, gram_l)
    return float(hsic_xy / np.sqrt(hsic_xx * hsic_yy))
