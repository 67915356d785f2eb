"""The main protocol's run group (a run's identity minus its seed and order), and the matched
views of the studies (``workflow.registry`` names each study's).

The rules (``rules/common.smk``, as path text), the progress counts and the verification all
derive the group here. A variant's group takes its activation, rate and optimizer policy from the
variant's config (``workflow.config.variant_config``), as its rules do; the main study's is
the default variant's on stream 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workflow.config import DEFAULT_VARIANT, variant_config


def main_group(config: Mapping[str, Any], variant: str = DEFAULT_VARIANT) -> dict[str, Any]:
    """The group's fields (``workflow.identity.RunId``'s, the rate a float)."""
    source = variant_config(config, variant)
    return {
        "protocol": "class_split",
        "variant": variant,
        "act": source["model"]["activation"],
        "lr": float(source["training"]["lr"]),
        "optim": source["training"]["optimizer_at_common"],
        "stream": 0,
    }


@dataclass(frozen=True)
class View:
    """Matched pairs a study reads: the main group with ``fixed`` fields changed (path text,
    as the rules' wildcards), on ``seeds``. A ``summarized`` view has its own summary and
    per-seed table (rule summarize_pairs); the others are matched for a study's own rule."""

    fixed: Mapping[str, str]
    seeds: tuple[int, ...]
    summarized: bool = True


Views = dict[str, View]


def _seeds(config: Mapping[str, Any], study: str) -> tuple[int, ...]:
    return tuple(int(seed) for seed in config["studies"][study]["seeds"])


def no_views(config: Mapping[str, Any]) -> Views:
    return {}


def main_views(config: Mapping[str, Any]) -> Views:
    return {"main": View({}, _seeds(config, "main"))}


def noise_floor_views(config: Mapping[str, Any]) -> Views:
    # Its stream-0 pairs: their matched checkpoint is the endpoint of every pair of a square.
    return {"noise_floor": View({}, _seeds(config, "noise_floor"), summarized=False)}


def pilot_views(config: Mapping[str, Any]) -> Views:
    seeds = _seeds(config, "pilot")
    policies = config["studies"]["pilot"]["policies"]
    return {f"pilot_{policy}": View({"optim": policy}, seeds) for policy in policies}


def rotated_views(config: Mapping[str, Any]) -> Views:
    return {"rotated": View({"protocol": "rotated"}, _seeds(config, "rotated"))}


def sensitivity_views(config: Mapping[str, Any]) -> Views:
    seeds = _seeds(config, "sensitivity")
    variants = config["studies"]["sensitivity"]["variants"]
    return {f"variant_{variant}": View({"variant": variant}, seeds) for variant in variants}
