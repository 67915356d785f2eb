"""The published study beside histres, in markdown: which findings histres reproduces,
contradicts or leaves unexplained (``workflow.replication.classify``), and the table of figures
behind it, in the words of ``workflow/templates/phrases.yaml``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import replication
from workflow.artifacts import read_csv
from workflow.markdown import number, p_value, table
from workflow.phrases import fill, say, text


def _digits(metric: str) -> int:
    if metric.startswith("disagreement"):
        return 2
    return 3 if metric.endswith(("_pct", "_pp")) or "_pp_" in metric else 4


def published_text(row: pd.Series) -> str:
    """A published figure as the original text gives it (trailing zeros aside)."""
    low, high = row["published_ci_low"], row["published_ci_high"]
    ci = f" [{low:g}, {high:g}]" if not pd.isna(low) else ""
    return f"{row['published']:g}{ci}"


def value_text(value: float, row: pd.Series, low: Any = None, high: Any = None) -> str:
    """A histres reading as the table prints it, with its CI when it has one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    statistic = row["statistic"]
    if statistic in replication.TESTS:
        return p_value(value)
    if statistic in replication.COUNTS:
        return f"{value:g}"
    digits = 2 if statistic == "d_z" else _digits(row["metric"])
    shown = number(value, digits)
    if low is not None and not pd.isna(low):
        shown += f" [{number(low, digits)}, {number(high, digits)}]"
    return shown


def figure_label(row: pd.Series) -> str:
    labels = text("labels")
    endpoint, study = str(row["endpoint"]), row["study"]
    if study == "probes":
        budget, seeds = endpoint.split("/")
        where = say("labels.pooled" if "+" in seeds else "labels.budget", budget=budget)
    elif study == "lr_search":
        where = say("labels.rate", lr=endpoint) if endpoint else ""
    else:
        where = labels["endpoint"][endpoint]
    statistic = labels["statistic"][row["statistic"]]
    # A count names itself ("seeds matched"); any other statistic qualifies the metric.
    metric = statistic if statistic[:1].isalpha() else labels["metric"][row["metric"]] + statistic
    return f"{study}, {where}: {metric}" if where else f"{study}: {metric}"


def _yes(value: Any) -> str:
    if value is None or pd.isna(value):
        return ""
    return "yes" if bool(value) else "no"


def figures_table(frame: pd.DataFrame) -> str:
    rows = []
    for _, row in frame.iterrows():
        rows.append(
            [
                figure_label(row),
                published_text(row),
                value_text(row["histres"], row, row["histres_ci_low"], row["histres_ci_high"]),
                _yes(row["inside_ci"]),
                value_text(
                    row["probe_set"], row, row["probe_set_ci_low"], row["probe_set_ci_high"]
                ),
                _yes(row["probe_set_inside_ci"]),
                str(row["verdict"]) if not pd.isna(row["verdict"]) else "",
            ]
        )
    return table(text("replication.header"), rows)


def verdict_lines(classes: Mapping[str, str], lr: str) -> str:
    """A sentence per class, naming its findings."""
    lines = []
    for name in (replication.REPRODUCED, replication.CONTRADICTED, replication.UNEXPLAINED):
        found = [key for key, kind in classes.items() if kind == name]
        words = "; ".join(say(f"findings.{key}", lr=lr) for key in found)
        lines.append(
            say(
                f"replication.{name}",
                count=len(found),
                total=len(classes),
                findings=words or say("replication.none"),
            )
        )
    return "\n\n".join(lines)


def activation_rate(folder: Path) -> str:
    path = folder / "summary" / "activation.csv"
    return f"{read_csv(path)['lr'].iloc[0]:g}" if path.is_file() else "–"


def replication_section(
    folder: Path, config: Mapping[str, Any], published: pd.DataFrame
) -> tuple[str, pd.DataFrame | None]:
    """(the section, the table) for a folder of the published protocol; (a line saying why
    not, None) for any other."""
    if not replication.applies(published, config):
        common = config["statistics"]["common_endpoint"]
        return say("page.no_replication", endpoint=common), None
    frame = replication.replication_table(folder, config, published)
    level = f"{config['statistics']['ci_level']:.0%}"
    alpha = round(1 - config["statistics"]["ci_level"], 10)
    section = fill(
        "replication",
        lead=say("replication.lead", level=level),
        verdicts=verdict_lines(replication.classify(frame), activation_rate(folder)),
        table=figures_table(frame),
        rule=say("replication.rule", alpha=f"{alpha:g}"),
    )
    return section.strip(), frame
