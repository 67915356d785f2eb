"""A run's identity, and its path text: a learning rate written in a path reads back as the
same float.

    run = RunId.from_wildcards(snakemake.wildcards)
    lr_text(0.05)        -> "0.05"
    lr_text(0.05000001)  -> "0.05000001"   (never rounded: another rate is another run)
    parse_lr("0.045")    -> 0.045

Python's ``repr`` of a float is the shortest text that converts back to the same float, so the
text is lossless and, for the rates people write, what they wrote.

Torch-free: the rules build run identities while the workflow is parsed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

# Runs of the protocol as written; other variants are named in the config's `variants:`.
DEFAULT_VARIANT = "default"


def lr_text(lr: float) -> str:
    """The learning rate as it appears in run paths (``lr~0.05``): shortest lossless text."""
    value = float(lr)
    if not math.isfinite(value):
        raise ValueError(f"learning rate {value} is not a finite number")
    return repr(value)


def parse_lr(text: str) -> float:
    """The learning rate of a path's ``lr~`` text; only the text ``lr_text`` writes is accepted,
    so one rate never has two paths (``0.050`` or ``5e-2`` would be a second run of 0.05)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"lr~{text}: not a learning rate") from None
    if not math.isfinite(value) or lr_text(value) != text:
        canonical = lr_text(value) if math.isfinite(value) else "a finite number"
        raise ValueError(f"lr~{text}: a run path writes this learning rate as lr~{canonical}")
    return value


@dataclass(frozen=True)
class RunId:
    """A run is (protocol, activation, lr, optimizer policy, data stream, seed, order, variant).
    Every study is a view on runs, so a run is trained once however many studies use it."""

    protocol: str
    act: str
    lr: float
    optim: str
    stream: int
    seed: int
    order: str
    variant: str = DEFAULT_VARIANT

    @classmethod
    def from_wildcards(cls, wildcards: Mapping[str, Any], **fixed: Any) -> RunId:
        """The run a job's wildcards name, with ``fixed`` fields replacing theirs."""
        run = {**dict(wildcards), **fixed}
        return cls(
            protocol=run["protocol"],
            act=run["act"],
            lr=parse_lr(str(run["lr"])),
            optim=run["optim"],
            stream=int(run["stream"]),
            seed=int(run["seed"]),
            order=run["order"],
            variant=run.get("variant", DEFAULT_VARIANT),
        )

    def as_dict(self) -> dict[str, Any]:
        """The identity an artifact records and a reader expects. The default variant is left
        out, so that records written before variants existed still name their run exactly."""
        fields = asdict(self)
        if self.variant == DEFAULT_VARIANT:
            del fields["variant"]
        return fields
