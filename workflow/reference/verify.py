"""Verification against a reference folder: retrain named runs, compare every checkpoint digest.

    make verify SEEDS=101                                  # main runs of seed 101, config.yaml
    make verify SEEDS=101,202 SCOPE=all CONFIG=config/smoke.yaml

`rules/verify.smk` retrains the selected runs in fresh processes (`verify_run`) and hands their
digests to `verify_reference`, which uses this module:

    check_config(provenance, config)                       # raises ConfigMismatch
    expected = select_checkpoints(reference, seeds, scope, main_group(config))
    table = compare(expected, reruns)
    text = report(table, environment_differences(provenance["environment"], here))

Digests are only comparable under the same config, code and environment: the config must match
the reference's exactly, and every difference of environment is listed beside a mismatch so a
reader can tell a changed machine from a changed result. Torch-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.config import DEFAULT_VARIANT
from workflow.groups import main_group
from workflow.identity import lr_text
from workflow.provenance import canonical_json
from workflow.reference.accumulate import mkl_code
from workflow.reference.digests import training_config, training_digest
from workflow.reference.tables import IDENTITY, read_reference

SCOPES = ("main", "all")
ORDERS = ("ABC", "BAC")
MISSING = "missing"
IDENTICAL_ENVIRONMENT = (
    "environment identical: the difference is not explained by threads, kernels, versions or CPU"
)
ENVIRONMENT_LABELS = {
    "torch_threads": "torch threads",
    "kernels": "kernels",
    "device": "device",
    "memory_format": "memory format",
    "cpu_model": "CPU model",
    "torch_cpu_capability": "torch CPU capability",
    "isa_overrides": "instruction-set overrides (environment variables)",
    "mkl_cpu": "MKL's code (machine.mkl_cpu)",
    "platform": "platform",
}


class ConfigMismatch(ValueError):
    """The current config is not the one the reference was computed with."""


class VerificationFailed(RuntimeError):
    """A checkpoint differs from the reference, or a reference run was not retrained."""


def parse_seeds(text: str) -> list[int]:
    """``"101,202"`` -> [101, 202] (the ``seeds`` wildcard)."""
    return [int(part) for part in text.split(",")]


def normalize_checkpoints(table: pd.DataFrame, digest: str = "params_digest") -> pd.DataFrame:
    """Typed identity columns and text digests (a CSV reader turns an empty digest into NaN).
    A run without a variant is of the default one: tables written before variants existed,
    and a default run's rerun (``RunId.as_dict``), even beside a variant's in one table."""
    out = table.copy()
    if "variant" not in out:
        out.insert(1, "variant", DEFAULT_VARIANT)
    out["variant"] = out["variant"].fillna(DEFAULT_VARIANT)
    for column, kind in (("lr", float), ("stream", int), ("seed", int), ("update", int)):
        out[column] = out[column].astype(kind)
    out[digest] = out[digest].fillna("").astype(str)
    return out


def select_checkpoints(
    reference: pd.DataFrame, seeds: Iterable[int], scope: str, group: Mapping[str, Any]
) -> pd.DataFrame:
    """Reference checkpoint rows to verify: ``main`` is ``group``'s base segment, ``all`` every
    run and segment of the seeds."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r} is not one of {SCOPES}")
    table = normalize_checkpoints(reference)
    keep = table["seed"].isin(list(seeds))
    if scope == "main":
        keep &= table["segment"] == "base"
        for key, value in group.items():
            keep &= table[key] == value
    return table[keep].reset_index(drop=True)


def missing_runs(
    selected: pd.DataFrame, seeds: Iterable[int], group: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Main-group runs (every seed, both orders) the selection lacks: both scopes include them."""
    main = selected[selected["segment"] == "base"]
    for key, value in group.items():
        main = main[main[key] == value]
    present = {(int(seed), order) for seed, order in zip(main["seed"], main["order"], strict=True)}
    return [
        {**group, "seed": seed, "order": order}
        for seed in seeds
        for order in ORDERS
        if (seed, order) not in present
    ]


def runs_to_retrain(selected: pd.DataFrame, scope: str) -> list[tuple[dict[str, Any], str]]:
    """(identity, segment to train through) per selected run: ``extended`` when the scope
    verifies an extended segment of it, since one straight run gives both segments' bits."""
    runs = []
    for key, rows in selected.groupby(list(IDENTITY), sort=False):
        identity = dict(zip(IDENTITY, key, strict=True))
        extended = scope == "all" and (rows["segment"] == "extended").any()
        runs.append((identity, "extended" if extended else "base"))
    return runs


def rerun_path(pattern: str, identity: Mapping[str, Any], through: str) -> str:
    """``pattern`` (a run path with a ``{through}`` field) for one run, lr as paths write it."""
    return pattern.format(**{**identity, "lr": lr_text(identity["lr"]), "through": through})


def verification_inputs(
    reference: str, config: Mapping[str, Any], scope: str, seeds: str, pattern: str
) -> dict[str, Any]:
    """The reference files and the reruns (``pattern`` + .csv/.json) a verification reads.

    No reruns when nothing can match (no reference yet, another config, runs missing from the
    reference): the comparison then fails at once, saying why, instead of after hours of
    training.
    """
    files = {
        "provenance": f"{reference}/provenance.json",
        "checkpoints": f"{reference}/checkpoints.csv",
    }
    if not all(Path(path).is_file() for path in files.values()):
        return files
    provenance, table = read_reference(Path(reference))
    if provenance["training_config_digest"] != training_digest(config):
        return files
    group, chosen = main_group(config), parse_seeds(seeds)
    selected = select_checkpoints(table, chosen, scope, group)
    if missing_runs(selected, chosen, group):
        return files
    runs = [rerun_path(pattern, run, through) for run, through in runs_to_retrain(selected, scope)]
    return {
        **files,
        "digests": [f"{run}.csv" for run in runs],
        "environments": [f"{run}.json" for run in runs],
    }


def compare(expected: pd.DataFrame, reruns: pd.DataFrame) -> pd.DataFrame:
    """One row per expected checkpoint: both digests, both statuses, and whether they agree.

    ``reruns`` has the reference's identity, segment and update columns plus ``rerun_digest``
    and ``rerun_status``. A diverged reference checkpoint agrees only with a rerun that did not
    reach it either; a checkpoint the reruns lack never agrees.
    """
    keys = [*IDENTITY, "segment", "update"]
    left = normalize_checkpoints(expected).rename(
        columns={"params_digest": "reference_digest", "status": "reference_status"}
    )
    right = normalize_checkpoints(reruns, digest="rerun_digest")[
        [*keys, "rerun_digest", "rerun_status"]
    ]
    table = left[[*keys, "reference_status", "reference_digest"]].merge(
        right, on=keys, how="left", validate="one_to_one"
    )
    table["rerun_status"] = table["rerun_status"].fillna(MISSING)
    table["rerun_digest"] = table["rerun_digest"].fillna("")
    ok = (table["reference_status"] == "ok") & (table["rerun_status"] == "ok")
    same = ok & (table["reference_digest"] == table["rerun_digest"])
    both_diverged = (table["reference_status"] == "diverged") & (
        table["rerun_status"] == "diverged"
    )
    table["identical"] = same | both_diverged
    return table


def describe_run(row: Mapping[str, Any]) -> str:
    """A run's identity as its path reads (``protocol~class_split/.../order~ABC``); a record
    without a variant is of the default one (workflow.identity.RunId.as_dict)."""
    run = {"variant": DEFAULT_VARIANT, **dict(row), "lr": lr_text(row["lr"])}
    return "/".join(f"{key}~{run[key]}" for key in IDENTITY)


def _changed(label: str, reference: Any, here: Any) -> str:
    return f"{label}: reference {reference}, here {here}"


def _flag_difference(reference: Sequence[str], here: Sequence[str]) -> list[str]:
    missing = sorted(set(reference) - set(here))
    added = sorted(set(here) - set(reference))
    if not missing and not added:
        return []
    parts = [f"missing here {', '.join(missing)}"] if missing else []
    parts += [f"added here {', '.join(added)}"] if added else []
    return [f"CPU ISA flags: {'; '.join(parts)}"]


def reference_environment(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """A reference's environment. Exports before ``machine.mkl_cpu`` do not name MKL's code,
    which their CPU's vendor decided."""
    environment = dict(provenance["environment"])
    environment.setdefault("mkl_cpu", mkl_code(environment.get("cpu_model"), None) or None)
    return environment


def environment_differences(
    reference_env: Mapping[str, Any], here_env: Mapping[str, Any]
) -> list[str]:
    """One line per key that differs between two ``machine_environment`` records."""
    lines = []
    for key in sorted(set(reference_env) | set(here_env)):
        ours, theirs = here_env.get(key), reference_env.get(key)
        if key == "cpu_flags":
            lines += _flag_difference(theirs or [], ours or [])
        elif key == "packages":
            theirs, ours = theirs or {}, ours or {}
            lines += [
                _changed(f"package {name}", theirs.get(name), ours.get(name))
                for name in sorted(set(theirs) | set(ours))
                if theirs.get(name) != ours.get(name)
            ]
        elif theirs != ours:
            lines.append(_changed(ENVIRONMENT_LABELS.get(key, key), theirs, ours))
    return lines


def _environment_text(differences: Sequence[str], matched: bool) -> list[str]:
    if not differences:
        return ["environment identical to the reference's" if matched else IDENTICAL_ENVIRONMENT]
    heading = (
        "environment differs from the reference's, without changing these digests:"
        if matched
        else "environment differences from the reference's:"
    )
    return [heading, *(f"  {line}" for line in differences)]


def first_difference(table: pd.DataFrame) -> pd.Series | None:
    """The first differing checkpoint in reference order (runs, then segments, then updates)."""
    different = table[~table["identical"]]
    return None if different.empty else different.iloc[0]


def report(table: pd.DataFrame, differences: Sequence[str], title: str = "") -> str:
    """The verdict, then the environment differences that might explain it."""
    total, matching = len(table), int(table["identical"].sum())
    lines = [title] if title else []
    first = first_difference(table)
    if first is None:
        lines.append(f"{matching}/{total} checkpoints match the reference")
    else:
        lines += [
            f"{total - matching} of {total} checkpoints differ from the reference; the first:",
            f"  run {describe_run(first)}",
            f"  {first['segment']} segment, update {first['update']}",
            f"  reference {first['reference_digest'] or '-'} ({first['reference_status']})",
            f"  rerun     {first['rerun_digest'] or '-'} ({first['rerun_status']})",
        ]
    lines += _environment_text(differences, matched=first is None)
    return "\n".join(lines) + "\n"


def differing_keys(reference: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Dotted keys of the training slice whose values differ (present in only one counts)."""
    keys = []
    for head in sorted(set(reference) | set(current)):
        ref, cur = reference.get(head, {}), current.get(head, {})
        for key in sorted(set(ref) | set(cur)):
            if (
                key not in ref
                or key not in cur
                or canonical_json(ref[key]) != canonical_json(cur[key])
            ):
                keys.append(f"{head}.{key}")
    return keys


def check_config(provenance: Mapping[str, Any], config: Mapping[str, Any]) -> None:
    """Raise ConfigMismatch unless ``config`` trains as the reference's config did (the same
    training slice, digest for digest; other keys may differ)."""
    expected, found = provenance["training_config_digest"], training_digest(config)
    if expected == found:
        return
    keys = differing_keys(training_config(provenance.get("config", {})), training_config(config))
    named = ", ".join(keys) if keys else "none (the reference's stored config is not its digest)"
    raise ConfigMismatch(
        f"the training config differs from the reference's: reference digest {expected}, "
        f"this config {found}; keys that differ: {named}. Checkpoint digests are only "
        "comparable under the same training config: run with the reference's config file."
    )


def check_runs_present(missing: Sequence[Mapping[str, Any]], reference: str) -> None:
    """Raise VerificationFailed naming the main-group runs ``reference`` lacks."""
    if missing:
        runs = "\n".join(f"  {describe_run(run)}" for run in missing)
        raise VerificationFailed(f"runs missing from {reference}:\n{runs}")


def verdict(table: pd.DataFrame, reference: str) -> None:
    """Raise VerificationFailed unless every checkpoint matches; the report says which not."""
    if table.empty:
        raise VerificationFailed(f"no checkpoints of {reference} were selected to verify")
    differing = int((~table["identical"]).sum())
    if differing:
        raise VerificationFailed(
            f"{differing} of {len(table)} checkpoints differ from {reference} "
            "(the report above names the first)"
        )
