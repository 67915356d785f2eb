"""Which of the choices the protocol leaves open move the numbers, in words.

The sensitivity summary (``workflow.sensitivity``) in a sentence per reading: how far H_repr
moves from the default, paired by seed, at each endpoint, and how the matching itself moves
(matched seeds, matched update). A shift counts as a move when its paired bootstrap CI
excludes zero; from fewer than two seeds nothing is judged. Written from the summary whatever
it shows, like every generated results page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from workflow.markdown import interval, number, p_value, unrejected
from workflow.phrases import say, text
from workflow.summary import endpoint_label

DEFAULT_ARM = "default"
# A figure's tick labels (the sentences are in workflow/templates/phrases.yaml, "choices"); a
# variant added by config alone is named by its key.
VARIANT_LABEL = {"raw_input": "raw pixels in [0, 1]", "fixed_c_order": "same C order every pass"}
# workflow.sensitivity.rule_name, read back.
RULE_NAME = re.compile(
    r"gap(?P<gap>[0-9.e+-]+)_acc(?P<acc>[0-9.e+-]+)_(?P<grid>all|every\d+)_persist(?P<persist>\d+)"
)


# How each change of a matching rule from the config's reads as a label.
RULE_LABEL = {
    "gap": "gap ≤ {value:g} pp",
    "acc": "accuracy ≥ {value:g}%",
    "grid": "every {value:,} updates",
    "persist": "{value} checkpoints in a row",
}


def _rule_changes(
    arm: str, matching: Mapping[str, Any], words: Mapping[str, str]
) -> list[str] | None:
    """What a matching rule changes from the config's, each in ``words``; None when ``arm``
    is not a rule name."""
    rule = RULE_NAME.fullmatch(arm)
    if rule is None:
        return None
    grid = None if rule["grid"] == "all" else int(rule["grid"][5:])
    values = {
        "gap": (float(rule["gap"]), matching["max_accuracy_gap_pp"]),
        "acc": (float(rule["acc"]), matching["min_accuracy_pct"]),
        "grid": (grid, None),
        "persist": (int(rule["persist"]), 1),
    }
    return [
        words[key].format(value=value, default=default)
        for key, (value, default) in values.items()
        if value != default
    ]


def reading(analysis: str, arm: str, matching: Mapping[str, Any]) -> str:
    """What a reading changes, against the config's ``matching`` section for the rules."""
    if analysis != "matching":
        variants = text("choices.variants")
        return variants[arm] if arm in variants else say("choices.variant", arm=arm)
    changes = _rule_changes(arm, matching, text("choices.rules"))
    if changes is None:
        return say("choices.rule", arm=arm)
    return say("choices.matching", changes=" and ".join(changes) or say("choices.default_rule"))


def reading_label(analysis: str, arm: str, matching: Mapping[str, Any]) -> str:
    """A reading in a few words, for a figure's tick label."""
    if analysis != "matching":
        return VARIANT_LABEL.get(arm, arm)
    changes = _rule_changes(arm, matching, RULE_LABEL)
    if changes is None:
        return arm
    return ", ".join(changes) or "default rule"


def moves(row: pd.Series) -> bool:
    """Whether a paired difference moved: judged from two seeds or more, CI excluding 0."""
    return int(row["n"]) >= 2 and (row["ci_low"] > 0 or row["ci_high"] < 0)


def shift(row: pd.Series, alpha: float) -> str:
    """How a paired difference moved, in words; a move the paired tests do not back at
    ``alpha`` says so."""
    n = int(row["n"])
    if n == 0:
        return say("choices.no_seed")
    if n == 1:
        return say("choices.one_seed", value=number(row["mean"]))
    shown = say("choices.difference", value=interval(row), p=p_value(row["p_t"]))
    if not moves(row):
        return say("choices.still", text=shown)
    if caveat := unrejected(row, alpha, t_shown=True):
        shown += f"; {caveat}"
    return say("choices.rises" if row["ci_low"] > 0 else "choices.falls", text=shown)


def later(row: pd.Series) -> str:
    """How much later a reading matches than the default, on average over seeds."""
    mean = float(row["mean"])
    if mean == 0:
        return say("choices.same_update")
    side = "later" if mean > 0 else "earlier"
    return say("choices.later", updates=number(abs(mean), 0), side=side)


def sentence_case(text: str) -> str:
    return text[:1].lower() + text[1:]


def _rows(summary: pd.DataFrame, analysis: str, arm: str, contrast: str) -> pd.DataFrame:
    rows = summary[(summary["analysis"] == analysis) & (summary["arm"] == arm)]
    return rows[rows["contrast"].fillna("") == contrast]


def _one(rows: pd.DataFrame, endpoint: str, metric: str) -> pd.Series | None:
    found = rows[(rows["endpoint"] == endpoint) & (rows["metric"] == metric)]
    return found.iloc[0] if len(found) == 1 else None


def _matched_seeds(row: pd.Series) -> int:
    return int(row["n_seeds"] - row["n_unmatched"] - row["n_diverged"])


def reading_sentence(
    summary: pd.DataFrame, analysis: str, arm: str, matching: Mapping[str, Any], alpha: float
) -> tuple[str, bool]:
    """(the sentence, whether H_repr moved at some endpoint)."""
    differences = _rows(summary, analysis, arm, "minus_default")
    clauses, moved = [], False
    for endpoint in differences["endpoint"].unique():
        row = _one(differences, endpoint, "h_repr")
        if row is None:
            continue
        moved |= moves(row)
        clauses.append(
            say(
                "choices.clause",
                endpoint=endpoint_label(endpoint),
                n=int(row["n"]),
                seeds=int(row["n_seeds"]),
                shift=shift(row, alpha),
            )
        )
    sentence = say(
        "choices.sentence", reading=reading(analysis, arm, matching), clauses="; ".join(clauses)
    )
    mine = _one(_rows(summary, analysis, arm, ""), "matched", "h_repr")
    base = _one(_rows(summary, analysis, DEFAULT_ARM, ""), "matched", "h_repr")
    update = _one(differences, "matched", "update")
    if mine is not None and base is not None:
        sentence += say(
            "choices.matches",
            matched=_matched_seeds(mine),
            seeds=int(mine["n_seeds"]),
            default=_matched_seeds(base),
            later=f", {later(update)}" if update is not None and int(update["n"]) >= 1 else "",
        )
    return sentence, moved


def choices_text(summary: pd.DataFrame, matching: Mapping[str, Any], alpha: float) -> str:
    """The opening answer (which readings move H_repr) and a sentence per reading; ``alpha``
    is the level at which the paired tests beside each CI are read."""
    sentences, moving = [], []
    arms = summary.loc[summary["arm"] != DEFAULT_ARM, ["analysis", "arm"]].drop_duplicates()
    for analysis, arm in arms.itertuples(index=False):
        sentence, moved = reading_sentence(summary, analysis, arm, matching, alpha)
        sentences.append(f"- {sentence}")
        if moved:
            moving.append(sentence_case(reading(analysis, arm, matching)))
    answer = say(
        "choices.answer",
        readings=len(arms),
        moving=len(moving),
        verb="moves" if len(moving) == 1 else "move",
        which=f": {'; '.join(moving)}." if moving else ".",
    )
    floor = _one(_rows(summary, "variant", DEFAULT_ARM, ""), "matched", "h_floor")
    if floor is not None and int(floor["n"]) >= 1:
        answer += say("choices.scale", value=interval(floor), n=int(floor["n"]))
    return "\n".join([answer, "", *sentences])
