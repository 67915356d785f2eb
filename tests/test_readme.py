"""The README is short, answers first, and every number of its answer is the reference's: each
claim below is formatted from reference/full's CSVs and must appear in the README, and the
answer may hold no number that no claim (or a protocol constant) accounts for, so a hand-written
number can never go stale silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workflow import progress, remaining, replication
from workflow.artifacts import read_csv, read_json
from workflow.config import load_config
from workflow.markdown import interval, number, p_value, pick

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
FULL = REPO / "reference" / "full"
MAX_LINES = 200
# Numbers of the answer that are the protocol's constants, not results: the MNIST test set.
CONSTANTS = {"10,000"}
NUMBER = re.compile(r"(?<![\w.~/-])-?\d[\d,]*(?:\.\d+)?")


def plain(text: str) -> str:
    """Text with typographic minus signs as hyphens and every run of white space one space."""
    return " ".join(text.replace("−", "-").split())


def answer() -> str:
    """The README's answer section, links and image targets left out."""
    text = README.read_text().split("## The answer", 1)[1].split("\n## ", 1)[0]
    return plain(re.sub(r"\]\([^)]*\)", "]", text))


def summary(study: str):
    return read_csv(FULL / "summary" / f"{study}.csv")


def claims() -> list[str]:
    """Each number of the answer as the reference gives it, in the README's words."""
    prov = read_json(FULL / "provenance.json")
    config, planned = prov["config"], load_config([REPO / "config.yaml"])
    main = summary("main")
    floor = read_csv(FULL / "tables" / "order_vs_noise_endpoints.csv")
    common = f"common_{config['statistics']['common_endpoint']}"
    matched_h, common_h = (pick(main, endpoint=e, metric="h_repr") for e in ("matched", common))
    probe = pick(summary("probes"), budget=50, probe_seeds="777", metric="probe_acc_diff_pp")
    excess = {e: pick(floor, endpoint=e, metric="excess") for e in (common, "matched")}
    ratio = {
        e: pick(floor, endpoint=e, metric="h_order")["mean"]
        / pick(floor, endpoint=e, metric="h_floor")["mean"]
        for e in (common, "matched")
    }
    done = progress.study_progress(FULL, planned)["noise_floor"]
    left = remaining.remaining(FULL, planned, "noise_floor")
    table = replication.replication_table(
        FULL, config, replication.read_published(REPO / "reference" / "published.csv")
    )
    classes = list(replication.classify(table).values())
    fixed = table[
        table["metric"].str.startswith("disagreement_pct")
        & (table["endpoint"] != "matched")
        & (table["statistic"] == "mean")
    ]
    budgets = sorted(
        int(e.split("/")[0]) for e in table.loc[table["finding"] == "probes_small", "endpoint"]
    )
    steps = f"{config['statistics']['common_endpoint']:,} updates"
    return [
        f"H_repr is {interval(matched_h)} at the behaviourally matched checkpoint",
        f"and {interval(common_h)} after {steps} of C",
        f"{config['statistics']['ci_level']:.0%} CI over {int(matched_h['n'])} seeds",
        f"{number(probe['mean'], 2)} pp [{number(probe['ci_low'], 2)}, "
        f"{number(probe['ci_high'], 2)}] at {int(probe['budget'])} examples per class",
        f"{number(ratio[common], 1)} times this SGD noise floor at {steps} "
        f"(excess {interval(excess[common])})",
        f"{number(ratio['matched'], 1)} times at the match (excess {interval(excess['matched'])}, "
        f"paired t p = {p_value(excess['matched']['p_t'])})",
        f"on {int(excess['matched']['n'])} seeds the order's trace cannot be told apart",
        f"extended to {done.seeds} seeds",
        f"{done.done} of the {done.seeds} are in, and the other {left.seeds_left} need about "
        f"{left.hours:.1f} h of training on {remaining.CORES} cores",
        f"same-order pairs of the {int(matched_h['n'])} main seeds",
        f"reproduces {classes.count(replication.REPRODUCED)} of its {len(classes)} findings",
        f"contradicts {classes.count(replication.CONTRADICTED)}:",
        f"differs on {classes.count(replication.UNEXPLAINED)} for reasons",
        f"at {budgets[0]}-{budgets[-1]} examples per class",
        f"growth to {max(config['training']['extended_checkpoints']):,} updates",
        f"Of the {len(fixed)} published disagreements at fixed endpoints, "
        f"{int(fixed['probe_set_inside_ci'].eq(True).sum())} lie inside histres's CI on the "
        f"{config['tasks']['probe_per_digit'] * 10:,}-image probe set and "
        f"{'none' if not fixed['inside_ci'].eq(True).any() else 'some'} on the",
    ]


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines, at most {MAX_LINES}"


def test_the_first_screen_holds_the_answer_and_the_two_commands() -> None:
    text = README.read_text()
    order = ["## The answer", "make smoke", "make test", "results/summary/main.csv"]
    places = [text.find(needle) for needle in order]
    assert -1 not in places and places == sorted(places), dict(zip(order, places, strict=True))
    assert text[: places[2]].count("\n") < 60, "make test must be on the first screen"
    assert "results/figures/main_h_repr.pdf" in text
    assert "reference/full/figures/order_vs_noise.png" in text
    assert "(reference/full/RESULTS.md" in text


@pytest.mark.parametrize("claim", claims())
def test_each_number_of_the_answer_is_the_references(claim: str) -> None:
    assert plain(claim) in answer(), f"README.md's answer does not say: {claim}"


def test_the_answer_holds_no_number_the_reference_does_not_give() -> None:
    known = {token for claim in claims() for token in NUMBER.findall(plain(claim))}
    found = set(NUMBER.findall(answer()))
    unexplained = found - known - CONSTANTS
    assert not unexplained, f"numbers in README.md's answer no claim checks: {sorted(unexplained)}"


def test_the_number_check_catches_a_stale_number() -> None:
    stale = "H_repr is 0.1654 [0.1438, 0.1916] at the behaviourally matched checkpoint"
    assert plain(stale) not in answer()
    assert NUMBER.findall("conv2 and fc1: 0.1653 [-0.0013, 1,000]") == [
        "0.1653",
        "-0.0013",
        "1,000",
    ]


# The findings the README names in words, and the class it puts each in.
NAMED_FINDINGS = {
    "main_10k_residue": replication.REPRODUCED,
    "rotated_match": replication.REPRODUCED,
    "probes_small": replication.CONTRADICTED,
    "probes_pooled": replication.CONTRADICTED,
    "rotated_10k_residue": replication.CONTRADICTED,
    "main_match_residue": replication.UNEXPLAINED,
    "long_residue": replication.UNEXPLAINED,
    "activation_residue": replication.UNEXPLAINED,
}


def test_the_findings_the_readme_names_are_in_the_class_it_names() -> None:
    config = read_json(FULL / "provenance.json")["config"]
    published = replication.read_published(REPO / "reference" / "published.csv")
    classes = replication.classify(replication.replication_table(FULL, config, published))
    wrong = {
        key: classes.get(key) for key, kind in NAMED_FINDINGS.items() if classes.get(key) != kind
    }
    assert not wrong, f"README.md's answer names these findings in another class: {wrong}"
