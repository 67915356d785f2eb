"""The match table on disk (``results/<name>/<view>/matches.csv``), checked when it is read.

    write_matches(path, sidecar, matches, provenance)
    matches = read_matches(path, comparisons, config["matching"])

Every statistic at the matched endpoint reads this table, so a reader checks three things
before it uses a row: the bytes are those rule select_matches wrote (the digest in
``matches.provenance.json``), the rule the table claims is the config's ``matching:``, and, where
the reader has the comparisons, each seed's row is what that rule gives on them
(workflow.matching, the one place the rule lives): a matched row's checkpoint passes it and no
earlier one does; an unmatched row has no checkpoint that passes; a diverged row has a diverged
pair.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import ArtifactError
from workflow.matching import select_matches
from workflow.tables import checked_bytes, write_table

REBUILD = "delete it and rerun: rule select_matches rebuilds it"

write_matches = write_table


def read_matches(
    path: str | Path, comparisons: pd.DataFrame | None, matching: Mapping[str, Any]
) -> pd.DataFrame:
    """The match table at ``path``, checked against its digest, against ``matching`` (the
    config's section) and, unless ``comparisons`` is None, against the comparisons it was
    made from; ArtifactError naming the file (and the seed and row) otherwise."""
    data, provenance = checked_bytes(path, REBUILD)
    claimed = (provenance.get("config") or {}).get("matching")
    if claimed != dict(matching):
        raise ArtifactError(
            f"{path}: made under matching {claimed}, but the config's matching is "
            f"{dict(matching)}; {REBUILD}"
        )
    table = pd.read_csv(io.BytesIO(data))
    if comparisons is not None:
        check_rule(path, table, comparisons, matching)
    return table


def _at(status: str, update: Any) -> str:
    return f"{status} at update {int(update)}" if pd.notna(update) else status


def check_rule(
    path: str | Path, table: pd.DataFrame, comparisons: pd.DataFrame, matching: Mapping
) -> None:
    """Each row of ``table`` against what the matching rule gives on ``comparisons``."""
    gap, accuracy = matching["max_accuracy_gap_pp"], matching["min_accuracy_pct"]
    expected = select_matches(comparisons, gap, accuracy).set_index("seed")
    rule = f"matching (accuracy gap <= {gap} pp, both accuracies >= {accuracy}%)"
    seen: set[int] = set()
    for number, row in enumerate(table.to_dict("records"), start=1):
        seed = int(row["seed"])
        where = f"{path}: row {number} (seed {seed})"
        if seed in seen:
            raise ArtifactError(f"{where}: a second row of the seed; {REBUILD}")
        seen.add(seed)
        if seed not in expected.index:
            raise ArtifactError(f"{where}: no comparisons of this seed were read; {REBUILD}")
        want = expected.loc[seed]
        says = _at(row["status"], row["matched_update"])
        gives = _at(want["status"], want["matched_update"])
        if says != gives:
            raise ArtifactError(
                f"{where} says {says}, but under {rule} the seed's comparisons give {gives}: "
                f"the table is not what rule select_matches makes; {REBUILD}"
            )
    missing = sorted(set(expected.index) - seen)
    if missing:
        raise ArtifactError(f"{path}: seeds {missing} have no row; {REBUILD}")
