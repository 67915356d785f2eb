"""Compare the two histories of a seed at one checkpoint, from their dumps and weights.

Reads Parquet and ``.npz`` only; no torch. All comparisons are computed in float64.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from scipy.special import xlogy

from workflow.cka import debiased_linear_cka, linear_cka
from workflow.dumps import column_matrix
from workflow.layers import H_REPR_LAYERS, LAYERS


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-row Jensen-Shannon divergence in nats; 0 log 0 = 0."""
    m = 0.5 * (p + q)
    kl_pm = (xlogy(p, p) - xlogy(p, m)).sum(axis=1)
    kl_qm = (xlogy(q, q) - xlogy(q, m)).sum(axis=1)
    return 0.5 * (kl_pm + kl_qm)


def parameter_distance(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    """``||w_a - w_b|| / (0.5 (||w_a|| + ||w_b||))`` over all parameters."""
    if a.keys() != b.keys():
        raise ValueError("the two checkpoints hold different parameters")
    diff = sum(float(np.sum((a[k].astype(np.float64) - b[k]) ** 2)) for k in a)
    norm_a = np.sqrt(sum(float(np.sum(a[k].astype(np.float64) ** 2)) for k in a))
    norm_b = np.sqrt(sum(float(np.sum(b[k].astype(np.float64) ** 2)) for k in b))
    return float(np.sqrt(diff) / (0.5 * (norm_a + norm_b)))


def percent(mask: np.ndarray) -> float:
    """% of ``True`` in ``mask``; NaN, not a warning, when it is empty (no probe images)."""
    return float(100.0 * np.mean(mask)) if mask.size else float("nan")


def behaviour_overlap(
    pred_a: np.ndarray, pred_b: np.ndarray, label: np.ndarray, probe: np.ndarray
) -> dict[str, float]:
    """Alternative behaviour definitions, so that "behaviour has converged" can be checked not
    to hinge on the image set (the probe subset the representations use, instead of the whole
    test set) or on treating a shared error like a shared answer."""
    differ = pred_a != pred_b
    wrong_a, wrong_b = pred_a != label, pred_b != label
    both_wrong = wrong_a & wrong_b
    return {
        "disagreement_probe_pct": percent(differ[probe]),
        "either_wrong_pct": percent(wrong_a | wrong_b),
        "both_wrong_pct": percent(both_wrong),
        "both_wrong_differently_pct": percent(both_wrong & differ),
    }


def compare_checkpoint(
    first: pa.Table,
    second: pa.Table,
    first_summary: dict,
    second_summary: dict,
    first_state: dict[str, np.ndarray],
    second_state: dict[str, np.ndarray],
) -> dict[str, float]:
    """All pair metrics at one checkpoint; ``first`` is S_ABC, ``second`` S_BAC."""
    for key in ("image", "angle", "label", "probe"):
        if not first.column(key).equals(second.column(key)):
            raise ValueError(f"the two dumps do not cover the same test images ({key} differs)")
    probe = first.column("probe").to_numpy(zero_copy_only=False)
    row: dict[str, float] = {}
    for layer in LAYERS:
        x = column_matrix(first, layer, probe)
        y = column_matrix(second, layer, probe)
        row[f"cka_{layer}"] = linear_cka(x, y)
        row[f"dcka_{layer}"] = debiased_linear_cka(x, y)
    row["h_repr"] = 1.0 - np.mean([row[f"cka_{layer}"] for layer in H_REPR_LAYERS])
    row["h_repr_debiased"] = 1.0 - np.mean([row[f"dcka_{layer}"] for layer in H_REPR_LAYERS])
    pred_a = first.column("pred").to_numpy()
    pred_b = second.column("pred").to_numpy()
    row["disagreement_pct"] = float(100.0 * np.mean(pred_a != pred_b))
    label = first.column("label").to_numpy()
    row.update(behaviour_overlap(pred_a, pred_b, label, probe))
    row["js_divergence"] = float(
        js_divergence(column_matrix(first, "prob"), column_matrix(second, "prob")).mean()
    )
    n = first_summary["n_test"]
    row["acc_ABC_pct"] = first_summary["accuracy_pct"]
    row["acc_BAC_pct"] = second_summary["accuracy_pct"]
    row["acc_diff_pp"] = 100.0 * (first_summary["correct"] - second_summary["correct"]) / n
    row["acc_gap_pp"] = abs(row["acc_diff_pp"])
    row["loss_ABC"] = first_summary["loss"]
    row["loss_BAC"] = second_summary["loss"]
    row["loss_diff"] = row["loss_ABC"] - row["loss_BAC"]
    row["loss_gap"] = abs(row["loss_diff"])
    row["param_distance"] = parameter_distance(first_state, second_state)
    for name, summary in (("ABC", first_summary), ("BAC", second_summary)):
        for layer, health in summary["health"].items():
            row[f"dead_{layer}_{name}"] = health["dead_fraction"]
    return {k: float(v) for k, v in row.items()}
