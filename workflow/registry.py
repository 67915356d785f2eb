"""The studies, in one place: each one's question, the runs it matches, the files it writes
and the function that writes its results text.

The Snakefile's study targets, matched views and figures, the reference export, the progress
counts and the results page read this list; adding a study is one entry here plus its own
rules and code. A study writes ``summary/<name>.csv``, the ``tables`` (file name patterns under
``tables/``) and the ``figures`` (names under ``figures/``, each as PNG and PDF). Its ``views``
give, from the config, the sets of pairs it matches (``workflow.groups.View``, by view name);
its ``trajectory`` (a table of ``tables``) follows the order effect against the noise floor
over the checkpoints of its view of the same name; its ``text`` names the function of
``workflow.headlines`` that writes its section of the results page. The order is the results pages';
``step`` is the one in which ``make full`` builds the study (``python -m workflow.registry``
prints the steps for the Makefile): a step's studies build together, and cheap studies that
read an earlier step's runs come after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflow import groups


@dataclass(frozen=True)
class Study:
    name: str
    question: str
    tables: tuple[str, ...]
    figures: tuple[str, ...]
    step: int
    text: str
    views: Callable[[Mapping[str, Any]], groups.Views] = groups.no_views
    trajectory: str | None = None

    def named_tables(self) -> list[str]:
        """The tables named outright (not by a pattern): targets a rule can be asked for."""
        return [table for table in self.tables if "*" not in table]

    def files(self, folder: Path) -> list[Path]:
        """Every file of this study in a results or reference ``folder``."""
        found = [folder / "summary" / f"{self.name}.csv"]
        for pattern in self.tables:
            found += sorted((folder / "tables").glob(pattern))
        for figure in self.figures:
            found += sorted((folder / "figures").glob(f"{figure}.*"))
        return [path for path in found if path.is_file()]


STUDIES = (
    Study(
        "main",
        "Do S_ABC and S_BAC differ in representation (H_repr, CKA) once their behaviour is "
        "matched, and at the common endpoint?",
        (
            "main_per_seed.csv",
            "order_vs_noise.csv",
            "order_vs_noise_per_seed.csv",
            "order_vs_noise_endpoints.csv",
            "order_vs_noise_endpoints_per_seed.csv",
        ),
        ("main_h_repr", "main_behaviour", "main_layer_cka", "order_vs_noise"),
        1,
        "pair_text",
        groups.main_views,
        "order_vs_noise",
    ),
    Study(
        "noise_floor",
        "Is the order effect larger than what SGD noise alone gives (same order, another data"
        " stream)? Order effect: mean H_repr of a seed's four order pairs; noise floor: mean "
        "of its two same-order pairs; excess: their difference, paired by seed.",
        (
            "noise_floor_per_seed.csv",
            "noise_floor_decision.csv",
            "noise_floor_trajectory.csv",
            "noise_floor_trajectory_per_seed.csv",
        ),
        ("noise_floor", "noise_floor_trajectory"),
        1,
        "noise_floor_text",
        groups.noise_floor_views,
        "noise_floor_trajectory",
    ),
    Study(
        "pilot",
        "Does resetting the optimizer state before C, rather than preserving it, change the "
        "residue?",
        ("pilot_*_per_seed.csv",),
        (),
        3,
        "pilot_text",
        groups.pilot_views,
    ),
    Study(
        "rotated",
        "Does the residue need disjoint label sets (0° vs 90°, all labels in A and B)?",
        ("rotated_per_seed.csv",),
        ("rotated_vs_split",),
        4,
        "pair_text",
        groups.rotated_views,
    ),
    Study(
        "probes",
        "Can a linear readout of frozen fc1 tell the orders apart (probe accuracy of S_ABC "
        "minus S_BAC)?",
        ("probes_per_seed.csv",),
        ("probe_differences",),
        1,
        "probes_text",
    ),
    Study(
        "long",
        "Does the residue persist over a longer horizon of common training?",
        (),
        ("long_horizon",),
        5,
        "long_text",
    ),
    Study(
        "activation",
        "Does LeakyReLU leave less residue than ReLU at the same learning rate (Δ < 0: less "
        "under LeakyReLU)?",
        ("activation_audit.csv",),
        ("activation",),
        6,
        "activation_text",
    ),
    Study(
        "lr_search",
        "Which learning rate keeps LeakyReLU finite?",
        (),
        ("lr_search",),
        6,
        "lr_search_text",
    ),
    Study(
        "sensitivity",
        "Do the choices the protocol leaves open move the residue? Each variant's runs and "
        "each matching rule against the default, paired by seed.",
        ("sensitivity_per_seed.csv", "variant_*_per_seed.csv"),
        ("sensitivity",),
        2,
        "sensitivity_text",
        groups.sensitivity_views,
    ),
)
BY_NAME = {study.name: study for study in STUDIES}
NAMES = tuple(BY_NAME)


def views(config: Mapping[str, Any]) -> groups.Views:
    """Every study's matched views, by view name (names are unique across studies)."""
    found: groups.Views = {}
    for study in STUDIES:
        own = study.views(config)
        if taken := sorted(found.keys() & own.keys()):
            raise ValueError(f"study {study.name}: view names {taken} are another study's")
        found |= own
    return found


def trajectories() -> dict[str, str]:
    """Trajectory table -> the view (its study's own) whose seeds and matches it reads."""
    return {study.trajectory: study.name for study in STUDIES if study.trajectory}


def full_steps() -> list[list[str]]:
    """The studies of each step of ``make full``, in step order."""
    steps: dict[int, list[str]] = {}
    for study in sorted(STUDIES, key=lambda study: study.step):
        steps.setdefault(study.step, []).append(study.name)
    return list(steps.values())


if __name__ == "__main__":
    # The Makefile's FULL_STEPS: a step's studies joined by "+".
    print(" ".join("+".join(step) for step in full_steps()))
