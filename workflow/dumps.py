"""Reading a representation dump without torch (docs/outputs.md, "Parquet dumps").

    dump = read_dump("results/full/runs/.../order~ABC/dumps/update~10000.parquet")
    dump.frame                     # one row per test image: image, angle, label, probe, ...
    dump.matrix("fc1")             # float64 (n probe images, 128), in image order
    dump.matrix("prob")            # float64 (n images, 10)
    dump.metadata["summary"]       # accuracy, loss, activation health of the checkpoint
    dump.metadata["checkpoint"]    # how the checkpoint was trained: config, code, kernels...

Every read checks the SHA-256 the dump stores, and with ``expect`` the identity it stores
(``workflow.artifacts.read_parquet``). pandas alone would give the vector columns as object
arrays and drop the metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workflow.artifacts import read_parquet


def column_matrix(table: pa.Table, name: str, rows: np.ndarray | None = None) -> np.ndarray:
    """A fixed-size-list column as an (n, width) float64 matrix, optionally only ``rows``."""
    column = table.column(name).combine_chunks()
    if rows is not None:
        column = column.filter(pa.array(rows))
    width = column.type.list_size
    return column.flatten().to_numpy().astype(np.float64).reshape(-1, width)


@dataclass(frozen=True)
class Dump:
    table: pa.Table
    metadata: dict[str, Any]

    @property
    def frame(self) -> pd.DataFrame:
        """The per-image scalar columns (the vector columns are ``matrix``'s)."""
        scalar = [f.name for f in self.table.schema if not pa.types.is_fixed_size_list(f.type)]
        return self.table.select(scalar).to_pandas()

    def matrix(self, name: str) -> np.ndarray:
        """A vector column as a float64 matrix; a layer kept for probe images only (null
        elsewhere) gives those rows, in image order."""
        column = self.table.column(name)
        rows = None if column.null_count == 0 else column.is_valid().to_numpy(zero_copy_only=False)
        return column_matrix(self.table, name, rows)


def read_dump(path: str | Path, expect: dict[str, Any] | None = None, rule: str = "") -> Dump:
    table, metadata = read_parquet(path, expect=expect, rule=rule)
    return Dump(table, metadata)
