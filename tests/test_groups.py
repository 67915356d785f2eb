"""Tests for workflow.groups: the main protocol's run group, derived once."""

from __future__ import annotations

from pathlib import Path

from workflow.config import DEFAULT_VARIANT, load_config, variant_config
from workflow.groups import main_group

REPO = Path(__file__).resolve().parent.parent
CONFIG = load_config([REPO / "config.yaml"])


def test_the_main_group_is_the_configs_protocol_on_stream_0() -> None:
    """The reference's main runs: runs/protocol~class_split/variant~default/act~relu/lr~0.05/
    optim~reset/stream~0."""
    assert main_group(CONFIG) == {
        "protocol": "class_split",
        "variant": DEFAULT_VARIANT,
        "act": "relu",
        "lr": 0.05,
        "optim": "reset",
        "stream": 0,
    }


def test_a_variants_group_takes_the_variants_settings() -> None:
    for variant in CONFIG["variants"]:
        source = variant_config(CONFIG, variant)
        group = main_group(CONFIG, variant)
        assert group["variant"] == variant
        assert group["act"] == source["model"]["activation"]
        assert group["lr"] == float(source["training"]["lr"])
        assert group["optim"] == source["training"]["optimizer_at_common"]
    assert CONFIG["variants"], "the default config names variants to check"
