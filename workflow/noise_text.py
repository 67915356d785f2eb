"""The noise floor's verdict and trajectory in markdown, from the tables the study adds beside
its summary when they are in the folder: ``tables/noise_floor_decision.csv`` (the rule fixed in
docs/protocol.md before the data) and the excess at every C checkpoint
(``tables/noise_floor_trajectory.csv``); and the main study's seeds against their own floor
(``tables/order_vs_noise_endpoints.csv``, ``tables/order_vs_noise.csv``). A folder exported
before those tables existed shows none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import read_csv
from workflow.headlines import noise_floor_study
from workflow.markdown import interval, number, p_value, pick, table
from workflow.phrases import say
from workflow.summary import endpoint_label

DECISION = "tables/noise_floor_decision.csv"
TRAJECTORY = "tables/noise_floor_trajectory.csv"
# The main study's seeds against their own floor: at both endpoints, and at every checkpoint.
MAIN_ENDPOINTS = "tables/order_vs_noise_endpoints.csv"
MAIN_TRAJECTORY = "tables/order_vs_noise.csv"


def _endpoint(row: pd.Series, common: int) -> str:
    """An endpoint as the decision table names it ("common" or "matched") in words."""
    name = str(row["endpoint"])
    return endpoint_label(f"common_{common}" if name == "common" else name)


def decision_text(decision: pd.DataFrame, settings: Mapping[str, Any], common: int) -> str:
    """The verdict at the primary endpoint in a sentence, the power line of each endpoint, and
    the rule's numbers at both endpoints."""
    level = f"{1 - 2 * settings['alpha']:.0%}"
    rows, power = [], []
    for _, row in decision.iterrows():
        where = _endpoint(row, common)
        rows.append(
            [
                where + (" (primary)" if _true(row["primary"]) else ""),
                str(int(row["n"])),
                f"{number(row['excess'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]",
                f"±{number(row['margin'])}",
                p_value(row["p_above_margin"]),
                p_value(row["p_below_margin"]),
                p_value(row["p_tost"]),
                str(row["verdict"]),
            ]
        )
        power.append(
            say(
                "noise_floor.power",
                endpoint=where,
                detectable=number(row["detectable_excess"]),
                power=f"{settings['power']:.0%}",
                half_width=number(row["ci_half_width"]),
            )
        )
    primary = decision[decision["primary"].map(_true)].iloc[0]
    header = ["endpoint", "n seeds", f"excess [{level} t interval]", "margin"]
    header += ["p (excess ≤ margin)", "p (excess ≥ −margin)", "p (TOST)", "verdict"]
    lead = say(
        "noise_floor.decision",
        endpoint=_endpoint(primary, common),
        verdict=primary["verdict"],
        n=int(primary["n"]),
        excess=number(primary["excess"]),
        level=level,
        low=number(primary["ci_low"]),
        high=number(primary["ci_high"]),
        margin=number(primary["margin"]),
    )
    return "\n\n".join([lead, table(header, rows), " ".join(power)])


def _true(value: Any) -> bool:
    return str(value) == "True"


def trajectory_text(trajectory: pd.DataFrame, name: str) -> str:
    """The order effect, the floor and the excess at every C checkpoint."""
    rows = []
    for update in sorted(trajectory["update"].unique()):
        at = {m: pick(trajectory, update=update, metric=m) for m in ("h_order", "h_floor")}
        excess = pick(trajectory, update=update, metric="excess")
        rows.append(
            [
                f"{int(update):,}",
                str(int(excess["n"])),
                interval(at["h_order"]),
                interval(at["h_floor"]),
                interval(excess),
                p_value(excess["p_t"]),
            ]
        )
    header = ["C updates", "n seeds", "order effect", "noise floor", "excess", "paired t p"]
    return say("noise_floor.trajectory", table=name) + "\n\n" + table(header, rows)


def noise_extras(folder: Path, config: Mapping[str, Any]) -> str:
    """The decision and the trajectory the folder holds, each after a blank line ("" when
    it holds neither)."""
    parts = []
    if (folder / DECISION).is_file():
        settings = config["studies"]["noise_floor"].get("decision")
        if settings is None:
            raise ValueError(
                f"{folder / DECISION} is there but the export's config has no "
                "studies.noise_floor.decision: export the folder again with the current config"
            )
        common = config["statistics"]["common_endpoint"]
        parts.append(decision_text(read_csv(folder / DECISION), settings, common))
    if (folder / TRAJECTORY).is_file():
        parts.append(trajectory_text(read_csv(folder / TRAJECTORY), TRAJECTORY))
    return "".join(f"\n\n{part}" for part in parts)


def main_extras(folder: Path, alpha: float) -> str:
    """The main seeds against their own noise floor, at both endpoints and at every C
    checkpoint, each after a blank line ("" when the folder holds neither)."""
    parts = []
    if (folder / MAIN_ENDPOINTS).is_file():
        endpoints = noise_floor_study(read_csv(folder / MAIN_ENDPOINTS), alpha)
        parts.append(say("main.against_floor") + "\n\n" + endpoints)
    if (folder / MAIN_TRAJECTORY).is_file():
        parts.append(trajectory_text(read_csv(folder / MAIN_TRAJECTORY), MAIN_TRAJECTORY))
    return "".join(f"\n\n{part}" for part in parts)
