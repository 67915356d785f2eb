"""Per-pair comparison tables: their columns, and reading them back with checks.

    table = read_comparisons(paths, segments={"base": [0, 250, ...], "extended": [...]})

A comparison CSV (``.../seed~S/ABC_vs_BAC/base.csv`` and the like) has one row per checkpoint of
one segment of one seed. A reader checks the header, that the seed is the one in the file's
path, and that every update of the segment is there exactly once, so a truncated, mislabelled
or hand-edited file stops the reading rule instead of dropping or moving a seed silently; and
first that the file's bytes are those its job wrote (the digest in its provenance,
workflow.tables), so that no edited value reaches a summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from workflow.artifacts import ArtifactError
from workflow.layers import HIDDEN, LAYERS
from workflow.tables import read_table

COLUMNS = (
    "seed",
    "update",
    "pair_status",
    *(f"{kind}_{layer}" for layer in LAYERS for kind in ("cka", "dcka")),
    "h_repr",
    "h_repr_debiased",
    "disagreement_pct",
    "js_divergence",
    "acc_ABC_pct",
    "acc_BAC_pct",
    "acc_diff_pp",
    "acc_gap_pp",
    "loss_ABC",
    "loss_BAC",
    "loss_diff",
    "loss_gap",
    "param_distance",
    *(f"dead_{layer}_{order}" for order in ("ABC", "BAC") for layer in HIDDEN),
    # Alternative behaviour definitions (workflow.compare.behaviour_overlap), appended so that
    # every column before them keeps its place.
    "disagreement_probe_pct",
    "either_wrong_pct",
    "both_wrong_pct",
    "both_wrong_differently_pct",
)
SEED_IN_PATH = re.compile(r"seed~(\d+)")
REBUILD = (
    "delete it and rerun: rule compare_orders_<segment> or compare_streams_<segment> rebuilds it"
)


def comparison_frame(rows: Sequence[Mapping]) -> pd.DataFrame:
    """The rows a comparison job computed, in the documented column order."""
    unknown = sorted({key for row in rows for key in row} - set(COLUMNS))
    if unknown:
        raise ValueError(f"comparison columns {unknown} are not in workflow.comparisons.COLUMNS")
    return pd.DataFrame(list(rows)).reindex(columns=list(COLUMNS))


def read_comparison(path: str | Path, seed: int, updates: Sequence[int]) -> pd.DataFrame:
    """One comparison CSV, checked against the digest its provenance records, the seed and the
    updates the reader expects."""
    table = read_table(path, REBUILD)
    missing = [column for column in COLUMNS if column not in table.columns]
    if missing:
        raise ArtifactError(f"{path}: columns {missing} are missing; {REBUILD}")
    if table.empty:
        raise ArtifactError(f"{path}: has a header but no rows; {REBUILD}")
    seeds = sorted(set(table["seed"].tolist()))
    if seeds != [seed]:
        raise ArtifactError(
            f"{path}: holds seeds {seeds}, this rule expects only {seed}; {REBUILD}"
        )
    counts = Counter(int(update) for update in table["update"])
    absent = [update for update in updates if counts[update] == 0]
    repeated = sorted(update for update, n in counts.items() if n > 1)
    extra = sorted(set(counts) - set(updates))
    if absent or repeated or extra:
        raise ArtifactError(
            f"{path}: updates must be {list(updates)} once each; missing {absent}, "
            f"repeated {repeated}, unexpected {extra}; {REBUILD}"
        )
    return table


def read_comparisons(
    paths: Iterable[str | Path], segments: Mapping[str, Sequence[int]]
) -> pd.DataFrame:
    """Comparison CSVs, each checked (seed from its path, updates from its segment, the file's
    name), concatenated."""
    frames = []
    for path in map(Path, paths):
        found = SEED_IN_PATH.findall(path.as_posix())
        if not found or path.stem not in segments:
            raise ArtifactError(f"{path}: not a comparison path (seed~S/.../<segment>.csv)")
        frames.append(read_comparison(path, int(found[-1]), segments[path.stem]))
    if not frames:
        raise ArtifactError("no comparison tables to read")
    return pd.concat(frames, ignore_index=True)
