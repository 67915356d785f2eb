"""The config slice a job depends on, defined once for the rules and for the code that must
know what a job would be given without running Snakemake (``workflow.reference.pair_results``, which
restores a reference's pair results into a tree).

Rules pass a job only its slice (rules/common.smk), so that a changed setting reruns exactly
the jobs that read it. Slices are compared as text: keys are sorted, so YAML key order never
triggers a rerun.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workflow.config import variant_config

# What a network is read with, by a dump or a probe.
READ_KEYS = (
    "data.digests",
    "data.normalize",
    "data.subset",
    "tasks.probe_per_digit",
    "model",
    "training.torch_threads",
)
# What a dump, and so a comparison of two dumps, depends on.
DUMP_KEYS = (*READ_KEYS, "training.device", "evaluation")
# The activation is part of a run's identity (its path), never of the slice.
IDENTITY_KEYS = ("model.activation",)
# What a training job depends on (its variant's config), minus what its path sets: the
# activation, rate and optimizer policy are its identity; the extended checkpoints concern only
# the extension rule, and state_every changes no result (the adapters read it from the config,
# so that changing it reruns nothing).
TRAINING_KEYS = (
    "data.digests",
    "data.normalize",
    "data.subset",
    "tasks.class_split",
    "tasks.common_per_digit",
    "model",
    "training",
)
TRAINING_DROP = (
    "model.activation",
    "training.lr",
    "training.optimizer_at_common",
    "training.state_every",
    "training.extended_checkpoints",
)
PROBE_SETTINGS = (
    "budgets",
    "probe_seed",
    "extra_seeds",
    "lr",
    "momentum",
    "weight_decay",
    "epochs",
    "batch_size",
)


def sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): sorted_keys(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def slice_config(
    config: Mapping[str, Any], keys: Sequence[str], drop: Sequence[str] = ()
) -> dict[str, Any]:
    """The named dotted keys of ``config`` ("model", "data.subset"), minus ``drop``."""
    out: dict[str, Any] = {}
    for key in keys:
        head, _, tail = key.partition(".")
        value = config[head][tail] if tail else config[head]
        out.setdefault(head, {}).update({tail: value} if tail else value)
    for key in drop:
        head, _, tail = key.partition(".")
        out[head].pop(tail, None)
    return sorted_keys(out)


def training_config(config: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """What a training job of a variant's runs (and a trace of the stability search) is given."""
    return slice_config(variant_config(config, variant), TRAINING_KEYS, drop=TRAINING_DROP)


def dump_config(config: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """What the dumps of a variant's runs, and their comparisons, are made with."""
    return slice_config(variant_config(config, variant), DUMP_KEYS, drop=IDENTITY_KEYS)


def probe_config(config: Mapping[str, Any]) -> dict[str, Any]:
    return slice_config(config, READ_KEYS, drop=IDENTITY_KEYS)


def probe_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    probes = config["studies"]["probes"]
    return sorted_keys({key: probes[key] for key in PROBE_SETTINGS})
