"""Evaluate one checkpoint on the test set and build its Parquet dump.

One row per evaluated test image: canonical index, angle (rotated protocol), label, whether
it is in the representation probe, prediction, per-image cross-entropy, logits and softmax;
probe rows also carry the conv1 and conv2 maps globally average-pooled over space
(post-activation) and fc1. Accuracy, mean loss and activation health go into the file
metadata (see docs/outputs.md, "Parquet dumps").
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch
import torch.nn.functional as F

from workflow.layers import HIDDEN
from workflow.model import HistoryNet

REPRESENTATIONS = HIDDEN


def _fixed_list(values: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    values = np.ascontiguousarray(values, dtype=np.float32)
    flat = pa.array(values.reshape(-1))
    array = pa.FixedSizeListArray.from_arrays(flat, values.shape[1])
    if mask is None:
        return array
    # Non-probe rows are null: Parquet stores nothing for them.
    return pa.FixedSizeListArray.from_arrays(flat, values.shape[1], mask=pa.array(~mask))


def schema(widths: dict[str, int]) -> pa.Schema:
    fields = [
        pa.field("image", pa.int32()),
        pa.field("angle", pa.int16()),
        pa.field("label", pa.int8()),
        pa.field("probe", pa.bool_()),
        pa.field("pred", pa.int8()),
        pa.field("loss", pa.float32()),
        pa.field("logits", pa.list_(pa.float32(), 10)),
        pa.field("prob", pa.list_(pa.float32(), 10)),
    ]
    fields += [pa.field(name, pa.list_(pa.float32(), widths[name])) for name in REPRESENTATIONS]
    return pa.schema(fields)


def layer_widths(model: HistoryNet) -> dict[str, int]:
    return {
        "conv1": model.conv1.out_channels,
        "conv2": model.conv2.out_channels,
        "fc1": model.fc1.out_features,
    }


@torch.no_grad()
def _forward(
    model: HistoryNet, images: torch.Tensor, labels: torch.Tensor, probe: np.ndarray, batch: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per image: pred, loss, logits, prob; per probe image and layer: the representation and
    which units are active (pre-activation > 0 somewhere on the image)."""
    device = next(model.parameters()).device
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("pred", "loss", "logits", "prob")}
    reps: dict[str, list[np.ndarray]] = {name: [] for name in REPRESENTATIONS}
    positive_any: dict[str, list[np.ndarray]] = {name: [] for name in REPRESENTATIONS}
    probe_t = torch.from_numpy(probe)
    for start in range(0, len(images), batch):
        x = images[start : start + batch].to(device)
        x = x.contiguous(memory_format=torch.channels_last)
        y = labels[start : start + batch].to(device)
        out = model.representations(x)
        logits = out["logits"]
        columns["pred"].append(logits.argmax(1).cpu().numpy())
        columns["loss"].append(F.cross_entropy(logits, y, reduction="none").cpu().numpy())
        columns["logits"].append(logits.cpu().numpy())
        columns["prob"].append(torch.softmax(logits, 1).cpu().numpy())
        keep = probe_t[start : start + batch].to(device)
        for name in REPRESENTATIONS:
            post, pre = out[name][keep], out[f"{name}_pre"][keep]
            if post.dim() == 4:
                post = post.mean(dim=(2, 3))
                pre = pre.amax(dim=(2, 3))
            positive_any[name].append((pre > 0).cpu().numpy())
            reps[name].append(post.cpu().numpy())
    joined = {k: np.concatenate(v) for k, v in columns.items()}
    return (
        joined,
        {name: np.concatenate(v) for name, v in reps.items()},
        {name: np.concatenate(v) for name, v in positive_any.items()},
    )


def _health(active: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    return {
        name: {
            "dead_fraction": float((~units.any(axis=0)).mean()),
            "mean_active_fraction": float(units.mean()),
        }
        for name, units in active.items()
    }


def evaluate(
    model: HistoryNet,
    images: torch.Tensor,
    labels: torch.Tensor,
    image_ids: np.ndarray,
    probe: np.ndarray,
    batch_size: int,
    angles: np.ndarray | None = None,
) -> tuple[pa.Table, dict]:
    """Return the dump table and its summary (accuracy %, mean loss, activation health)."""
    model.eval()
    data, reps, active = _forward(model, images, labels, probe, batch_size)
    n = len(images)
    rep_full = {}
    for name in REPRESENTATIONS:
        full = np.zeros((n, reps[name].shape[1]), dtype=np.float32)
        full[probe] = reps[name]
        rep_full[name] = full
    label_np = labels.cpu().numpy()
    table = pa.Table.from_arrays(
        [
            pa.array(image_ids.astype(np.int32)),
            pa.array(np.zeros(n, np.int16) if angles is None else angles.astype(np.int16)),
            pa.array(label_np.astype(np.int8)),
            pa.array(probe),
            pa.array(data["pred"].astype(np.int8)),
            pa.array(data["loss"].astype(np.float32)),
            _fixed_list(data["logits"]),
            _fixed_list(data["prob"]),
            *[_fixed_list(rep_full[name], probe) for name in REPRESENTATIONS],
        ],
        schema=schema(layer_widths(model)),
    )
    summary = {
        "n_test": n,
        "n_probe": int(probe.sum()),
        "correct": int((data["pred"] == label_np).sum()),
        "accuracy_pct": float(100.0 * (data["pred"] == label_np).mean()),
        "loss": float(data["loss"].astype(np.float64).mean()),
        "health": _health(active),
    }
    return table, summary


def empty_table(widths: dict[str, int]) -> pa.Table:
    """The dump of a checkpoint that does not exist because its run diverged."""
    return schema(widths).empty_table()
