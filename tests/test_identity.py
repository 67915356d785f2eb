"""Run identities in paths: the learning rate's text is lossless and the defaults' unchanged."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml

from workflow.identity import lr_text, parse_lr

ROOT = Path(__file__).resolve().parent.parent
# The Snakefile's constraint on the {lr} wildcard: every text lr_text writes must match it.
LR_WILDCARD = re.compile(r"[0-9.e+-]+")


NAMED = [0.05, 0.045, 0.04, 0.035, 0.03, 1e-05, 0.1 + 0.2, 0.05000001, 1e25, 5e-324, 1.0]


def _random_rates(n: int = 2000) -> list[float]:
    """Rates drawn log-uniformly, and floats with random mantissa bits."""
    rng = random.Random(20240611)
    drawn = [10 ** rng.uniform(-8, 2) for _ in range(n)]
    bits = [rng.getrandbits(64) for _ in range(n)]
    raw = [float.fromhex(f"0x1.{b & (2**52 - 1):013x}p{(b >> 52) % 60 - 50}") for b in bits]
    return drawn + raw


def _round_trips(value: float) -> None:
    text = lr_text(value)
    assert float(text) == value, (value, text)
    assert parse_lr(text) == value
    assert LR_WILDCARD.fullmatch(text), text


@pytest.mark.parametrize("lr", NAMED, ids=repr)
def test_lr_text_round_trips(lr) -> None:
    _round_trips(lr)


def test_lr_text_round_trips_random_floats() -> None:
    for lr in _random_rates():
        _round_trips(lr)


def test_nearby_rates_get_their_own_paths() -> None:
    """The old text (f"{lr:g}") wrote 0.05000001 as 0.05: another run under 0.05's path."""
    assert lr_text(0.05000001) == "0.05000001"
    assert lr_text(0.05000001) != lr_text(0.05)
    assert lr_text(0.1 + 0.2) == "0.30000000000000004"


def test_default_paths_are_unchanged() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    candidates = config["studies"]["activation"]["candidates"]
    assert [lr_text(lr) for lr in candidates] == ["0.05", "0.045", "0.04", "0.035", "0.03"]
    assert lr_text(config["training"]["lr"]) == "0.05"
    # The texts the old f"{lr:g}" wrote, so existing results/ trees keep their paths.
    assert [lr_text(lr) for lr in candidates] == [f"{lr:g}" for lr in candidates]
    assert lr_text(1e25) == f"{1e25:g}" == "1e+25"  # tests/test_workflow.py's unstable rate
    assert lr_text(1e-05) == "1e-05"


@pytest.mark.parametrize("text", ["0.050", "5e-2", "+0.05", ".05", "0.05 ", "nan", "inf", "x"])
def test_parse_lr_accepts_only_the_written_text(text) -> None:
    with pytest.raises(ValueError, match=r"lr~"):
        parse_lr(text)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_lr_text_refuses_non_finite(value) -> None:
    with pytest.raises(ValueError, match="not a finite number"):
        lr_text(value)


def test_rules_write_no_lossy_float_text() -> None:
    """Every float in a path goes through workflow.identity (no f"{x:g}" in the rules)."""
    for path in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        assert ":g}" not in path.read_text(), path
    common = (ROOT / "rules" / "common.smk").read_text()
    assert re.search(r"^from workflow\.identity import .*\blr_text\b", common, re.M)
