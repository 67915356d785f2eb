# Helpers shared by the rules: config validation, config slices, code versions.
from pathlib import Path

from workflow.config import validate_config
from workflow.provenance import code_version

# Stops before any job, naming the offending key.
validate_config(config)

STUDIES = ["main"]
CHECKPOINTS = config["training"]["checkpoints"]


wildcard_constraints:
    study="|".join(STUDIES),
    seed=r"\d+",
    order="ABC|BAC",
    update=r"\d+",


def adapter(name):
    """Path of an adapter script, relative to the rules/ folder as `script:` wants it."""
    return f"../workflow/scripts/{name}.py"


def code(name):
    """Hash of the adapter and every workflow module it imports: edits there rerun the rule."""
    return code_version(Path(workflow.basedir) / "workflow" / "scripts" / f"{name}.py")


def study(wildcards):
    return config["studies"][wildcards.study]


def run_paths(wildcards, kind, order=None):
    """Every checkpoint ("checkpoints") or dump ("dumps") of one history."""
    order = order or wildcards.order
    suffix = {"checkpoints": "npz", "dumps": "parquet"}[kind]
    return expand(
        "results/{study}/seed~{seed}/order~{order}/{kind}/update~{update}.{suffix}",
        study=wildcards.study,
        seed=wildcards.seed,
        order=order,
        kind=kind,
        update=CHECKPOINTS,
        suffix=suffix,
    )


def pair_paths(kind, order):
    return lambda wildcards: run_paths(wildcards, kind, order)


def seed_paths(pattern):
    """``pattern`` for every seed of the study."""
    return lambda wildcards: expand(
        pattern, study=wildcards.study, seed=study(wildcards)["seeds"]
    )


def sorted_keys(value):
    """Params are compared as text: sort keys so YAML key order never triggers a rerun."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def slice_config(*keys):
    """The part of the config a rule depends on, as a nested dict of the named dotted keys."""
    out = {}
    for key in keys:
        head, _, tail = key.partition(".")
        value = config[head][tail] if tail else config[head]
        out.setdefault(head, {}).update({tail: value} if tail else value)
    return sorted_keys(out)
