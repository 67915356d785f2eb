"""Numbers and tables as the results pages print them (the words: ``workflow.phrases``)."""

from __future__ import annotations

import math

import pandas as pd

from workflow.phrases import say


def number(value: float, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def p_value(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}"


def interval(row: pd.Series, digits: int = 4) -> str:
    """ "mean [low, high]" of a summary row."""
    return (
        f"{number(row['mean'], digits)} "
        f"[{number(row['ci_low'], digits)}, {number(row['ci_high'], digits)}]"
    )


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def pick(summary: pd.DataFrame, **where) -> pd.Series:
    rows = summary
    for key, value in where.items():
        rows = rows[rows[key].astype(str) == str(value)]
    if len(rows) != 1:
        raise ValueError(f"expected one summary row for {where}, found {len(rows)}")
    return rows.iloc[0]


def tests_text(row: pd.Series) -> str:
    return say(
        "tests.paired",
        p_t=p_value(row["p_t"]),
        p_wilcoxon=p_value(row["p_wilcoxon"]),
        d_z=number(row["d_z"], 2),
    )


def unrejected(row: pd.Series, alpha: float, t_shown: bool = False) -> str:
    """When the CI of a difference excludes zero but a paired test does not reject at
    ``alpha``, the tests that do not, in words ("" otherwise): with few seeds the percentile
    bootstrap CI runs narrow, and a reader should see where the evidence is only the CI's.
    ``t_shown``: the text beside already gives the paired t-test's p, so it is not repeated."""
    if not (row["ci_low"] > 0 or row["ci_high"] < 0):
        return ""
    tests = []
    for name, column in (("tests.t_name", "p_t"), ("tests.wilcoxon_name", "p_wilcoxon")):
        p = float(row[column]) if column in row else math.nan
        if math.isfinite(p) and p >= alpha:
            shown = t_shown and column == "p_t"
            tests.append(say(name) if shown else say("tests.with_p", name=say(name), p=p_value(p)))
    if not tests:
        return ""
    verb = "does" if len(tests) == 1 else "do"
    return say("tests.unrejected", tests=" and ".join(tests), verb=verb, level=f"{alpha:.0%}")


def verdict(row: pd.Series, above: str, inside: str, below: str) -> str:
    """Which side of zero the CI of a signed difference lies on, in words."""
    if row["ci_low"] > 0:
        return above
    if row["ci_high"] < 0:
        return below
    return inside
