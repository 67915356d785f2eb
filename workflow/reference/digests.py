"""What identifies an export: the config's digest, the slice of it a checkpoint's bits depend
on (the one verification compares), and the commit of the code."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workflow.provenance import canonical_json


def config_digest(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


# What a checkpoint's bits depend on besides its run's identity (seed, order, lr ...): the
# verification compares this slice, so a change elsewhere (statistics, studies) leaves the
# reference's digests checkable.
VERIFIED_KEYS = {
    "data": ("digests", "normalize", "subset"),
    "tasks": ("class_split", "common_per_digit"),
    "model": None,
    "training": None,
}

# Changes no bit: how often a job saves its resumable state.
NOT_VERIFIED = {"training": ("state_every",)}


def training_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for head, keys in VERIFIED_KEYS.items():
        section = config.get(head, {})
        chosen = keys if keys is not None else tuple(section)
        dropped = NOT_VERIFIED.get(head, ())
        out[head] = {key: section[key] for key in chosen if key in section and key not in dropped}
    return out


def training_digest(config: Mapping[str, Any]) -> str:
    return config_digest(training_config(config))


def git_commit(repo: Path) -> str:
    """HEAD's commit, with "+dirty" when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")
