"""Each study's results in markdown, written from its summary and nothing else: the tables
here, the words in ``workflow/templates/phrases.yaml`` (``workflow.phrases``). The page that
holds them is ``workflow.results_page``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import registry
from workflow.artifacts import read_csv
from workflow.choices import choices_text
from workflow.markdown import (
    interval,
    number,
    p_value,
    pick,
    table,
    tests_text,
    unrejected,
    verdict,
)
from workflow.phrases import say
from workflow.progress import study_progress
from workflow.summary import endpoint_label

# The question each study answers (workflow.registry).
QUESTIONS: dict[str, str] = {study.name: study.question for study in registry.STUDIES}


def pair_study(summary: pd.DataFrame) -> str:
    """main and rotated: H_repr and behaviour at the matched and the common endpoint."""
    metrics = [
        ("h_repr", "H_repr", 4),
        ("cka_conv2", "CKA conv2", 4),
        ("cka_fc1", "CKA fc1", 4),
        ("disagreement_pct", "disagreement %", 2),
        ("acc_gap_pp", "accuracy gap pp", 2),
    ]
    rows = []
    for endpoint in summary["endpoint"].unique():
        first = pick(summary, endpoint=endpoint, metric="h_repr")
        n = f"{int(first['n'])} of {int(first['n_seeds'])}"
        cells = [interval(pick(summary, endpoint=endpoint, metric=m), d) for m, _, d in metrics]
        rows.append([endpoint_label(endpoint), n, *cells])
    text = table(["endpoint", "n seeds", *[label for _, label, _ in metrics]], rows)
    if "matched" in set(summary["endpoint"]):
        update = pick(summary, endpoint="matched", metric="update")
        text += "\n\n" + say(
            "pair_study.matched_update",
            update=number(update["mean"], 0),
            low=number(update["ci_low"], 0),
            high=number(update["ci_high"], 0),
            unmatched=int(update["n_unmatched"]),
            diverged=int(update["n_diverged"]),
        )
    return text


def noise_floor_study(summary: pd.DataFrame, alpha: float) -> str:
    """Order effect, floor and excess per endpoint; the verdict on the excess from its CI,
    with the paired tests that do not reject at ``alpha`` named beside it."""
    rows, sentences = [], []
    for endpoint in summary["endpoint"].unique():
        order = pick(summary, endpoint=endpoint, metric="h_order")
        floor = pick(summary, endpoint=endpoint, metric="h_floor")
        excess = pick(summary, endpoint=endpoint, metric="excess")
        rows.append(
            [
                endpoint_label(endpoint),
                f"{int(excess['n'])} of {int(excess['n_seeds'])}",
                interval(order),
                interval(floor),
                interval(excess),
                tests_text(excess),
            ]
        )
        ratio = order["mean"] / floor["mean"] if floor["mean"] else math.nan
        caveat = unrejected(excess, alpha)
        sentences.append(
            say(
                "noise_floor.weak" if caveat else "noise_floor.sentence",
                endpoint=endpoint_label(endpoint),
                ratio=number(ratio, 1),
                verdict=say(
                    verdict(excess, "noise_floor.above", "noise_floor.inside", "noise_floor.below")
                ),
                caveat=caveat,
            )
        )
    header = ["endpoint", "n seeds", "order effect", "noise floor", "excess", "tests (excess)"]
    return table(header, rows) + "\n\n" + " ".join(sentences)


def pilot_study(summary: pd.DataFrame) -> str:
    rows = []
    for row in summary.itertuples(index=False):
        if row.policy == "preserve_minus_reset":
            continue
        n = f"{int(row.n)} of {int(row.n_seeds)}"
        rows.append(
            [row.policy, endpoint_label(row.endpoint), n, interval(pd.Series(row._asdict()))]
        )
    text = table(["optimizer at C", "endpoint", "n seeds", "H_repr"], rows)
    for row in summary[summary["policy"] == "preserve_minus_reset"].itertuples(index=False):
        series = pd.Series(row._asdict())
        text += "\n\n" + say(
            "pilot.difference",
            endpoint=endpoint_label(row.endpoint),
            value=interval(series),
            n=int(row.n),
            tests=tests_text(series),
        )
    return text


def sensitivity_study(summary: pd.DataFrame, matching: Mapping[str, Any], alpha: float) -> str:
    """Which readings move H_repr, a sentence each (``workflow.choices``), then each reading's
    paired change of H_repr from the default, one row per arm and endpoint."""
    rows = []
    shifts = summary[(summary["contrast"] == "minus_default") & (summary["metric"] == "h_repr")]
    for row in shifts.itertuples(index=False):
        series = pd.Series(row._asdict())
        rows.append(
            [
                row.analysis,
                row.arm,
                endpoint_label(row.endpoint),
                f"{int(row.n)} of {int(row.n_seeds)}",
                interval(series),
                p_value(row.p_t),
            ]
        )
    header = ["analysis", "reading", "endpoint", "n seeds", "H_repr minus default", "p (paired t)"]
    return "\n\n".join(
        [choices_text(summary, matching, alpha), table(header, rows), behaviour_text(summary)]
    )


# The readings of behaviour the sensitivity summary holds, in its order: (metric, column).
BEHAVIOUR = [
    ("acc_ABC_pct", "accuracy S_ABC %"),
    ("acc_BAC_pct", "accuracy S_BAC %"),
    ("disagreement_pct", "disagreement % (test set)"),
    ("disagreement_probe_pct", "disagreement % (probe set)"),
    ("either_wrong_pct", "either wrong %"),
    ("both_wrong_pct", "both wrong %"),
    ("both_wrong_differently_pct", "both wrong, differently %"),
]


def behaviour_text(summary: pd.DataFrame) -> str:
    """The default runs' behaviour read several ways, and how much of the pair's errors overlap."""
    default = summary[
        (summary["analysis"] == "variant")
        & (summary["arm"] == "default")
        & (summary["contrast"].fillna("") == "")
    ]
    rows, sentences = [], []
    for endpoint in default["endpoint"].unique():
        at = {m: pick(default, endpoint=endpoint, metric=m) for m, _ in BEHAVIOUR}
        first = at["either_wrong_pct"]
        n = f"{int(first['n'])} of {int(first['n_seeds'])}"
        rows.append([endpoint_label(endpoint), n, *(interval(at[m], 2) for m, _ in BEHAVIOUR)])
        either, both = at["either_wrong_pct"]["mean"], at["both_wrong_pct"]["mean"]
        differently = at["both_wrong_differently_pct"]["mean"]
        if either > 0:
            sentences.append(
                say(
                    "behaviour.overlap",
                    endpoint=endpoint_label(endpoint),
                    either=number(either, 2),
                    both=number(both, 2),
                    differently=number(differently, 2),
                    share=both / either,
                )
            )
    header = ["endpoint", "n seeds", *(label for _, label in BEHAVIOUR)]
    return "\n\n".join([say("behaviour.lead"), table(header, rows), " ".join(sentences)])


def long_study(summary: pd.DataFrame) -> str:
    rows = []
    for update in summary.loc[summary["metric"] == "h_repr", "update"]:
        row = pick(summary, update=update, metric="h_repr")
        rows.append([f"{int(update):,}", f"{int(row['n'])}", interval(row)])
    text = table(["C updates", "n seeds", "H_repr"], rows)
    change = summary[summary["metric"] == "h_repr_change"].iloc[0]
    end, start = str(change["update"]).split("-")
    return (
        text
        + "\n\n"
        + say(
            "long.change",
            start=start,
            end=end,
            value=interval(change),
            n=int(change["n"]),
            tests=tests_text(change),
        )
    )


def probes_study(summary: pd.DataFrame, tost_alpha: float) -> str:
    """Probe differences per budget, and the TOST with its (1 - 2 ``tost_alpha``) CI."""
    rows = []
    for row in summary.itertuples(index=False):
        series = pd.Series(row._asdict())
        seeds = str(getattr(row, "probe_seeds", ""))
        rows.append(
            [str(row.budget), seeds, str(int(row.n)), interval(series, 2), tests_text(series)]
        )
    header = ["examples per class", "probe seeds", "n seeds", "S_ABC − S_BAC (pp)", "tests"]
    text = table(header, rows)
    tost = summary.dropna(subset=["tost_p"])
    level = f"{1 - 2 * tost_alpha:.0%}"
    for row in tost.itertuples(index=False):
        outcome = "probes.equivalent" if row.tost_equivalent else "probes.not_equivalent"
        text += "\n\n" + say(
            "probes.tost",
            budget=row.budget,
            margin=number(row.tost_margin_pp, 2),
            p=p_value(row.tost_p),
            level=level,
            low=number(row.tost_ci_low, 2),
            high=number(row.tost_ci_high, 2),
            outcome=say(outcome),
        )
    return text


def lr_search_study(summary: pd.DataFrame) -> str:
    """One row per candidate rate (the summary repeats the rate on each of its traces).

    A rate above the selected one is never traced, so it has no count to show.
    """
    rows = [
        [
            f"{r.lr:g}",
            "yes" if r.tried else "no",
            f"{int(r.n_finite)}/{int(r.n_traces)}" if r.tried else "—",
            "**selected**" if r.selected else "",
        ]
        for r in summary.drop_duplicates("lr").itertuples(index=False)
    ]
    return table(["learning rate", "tried", "finite traces", "selected"], rows)


def activation_study(summary: pd.DataFrame) -> str:
    rows = []
    for update in summary.loc[summary["metric"] == "delta_h_repr", "update"]:
        delta = pick(summary, update=update, metric="delta_h_repr")
        relu = pick(summary, update=update, metric="h_repr_relu")
        leaky = pick(summary, update=update, metric="h_repr_leaky_relu")
        rows.append(
            [
                f"{int(update):,}",
                str(int(delta["n"])),
                interval(relu),
                interval(leaky),
                interval(delta),
                tests_text(delta),
            ]
        )
    header = [
        "C updates",
        "n seeds",
        "H_repr ReLU",
        "H_repr LeakyReLU",
        "Δ (Leaky − ReLU)",
        "tests",
    ]
    return table(header, rows)


def _alpha(config: Mapping[str, Any]) -> float:
    """The paired tests' level that matches the CIs' coverage."""
    # Rounded: 1 - 0.95 is 0.050000000000000044, and p = 0.05 must not reject.
    return round(1 - config["statistics"]["ci_level"], 10)


# The renderers the registry names (a study's ``text``): each study's markdown from its summary
# and the config settings it names.
def pair_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return pair_study(summary)


def noise_floor_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return noise_floor_study(summary, _alpha(config))


def pilot_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return pilot_study(summary)


def probes_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return probes_study(summary, config["studies"]["probes"]["tost_alpha"])


def long_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return long_study(summary)


def lr_search_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return lr_search_study(summary)


def activation_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return activation_study(summary)


def sensitivity_text(summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    return sensitivity_study(summary, config["matching"], _alpha(config))


def renderer(study: str) -> Callable[[pd.DataFrame, Mapping[str, Any]], str]:
    """The function the registry names for ``study``'s text."""
    found = globals().get(registry.BY_NAME[study].text)
    if not callable(found):
        raise LookupError(f"workflow.headlines has no renderer {registry.BY_NAME[study].text!r}")
    return found


def study_text(study: str, summary: pd.DataFrame, config: Mapping[str, Any]) -> str:
    """The markdown of one study's results, with any setting it names taken from ``config``."""
    return renderer(study)(summary, config)


def training_line(reference: Path, carried: list[dict]) -> str:
    """How much training the reference holds and how fast it ran, from its runs table;
    ``carried``: the runs kept from earlier exports (provenance.json's ``carried_over``)."""
    runs = read_csv(reference / "runs.csv")
    if runs.empty:
        return say("page.no_training")
    status = runs["status"].value_counts().to_dict()
    origins = sorted({f"{run['date']} at `{run['export_commit'][:12]}`" for run in carried})
    kept = say("page.kept", count=len(carried), origins=", ".join(origins)) if carried else ""
    resumed = int(runs["resumed_at"].notna().sum()) if "resumed_at" in runs else 0
    return say(
        "page.training",
        jobs=len(runs),
        statuses=", ".join(f"{n} {s}" for s, n in sorted(status.items())),
        updates=int(runs["updates"].sum()),
        hours=runs["train_s"].sum() / 3600,
        resumed=say("page.resumed", resumed=resumed) if resumed else "",
        median=runs["updates_per_s"].median(),
        low=runs["updates_per_s"].min(),
        high=runs["updates_per_s"].max(),
        kept=kept,
    )


def cpu_path(env: Mapping[str, Any]) -> str:
    """The code path PyTorch took on the export's machine, and the caps that chose it."""
    caps = env.get("isa_overrides") or {}
    if not caps:
        return env["torch_cpu_capability"]
    return f"{env['torch_cpu_capability']} under " + " ".join(
        f"{name}={value}" for name, value in sorted(caps.items())
    )


def pending_line(reference: Path, prov: Mapping[str, Any]) -> str:
    """The studies without statistics yet, each with the seeds whose pairs are in."""
    pending = prov["studies_pending"]
    if not pending:
        return say("page.complete")
    progress = study_progress(reference, prov["config"])

    def state(study: str) -> str:
        done = progress[study]
        if done is None:
            return f"`{study}`"
        if done.done == done.seeds:
            return say("page.pending_all_in", study=study, seeds=done.seeds)
        return say("page.pending_some", study=study, done=done.done, seeds=done.seeds)

    return say("page.pending", studies=", ".join(state(study) for study in pending))
