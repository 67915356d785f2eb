"""Config validation: the JSON schema plus the cross-key rules a schema cannot say.

    from workflow.config import validate_config
    validate_config(yaml.safe_load(open("config.yaml")))

Errors name the offending key as a dotted path (``training.lr``) so a researcher can find it.
Every check here runs in the process that parses the workflow, before any job starts; only
whether ``training.device`` exists where training runs is left to a job (rules/preflight.smk).

``python -m workflow.config folders [--configfile X ...]`` prints the validated config's results,
logs and reference folders, one a line: the Makefile takes them from here, never from the YAML,
so no config value reaches a shell unchecked.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from workflow.identity import DEFAULT_VARIANT

SCHEMA_PATH = Path(__file__).parent / "schemas" / "config.schema.yaml"

# Images of each digit 0-9 in MNIST (the data.digests' arrays): the most a subset, C, the probe
# or a probe budget can take per digit when data.subset keeps everything.
MNIST_PER_DIGIT = {
    "train": (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949),
    "test": (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009),
}


# The default config (config.yaml) writes where its users' literal commands look: results/summary/
# main.csv, results/figures/<name>.pdf, logs/...; every other config writes to results/<name>/ and
# logs/<name>/, so no two configs mix.
DEFAULT_NAME = "full"
# What the default layout holds at the top of results/ and logs/: every {RESULTS}/<folder>/ and
# {LOGS}/<folder>/ of rules/*.smk, runs/ for the run paths ({RUN_ID}, {GROUP_ID}) and the match
# views ({view}: main, rotated, noise_floor, pilot_<policy>, variant_<variant>). Another config
# of one of these names would write into the default's folders (tests/test_config.py derives the
# list from the rules).
DEFAULT_LAYOUT_FOLDERS = frozenset(
    {
        "activation",
        "audit",
        "figures",
        "long",
        "main",
        "noise_floor",
        "pilot",
        "preflight",
        "probes",
        "rotated",
        "runs",
        "sensitivity",
        "summary",
        "tables",
        "trajectories",
        "verify",
    }
)
DEFAULT_LAYOUT_PREFIXES = ("pilot_", "variant_")


class ConfigError(ValueError):
    """A config value that violates the schema or the protocol's cross-key rules."""


def _key(path: Iterable[Any]) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in path]
    return "".join(parts).lstrip(".") or "<top level>"


def _leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every scalar of the config with its path, through nested sections and lists."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _non_finite(config: Mapping[str, Any]) -> dict[str, str]:
    """Key -> message for every NaN or infinity anywhere in the config. JSON Schema's bounds
    cannot catch them (NaN compares false with any minimum), so they are refused here, for
    every key present and future."""
    return {
        _key(path): f"config key {_key(path)}: {value} is not a finite number"
        for path, value in _leaves(config)
        if isinstance(value, float) and not math.isfinite(value)
    }


def _schema_errors(config: Mapping[str, Any], skip: Iterable[str] = ()) -> list[str]:
    schema = yaml.safe_load(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    skip = set(skip)
    messages = []
    for error in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.path))):
        # oneOf failures hide the useful message in their sub-errors.
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        if _key(best.absolute_path) not in skip:
            messages.append(f"config key {_key(best.absolute_path)}: {best.message}")
    return messages


def _data_size_errors(config: Mapping[str, Any]) -> list[str]:
    """Images per digit asked of the data that it does not have, each of which would fail jobs
    late (tasks.first_per_digit and probes.draw_examples take images digit by digit)."""
    messages = []
    available = {}  # split -> (images of every digit, what says so)
    names = {"train": "training", "test": "test"}
    for split, name in names.items():
        key = f"data.subset.{split}_per_digit"
        kept = config["data"]["subset"][f"{split}_per_digit"]
        least = min(MNIST_PER_DIGIT[split])
        digit = MNIST_PER_DIGIT[split].index(least)
        mnist = f"MNIST has only {least} {name} images of digit {digit}"
        if kept is None:
            available[split] = (least, f"{mnist} ({key}: null)")
        elif kept > least:
            messages.append(f"config key {key}: {kept} per digit, but {mnist}")
            available[split] = (least, mnist)
        else:
            available[split] = (kept, f"{key} keeps {kept}")
    probes = config["studies"]["probes"]
    asked = [
        ("tasks.common_per_digit", config["tasks"]["common_per_digit"], "train"),
        ("tasks.probe_per_digit", config["tasks"]["probe_per_digit"], "test"),
        ("studies.probes.budgets", max(probes["budgets"]), "train"),
        ("studies.probes.extra_seeds.budget", probes["extra_seeds"]["budget"], "train"),
        ("studies.probes.tost_budget", probes["tost_budget"], "train"),
    ]
    for key, n, split in asked:
        most, source = available[split]
        if n > most:
            messages.append(
                f"config key {key}: {n} {names[split]} images per digit asked for, but {source}"
            )
    return messages


def _training_errors(config: Mapping[str, Any]) -> list[str]:
    """Tasks, checkpoint schedules and numerics that contradict each other."""
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
    return messages


def _study_errors(config: Mapping[str, Any]) -> list[str]:
    """Seeds, endpoints, budgets and candidates of the studies that cannot work."""
    messages = []
    for name, study in config["studies"].items():
        seeds = study.get("seeds", [])
        duplicates = sorted({s for s in seeds if seeds.count(s) > 1})
        if duplicates:
            messages.append(f"config key studies.{name}.seeds: duplicate seeds {duplicates}")
    unknown = sorted(set(config["audit"]["seeds"]) - set(config["studies"]["main"]["seeds"]))
    if unknown:
        messages.append(f"config key audit.seeds: {unknown} are not main-study seeds")
    probes = config["studies"]["probes"]
    if probes["endpoint"] not in config["training"]["checkpoints"]:
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


def _name_errors(config: Mapping[str, Any]) -> list[str]:
    name = config["name"]
    if name in DEFAULT_LAYOUT_FOLDERS or name.startswith(DEFAULT_LAYOUT_PREFIXES):
        return [
            f"config key name: {name!r} is a folder the default config ({DEFAULT_NAME}) writes in "
            f"results/ and logs/, so this config's results/{name}/ would mix with it; choose "
            "another name"
        ]
    return []


def _protocol_errors(config: Mapping[str, Any]) -> list[str]:
    return (
        _name_errors(config)
        + _training_errors(config)
        + _study_errors(config)
        + _data_size_errors(config)
    )


def results_root(config: Mapping[str, Any]) -> str:
    """The folder a config writes its results to, relative to the work tree."""
    return _root("results", config["name"])


def logs_root(config: Mapping[str, Any]) -> str:
    """The folder a config writes its logs and benchmarks to, relative to the work tree."""
    return _root("logs", config["name"])


def _root(top: str, name: str) -> str:
    return top if name == DEFAULT_NAME else f"{top}/{name}"


def merge_config(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys, as Snakemake merges config files: nested mappings key
    by key, lists and scalars whole."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_config(out[key], value)
        else:
            out[key] = value
    return out


def load_config(paths: Iterable[str | Path]) -> dict[str, Any]:
    """The config as Snakemake builds it from these files, in order."""
    config: dict[str, Any] = {}
    for path in paths:
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(loaded, Mapping):
            raise ConfigError(
                f"{path}: a config file holds keys and values, not a {type(loaded).__name__}"
            )
        config = merge_config(config, loaded)
    return config


def variant_config(config: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """The config a variant's runs are trained and evaluated with: the config with the
    variant's overrides (``variants:``); the default variant is the config itself."""
    if variant == DEFAULT_VARIANT:
        return dict(config)
    return merge_config(config, config["variants"][variant])


def _variant_errors(config: Mapping[str, Any]) -> list[str]:
    """Variants the sensitivity study names but the config lacks, seeds that are not main
    seeds (a variant is compared with the default run of the same seed), and each variant's
    merged config checked like the config itself."""
    study = config["studies"]["sensitivity"]
    messages = [
        f"config key studies.sensitivity.variants: {name} is not an entry of variants"
        for name in study["variants"]
        if name not in config["variants"]
    ]
    strangers = sorted(set(study["seeds"]) - set(config["studies"]["main"]["seeds"]))
    if strangers:
        messages.append(f"config key studies.sensitivity.seeds: {strangers} are not main seeds")
    for name in config["variants"]:
        merged = variant_config(config, name)
        found = _schema_errors(merged) or _protocol_errors(merged)
        messages += [f"variants.{name}, merged into the config: {m}" for m in found]
    return messages


def validate_config(config: Mapping[str, Any]) -> None:
    """Raise ConfigError listing every problem, each with its key; return None when valid."""
    non_finite = _non_finite(config)
    messages = [*non_finite.values(), *_schema_errors(config, skip=non_finite)]
    if not messages:
        messages = _protocol_errors(config) or _variant_errors(config)
    if messages:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(messages))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workflow.config", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    folders = commands.add_parser(
        "folders", help="print the results, logs and reference folders of the validated config"
    )
    folders.add_argument("--configfile", nargs="+", action="extend", default=[])
    args = parser.parse_args(argv)
    files = ["config.yaml", *args.configfile]
    try:
        config = load_config(files)
        validate_config(config)
    except (OSError, yaml.YAMLError, ConfigError) as error:
        sys.exit(f"{' + '.join(files)}: {error}")
    print(results_root(config), logs_root(config), f"reference/{config['name']}", sep="\n")


if __name__ == "__main__":
    main()
