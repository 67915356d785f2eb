"""How far each study of a partial reference folder has come: the seeds whose pair results
(comparison tables, probe tables) the folder holds, of the seeds the study needs.

    done = study_progress(Path("reference/full"), provenance["config"])
    done["main"]            -> Progress(done=4, seeds=20)
    done["lr_search"]       -> None

A pair result is known by the runs its path names (the results layout, which the folder keeps;
older exports carry no provenance). A seed counts only when every pair its study reads from it
is in: the noise floor's whole square of six, both pilot policies, both activations at both
segments. The learning-rate search's traces are no pairs, and the activation study has none to
count before its rate is known: both are None.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflow import registry
from workflow.config import DEFAULT_VARIANT
from workflow.groups import main_group
from workflow.identity import RunId
from workflow.reference import pair_results

ORDERS = ("ABC", "BAC")
# The studies that read pairs (the search's traces are none).
STUDIES = tuple(name for name in registry.NAMES if name != "lr_search")
# A comparison: the two runs it read (unordered) and its segment; a probe table: its seed.
Pair = tuple[frozenset[RunId], str]


@dataclass(frozen=True)
class Progress:
    done: int
    seeds: int


def main_run(config: Mapping[str, Any], seed: int, order: str, **changes: Any) -> RunId:
    """A run of the main protocol (``changes`` replace fields); a variant's run takes its
    activation, rate and optimizer policy from the variant's config, as its rules do."""
    group = main_group(config, changes.get("variant", DEFAULT_VARIANT))
    return RunId(seed=seed, order=order, **{**group, **changes})


def order_pair(config: Mapping[str, Any], seed: int, segment: str = "base", **changes) -> Pair:
    return frozenset(main_run(config, seed, order, **changes) for order in ORDERS), segment


def compared(relative: Path) -> Pair:
    """The runs and segment of a comparison table, from its path in the runs layout:
    ``<run group>/seed~S/ABC_vs_BAC/<segment>.csv`` or
    ``<run group>/seed~S/order~O/vs_stream~0/order~P/<segment>.csv``."""
    first, _, second = relative.parent.as_posix().partition("/vs_stream~0/")
    fields = dict(part.split("~", 1) for part in first.split("/") if "~" in part)
    if second:
        runs = [fields, {**fields, "stream": "0", "order": second.removeprefix("order~")}]
    else:
        runs = [{**fields, "order": order} for order in ORDERS]
    return frozenset(RunId.from_wildcards(run) for run in runs), relative.stem


def held(folder: Path) -> tuple[set[Pair], set[int]]:
    """The comparisons and the probe tables' seeds a reference folder holds."""
    pairs, probes = set(), set()
    for result in pair_results.in_reference(folder):
        if result.kind == "probes":
            probes.add(int(result.relative.stem.removeprefix("seed~")))
        elif result.kind == "comparisons":
            pairs.add(compared(result.relative))
    return pairs, probes


def searched_lr(folder: Path) -> float | None:
    """The rate the folder's finished search selected (None before its summary is in, or
    when it selected none)."""
    summary = folder / "summary" / "lr_search.csv"
    if not summary.is_file():
        return None
    with summary.open(newline="") as handle:
        rates = {float(row["lr"]) for row in csv.DictReader(handle) if row["selected"] == "True"}
    return rates.pop() if len(rates) == 1 else None


def activation_lr(
    config: Mapping[str, Any], pairs: Iterable[Pair], searched: float | None = None
) -> float | None:
    """The activation study's rate: pinned in the config, else the search's selection, else
    the one rate the folder holds LeakyReLU comparisons for (an export older than the search's
    summary); None while the search has not selected one."""
    pinned = config["studies"]["activation"]["lr"]
    if pinned is not None:
        return float(pinned)
    if searched is not None:
        return searched
    rates = {run.lr for runs, _ in pairs for run in runs if run.act == "leaky_relu"}
    return rates.pop() if len(rates) == 1 else None


def needs(config: Mapping[str, Any], study: str, seed: int, lr: float | None) -> list[Pair]:
    """The comparisons a study reads from one seed."""
    if study == "long":
        return [order_pair(config, seed, segment) for segment in ("base", "extended")]
    if study == "noise_floor":
        replicate = config["studies"]["noise_floor"]["stream"]
        across = [
            (
                frozenset({main_run(config, seed, a, stream=replicate), main_run(config, seed, b)}),
                "base",
            )
            for a in ORDERS
            for b in ORDERS
        ]
        return [order_pair(config, seed), order_pair(config, seed, stream=replicate), *across]
    if study == "activation":
        return [
            order_pair(config, seed, segment, act=act, lr=lr)
            for act in ("relu", "leaky_relu")
            for segment in ("base", "extended")
        ]
    # The other studies read their matched views (workflow.registry); the sensitivity study
    # reads its variants against the default's pairs.
    views = registry.BY_NAME[study].views(config)
    if not views:
        raise ValueError(f"no pair results known for study {study!r}")
    default = [order_pair(config, seed)] if study == "sensitivity" else []
    return default + [order_pair(config, seed, **view.fixed) for view in views.values()]


def study_seeds(config: Mapping[str, Any], study: str) -> list[int]:
    source = "main" if study == "probes" else study
    return [int(seed) for seed in config["studies"][source]["seeds"]]


def study_progress(
    folder: Path, config: Mapping[str, Any], studies: Iterable[str] = STUDIES
) -> dict[str, Progress | None]:
    """Each study's (of ``studies``) seeds complete in ``folder``; None where that is not a
    count of pairs (the learning-rate search, or the activation study before its rate is
    known)."""
    pairs, probes = held(folder)
    wanted = set(studies)
    lr = activation_lr(config, pairs, searched_lr(folder)) if "activation" in wanted else None

    def complete(study: str, seed: int) -> bool:
        if study == "probes":
            return seed in probes
        return all(pair in pairs for pair in needs(config, study, seed, lr))

    progress: dict[str, Progress | None] = {"lr_search": None, "activation": None}
    for study in (name for name in STUDIES if name in wanted):
        if study == "activation" and lr is None:
            continue
        seeds = study_seeds(config, study)
        progress[study] = Progress(sum(complete(study, s) for s in seeds), len(seeds))
    return progress
