"""The published study beside histres: each figure the original text reports
(``reference/published.csv``) against the same reading of a reference folder.

A figure's verdict, from the numbers alone:

    agrees        the published value lies inside histres's CI (a disagreement: on the test set
                  or on the probe set), or the same count or rate, or a p-value on the same side
                  of the level that matches the CIs
    contradicts   a p-value on the other side of that level (the test's answer flips), or a
                  mean whose published CI and histres's CI exclude each other
    differs       any other value outside histres's CI (a count, a rate, a mean without a
                  published CI or whose CI overlaps histres's)
    (empty)       nothing to judge by: a range's end, an effect size

A finding (published.csv's ``finding``) is contradicted when one of its figures contradicts,
unexplained when one differs, reproduced when every judged figure agrees.

The published fixed-endpoint disagreements sit near histres's readings on the 2,000-image
probe set, not on the 10,000-image test set, so every disagreement is read both ways: the
probe-set value comes from each pair's comparison table (``disagreement_probe_pct``) at the
seed's update, with a bootstrap CI over seeds, no retraining.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import progress
from workflow.artifacts import read_csv
from workflow.reference import pair_results
from workflow.stats import Bootstrap, describe

AGREES, CONTRADICTS, DIFFERS = "agrees", "contradicts", "differs"
REPRODUCED, CONTRADICTED, UNEXPLAINED = "reproduced", "contradicted", "unexplained"
# The summary columns that locate a published figure's row, in the order published.csv's
# ``endpoint`` names them (``/``-separated).
KEYS = {
    "main": ("endpoint",),
    "rotated": ("endpoint",),
    "long": ("update",),
    "activation": ("update",),
    "probes": ("budget", "probe_seeds"),
    "lr_search": ("lr",),
}
TESTS = ("p_t", "p_wilcoxon")
COUNTS = ("n_matched", "n_pos", "n_neg", "n_finite", "selected")
COLUMNS = [
    "finding",
    "study",
    "endpoint",
    "metric",
    "statistic",
    "published",
    "published_ci_low",
    "published_ci_high",
    "published_n",
    "histres",
    "histres_ci_low",
    "histres_ci_high",
    "histres_n",
    "inside_ci",
    "probe_set",
    "probe_set_ci_low",
    "probe_set_ci_high",
    "probe_set_inside_ci",
    "verdict",
    "note",
]


@dataclass(frozen=True)
class Reading:
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: float = math.nan

    def holds(self, value: float) -> bool | None:
        """Whether ``value`` lies inside this reading's CI (None without one)."""
        if math.isnan(self.ci_low):
            return None
        return bool(self.ci_low <= value <= self.ci_high)


def read_published(path: Path) -> pd.DataFrame:
    published = read_csv(path)
    missing = {"finding", "study", "endpoint", "metric", "statistic", "value"} - set(published)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return published.assign(endpoint=published["endpoint"].fillna("").astype(str))


def applies(published: pd.DataFrame, config: Mapping[str, Any]) -> bool:
    """Whether a config runs the published protocol's endpoints: its common endpoint is the
    one published.csv names (the small config's 100 updates are not the study's)."""
    common = {e for e in published["endpoint"] if e.startswith("common_")}
    return common == {f"common_{config['statistics']['common_endpoint']}"}


def _summary_row(folder: Path, row: pd.Series) -> pd.Series | None:
    path = folder / "summary" / f"{row['study']}.csv"
    if not path.is_file():
        return None
    summary = read_csv(path)
    keys = KEYS[row["study"]]
    for column, value in zip(keys, row["endpoint"].split("/"), strict=False):
        summary = summary[summary[column].astype(str) == value]
    if "metric" in summary:
        summary = summary[summary["metric"] == row["metric"]]
    if summary.empty:
        return None
    return summary.iloc[0]


def _per_seed_extreme(folder: Path, row: pd.Series) -> Reading | None:
    path = folder / "tables" / f"{row['study']}_per_seed.csv"
    if not path.is_file():
        return None
    table = read_csv(path)
    values = table.loc[
        (table["endpoint"] == row["endpoint"]) & (table["status"] == "ok"), row["metric"]
    ]
    value = values.min() if row["statistic"] == "min" else values.max()
    return Reading(float(value), n=len(values))


def histres_reading(folder: Path, row: pd.Series) -> Reading | None:
    """The reference's reading of one published figure (None where the folder lacks it)."""
    if row["statistic"] in ("min", "max"):
        return _per_seed_extreme(folder, row)
    if row["statistic"] == "selected":
        path = folder / "summary" / "lr_search.csv"
        if not path.is_file():
            return None
        summary = read_csv(path)
        chosen = summary.loc[summary["selected"].astype(str) == "True", "lr"]
        return Reading(float(chosen.iloc[0])) if len(chosen) else None
    found = _summary_row(folder, row)
    if found is None:
        return None
    if row["statistic"] == "mean":
        return Reading(found["mean"], found["ci_low"], found["ci_high"], found["n"])
    if row["statistic"] == "n_matched":
        matched = found["n_seeds"] - found["n_unmatched"] - found["n_diverged"]
        return Reading(float(matched), n=found["n_seeds"])
    n = found["n"] if "n" in found else found.get("n_traces", math.nan)
    return Reading(float(found[row["statistic"]]), n=n)


def _seed_updates(
    folder: Path, config: Mapping[str, Any], row: pd.Series
) -> list[tuple[progress.Pair, int]]:
    """Each seed's pair and update for a disagreement figure of main, rotated, long or
    activation."""
    study, endpoint = row["study"], row["endpoint"]
    if study in ("main", "rotated"):
        table = read_csv(folder / "tables" / f"{study}_per_seed.csv")
        table = table[(table["endpoint"] == endpoint) & (table["status"] == "ok")]
        protocol = "rotated" if study == "rotated" else "class_split"
        return [
            (progress.order_pair(config, int(seed), protocol=protocol), int(update))
            for seed, update in zip(table["seed"], table["update"], strict=True)
        ]
    update = int(endpoint)
    segment = "base" if update in config["training"]["checkpoints"] else "extended"
    changes: dict[str, Any] = {}
    if study == "activation":
        summary = read_csv(folder / "summary" / "activation.csv")
        act = row["metric"].removeprefix("disagreement_pct_")
        changes = {"act": act, "lr": float(summary["lr"].iloc[0])}
    seeds = config["studies"][study]["seeds"]
    return [(progress.order_pair(config, int(s), segment, **changes), update) for s in seeds]


def probe_reading(folder: Path, config: Mapping[str, Any], row: pd.Series) -> Reading | None:
    """The probe-set disagreement beside a published disagreement (None for other figures, or
    where the folder lacks the study)."""
    if not row["metric"].startswith("disagreement_pct") or row["statistic"] != "mean":
        return None
    if not (folder / "summary" / f"{row['study']}.csv").is_file():
        return None
    tables = {
        progress.compared(result.relative): result.in_reference(folder)
        for result in pair_results.in_reference(folder)
        if result.kind == "comparisons"
    }
    values = []
    for pair, update in _seed_updates(folder, config, row):
        if pair not in tables:
            raise FileNotFoundError(
                f"{folder}: no comparison table of {sorted(pair[0], key=str)} ({pair[1]}), "
                f"which the complete study {row['study']} read: export the folder again"
            )
        table = read_csv(tables[pair])
        values.append(table.loc[table["update"] == update, "disagreement_probe_pct"].iloc[0])
    summary = describe(values, Bootstrap.from_config(config["statistics"]))
    return Reading(summary.mean, summary.ci_low, summary.ci_high, summary.n)


def verdict(row: pd.Series, ours: Reading | None, probe: Reading | None, alpha: float) -> str:
    """A figure's verdict (module docstring); "" where there is nothing to judge by."""
    published, statistic = float(row["value"]), row["statistic"]
    if ours is None or math.isnan(ours.value):
        return ""
    if statistic in TESTS:
        return AGREES if (published < alpha) == (ours.value < alpha) else CONTRADICTS
    if statistic in COUNTS:
        return AGREES if math.isclose(published, ours.value) else DIFFERS
    if statistic != "mean":
        return ""
    if ours.holds(published) or (probe is not None and probe.holds(published)):
        return AGREES
    low, high = row.get("ci_low", math.nan), row.get("ci_high", math.nan)
    if not (math.isnan(low) or math.isnan(ours.ci_low)):
        if high < ours.ci_low or low > ours.ci_high:
            return CONTRADICTS
    return DIFFERS


def replication_table(
    folder: Path, config: Mapping[str, Any], published: pd.DataFrame
) -> pd.DataFrame:
    """One row per published figure with histres's reading, the probe-set reading of a
    disagreement, and the verdict; the level of the p-values matches the config's CIs."""
    alpha = round(1 - config["statistics"]["ci_level"], 10)
    rows = []
    for _, row in published.iterrows():
        ours, probe = histres_reading(folder, row), probe_reading(folder, config, row)
        empty = Reading(math.nan)
        rows.append(
            {
                **{key: row[key] for key in ("finding", "study", "endpoint", "metric")},
                "statistic": row["statistic"],
                "published": row["value"],
                "published_ci_low": row.get("ci_low"),
                "published_ci_high": row.get("ci_high"),
                "published_n": row.get("n"),
                **_reading_columns("histres", ours or empty, float(row["value"])),
                **_reading_columns("probe_set", probe or empty, float(row["value"])),
                "verdict": verdict(row, ours, probe, alpha),
                "note": row.get("note"),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _reading_columns(prefix: str, reading: Reading, published: float) -> dict[str, Any]:
    columns = {
        prefix: reading.value,
        f"{prefix}_ci_low": reading.ci_low,
        f"{prefix}_ci_high": reading.ci_high,
    }
    if prefix == "histres":
        return columns | {"histres_n": reading.n, "inside_ci": reading.holds(published)}
    return columns | {f"{prefix}_inside_ci": reading.holds(published)}


def classify(table: pd.DataFrame) -> dict[str, str]:
    """Each finding's class, in published.csv's order (module docstring)."""
    classes = {}
    for finding, figures in table.groupby("finding", sort=False):
        verdicts = set(figures["verdict"].fillna(""))
        if CONTRADICTS in verdicts:
            classes[finding] = CONTRADICTED
        elif DIFFERS in verdicts:
            classes[finding] = UNEXPLAINED
        elif AGREES in verdicts:
            classes[finding] = REPRODUCED
    return classes
