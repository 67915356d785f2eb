"""Config validation: the JSON schema plus the cross-key rules a schema cannot say.

    from workflow.config import validate_config
    validate_config(yaml.safe_load(open("config.yaml")))

Errors name the offending key as a dotted path (``training.lr``) so a researcher can find it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

SCHEMA_PATH = Path(__file__).parent / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config value that violates the schema or the protocol's cross-key rules."""


def _key(path: Iterable[Any]) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in path]
    return "".join(parts).lstrip(".") or "<top level>"


def _schema_errors(config: Mapping[str, Any]) -> list[str]:
    schema = yaml.safe_load(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    messages = []
    for error in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.path))):
        # oneOf failures hide the useful message in their sub-errors.
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        messages.append(f"config key {_key(best.absolute_path)}: {best.message}")
    return messages


def _protocol_errors(config: Mapping[str, Any]) -> list[str]:
    messages = []
    split = config["tasks"]["class_split"]
    if set(split["A"]) & set(split["B"]):
        messages.append("config key tasks.class_split: tasks A and B must not share digits")
    checkpoints = config["training"]["checkpoints"]
    if list(checkpoints) != sorted(checkpoints):
        messages.append("config key training.checkpoints: must be strictly increasing")
    endpoint = config["statistics"]["common_endpoint"]
    if endpoint not in checkpoints:
        messages.append(
            f"config key statistics.common_endpoint: {endpoint} is not one of "
            f"training.checkpoints {list(checkpoints)}"
        )
    extended = config["training"]["extended_checkpoints"]
    if list(extended) != sorted(extended) or (extended and extended[0] <= checkpoints[-1]):
        messages.append(
            "config key training.extended_checkpoints: must be increasing and after the last "
            f"of training.checkpoints ({checkpoints[-1]})"
        )
    training = config["training"]
    if training["kernels"] == "fused" and training["device"] != "cpu":
        messages.append(
            f"config key training.kernels: fused kernels run on the CPU only; with "
            f"training.device {training['device']} set training.kernels: torch"
        )
    for name, study in config["studies"].items():
        seeds = study.get("seeds", [])
        duplicates = sorted({s for s in seeds if seeds.count(s) > 1})
        if duplicates:
            messages.append(f"config key studies.{name}.seeds: duplicate seeds {duplicates}")
    unknown = sorted(set(config["audit"]["seeds"]) - set(config["studies"]["main"]["seeds"]))
    if unknown:
        messages.append(f"config key audit.seeds: {unknown} are not main-study seeds")
    probes = config["studies"]["probes"]
    if probes["endpoint"] not in checkpoints:
        messages.append(
            f"config key studies.probes.endpoint: {probes['endpoint']} is not one of "
            "training.checkpoints"
        )
    if probes["tost_budget"] not in probes["budgets"]:
        messages.append("config key studies.probes.tost_budget: must be one of the budgets")
    if probes["extra_seeds"]["budget"] not in probes["budgets"]:
        messages.append("config key studies.probes.extra_seeds.budget: must be one of the budgets")
    candidates = config["studies"]["activation"]["candidates"]
    if list(candidates) != sorted(candidates, reverse=True):
        messages.append("config key studies.activation.candidates: must be in descending order")
    return messages


def validate_config(config: Mapping[str, Any]) -> None:
    """Raise ConfigError listing every problem, each with its key; return None when valid."""
    messages = _schema_errors(config)
    if not messages:
        messages = _protocol_errors(config)
    if messages:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(messages))
