"""A reference accumulates across machines and sessions.

The full study takes longer than any one session, and a machine can be lost with the runs it
trained. An export therefore keeps what the folder it replaces already holds: the runs (and
their checkpoint digests) that the exporting tree lacks are carried over, each with the export
it came from. A run both hold must have the same digests at every checkpoint, or the export
stops: one identity with two sets of bits would make the reference contradict itself.

Runs trained under another training config (`training_config_digest`) are never carried over:
their digests are not this config's. Nor do runs of two MKL codes share a folder: MKL runs its
Intel kernels on Intel CPUs and its Zen kernels on AMD ones, with other bits under every cap
tried (reference/cross-checks/cpu-intel-amx-2026-12-02), unless `machine.mkl_cpu` chose the
code (workflow/mkl.py); no one machine could check a folder of both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import read_csv, read_json

# Where a carried run was trained, as far as the export that held it knew.
ORIGIN_KEYS = ("export_commit", "date")
ORIGIN_ENVIRONMENT = ("cpu_model", "torch_cpu_capability")


class ReferenceConflict(RuntimeError):
    """The tree and the folder it replaces hold one run with different checkpoint digests, or
    runs of two MKL codes."""


# The code MKL picks by itself on a CPU of each vendor.
VENDOR_MKL = {"AMD": "zen", "Intel": "intel"}


def cpu_vendor(model: object) -> str:
    """The vendor a CPU model name begins with: AMD of "AMD EPYC", Intel of "Intel(R) Xeon(R)
    Processor"; empty where the model is unknown."""
    words = model.split() if isinstance(model, str) else []
    return words[0].removesuffix("(R)") if words and words[0] != "unknown" else ""


def mkl_code(cpu_model: object, mkl_cpu: object) -> str:
    """The vendor code MKL ran: the run's record, or for records that predate it the code MKL
    picks on the CPU's vendor; empty where neither tells."""
    if isinstance(mkl_cpu, str) and mkl_cpu:
        return mkl_cpu
    return VENDOR_MKL.get(cpu_vendor(cpu_model), "")


def check_one_mkl_code(runs: pd.DataFrame) -> str | None:
    """The one MKL code of a folder's CPU runs (None if it has none); refuses a folder of two."""
    cpu = runs[runs["device"] == "cpu"]
    recorded = cpu["mkl_cpu"] if "mkl_cpu" in cpu else pd.Series("", cpu.index)
    codes = pd.Series(map(mkl_code, cpu["cpu_model"], recorded), index=cpu.index, dtype=object)
    counts = codes[codes != ""].value_counts().sort_index()
    if len(counts) > 1:
        found = ", ".join(f"{count} ran MKL's {code} code" for code, count in counts.items())
        raise ReferenceConflict(
            f"the runs ran two codes of MKL ({found}), whose bits differ: no one machine could "
            "check them all (reference/cross-checks/cpu-intel-amx-2026-12-02). Export from a "
            "tree trained with the reference's machine.mkl_cpu, or with --replace to start "
            "the folder afresh."
        )
    return counts.index[0] if len(counts) else None


@dataclass(frozen=True)
class Merged:
    runs: pd.DataFrame
    checkpoints: pd.DataFrame
    carried: list[dict[str, Any]] = field(default_factory=list)
    # Runs of the earlier folder dropped because its training config differs.
    dropped: int = 0


def _keys(table: pd.DataFrame, key: list[str]) -> pd.Series:
    return pd.Series(list(table[key].itertuples(index=False, name=None)), index=table.index)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _origins(prov: Mapping[str, Any], key: list[str]) -> tuple[dict[tuple, dict], dict]:
    """(origin of each run the earlier export had carried itself, the earlier export's own):
    a carried run keeps the export that first held it."""
    own = {name: prov.get(name) for name in ORIGIN_KEYS}
    own |= {name: prov.get("environment", {}).get(name) for name in ORIGIN_ENVIRONMENT}
    carried = {
        tuple(entry[name] for name in key): {
            name: entry[name] for name in (*ORIGIN_KEYS, *ORIGIN_ENVIRONMENT)
        }
        for entry in prov.get("carried_over", [])
    }
    return carried, own


def _check_agreement(tree: pd.DataFrame, earlier: pd.DataFrame, key: list[str]) -> None:
    both = tree.merge(earlier, on=[*key, "update"], suffixes=("", "_earlier"))
    differ = both[both["params_digest"].fillna("") != both["params_digest_earlier"].fillna("")]
    if len(differ):
        first = differ.iloc[0]
        run = ", ".join(f"{name}={first[name]}" for name in key)
        raise ReferenceConflict(
            f"{len(differ)} checkpoint(s) of runs in both the tree and the reference differ, "
            f"first {run} at update {first['update']}: the tree has "
            f"{first['params_digest'] or 'no checkpoint'}, the reference "
            f"{first['params_digest_earlier'] or 'no checkpoint'}. Check the environment with "
            "`make verify`, or export with --replace to start the folder afresh."
        )


def _with_machine(runs: pd.DataFrame, carried: list[dict[str, Any]]) -> pd.DataFrame:
    """Carried runs whose records predate the machine columns take their origin's CPU."""
    runs = runs.copy()
    for name in ORIGIN_ENVIRONMENT:
        known = (
            runs[name].astype(object).fillna("").astype(str)
            if name in runs
            else pd.Series("", runs.index)
        )
        origin = pd.Series([entry[name] or "" for entry in carried], index=runs.index)
        runs[name] = known.where(known != "", origin)
    return runs


def merge_earlier(
    folder: Path,
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame,
    training_digest: str,
    key: list[str],
) -> Merged:
    """The tree's ``runs`` and ``checkpoints`` plus the runs of the reference ``folder`` that
    the tree lacks (``key``: the columns naming a run's segment)."""
    if not (folder / "provenance.json").is_file():
        return Merged(runs, checkpoints)
    prov = read_json(folder / "provenance.json")
    earlier_runs = read_csv(folder / "runs.csv")
    if prov.get("training_config_digest") != training_digest:
        return Merged(runs, checkpoints, dropped=len(earlier_runs))
    earlier_checkpoints = read_csv(folder / "checkpoints.csv")
    _check_agreement(checkpoints, earlier_checkpoints, key)
    in_tree = set(_keys(runs, key))
    runs_new = earlier_runs[~_keys(earlier_runs, key).isin(in_tree)]
    checkpoints_new = earlier_checkpoints[~_keys(earlier_checkpoints, key).isin(in_tree)]
    origins, own = _origins(prov, key)
    carried = [
        {**{name: _plain(v) for name, v in zip(key, run, strict=True)}, **origins.get(run, own)}
        for run in _keys(runs_new, key)
    ]
    runs_new = _with_machine(runs_new, carried)
    return Merged(
        pd.concat([runs, runs_new], ignore_index=True).sort_values(
            key, kind="stable", ignore_index=True
        ),
        pd.concat([checkpoints, checkpoints_new], ignore_index=True).sort_values(
            [*key, "update"], kind="stable", ignore_index=True
        ),
        carried,
    )
