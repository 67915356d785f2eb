"""The main protocol's run group: a run's identity minus its seed and order.

The rules (``rules/common.smk``, as path text), the progress counts and the verification all
derive it here. A variant's group takes its activation, rate and optimizer policy from the
variant's config (``workflow.config.variant_config``), as its rules do; the main study's is
the default variant's on stream 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workflow.config import DEFAULT_VARIANT, variant_config


def main_group(config: Mapping[str, Any], variant: str = DEFAULT_VARIANT) -> dict[str, Any]:
    """The group's fields (``workflow.identity.RunId``'s, the rate a float)."""
    source = variant_config(config, variant)
    return {
        "protocol": "class_split",
        "variant": variant,
        "act": source["model"]["activation"],
        "lr": float(source["training"]["lr"]),
        "optim": source["training"]["optimizer_at_common"],
        "stream": 0,
    }
