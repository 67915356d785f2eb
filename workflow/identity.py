"""Run identities as path text: a learning rate written in a path reads back as the same float.

    lr_text(0.05)        -> "0.05"
    lr_text(0.05000001)  -> "0.05000001"   (never rounded: another rate is another run)
    parse_lr("0.045")    -> 0.045

Python's ``repr`` of a float is the shortest text that converts back to the same float, so the
text is lossless and, for the rates people write, what they wrote.
"""

from __future__ import annotations

import math


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
