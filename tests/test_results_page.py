"""The results pages and the replication table: regenerated from the committed reference
folders they match byte for byte; a pending or extended study says how many seeds are in and
the hours the rest need; the noise floor's verdict shows when its table is there; and the
published study is judged figure by figure by the rule replication.py states."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from workflow import phrases, progress, remaining, replication, results_page
from workflow.artifacts import read_csv, read_json, write_csv, write_json
from workflow.stats import Bootstrap, describe

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "reference" / "smoke"
FULL = REPO / "reference" / "full"
# Each committed page and the config files it was generated against (the command at its top).
COMMITTED = {
    "full": [],
    "smoke": [],
    "cuda": [],
}


@pytest.fixture
def smoke(tmp_path: Path) -> Path:
    """A copy of the small config's reference, every study of it complete."""
    return Path(shutil.copytree(SMOKE, tmp_path / "smoke"))


def _render(folder: Path, configs: list[Path] | None = None) -> str:
    return results_page.render(folder, configs or [])[0]


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_the_committed_page_and_table_are_the_generators(name: str) -> None:
    folder = REPO / "reference" / name
    configs = [REPO / path for path in COMMITTED[name]]
    page, table = results_page.render(folder, configs)
    assert f"`{results_page.command(folder, configs)}`" in page.splitlines()[0]
    assert results_page.stale(folder, page, table) == [], (
        f"run python -m workflow.results_page reference/{name} "
        + " ".join(f"--config {path}" for path in COMMITTED[name])
    )
    assert (table is not None) == (name != "smoke")
    assert (folder / results_page.TABLE).is_file() == (table is not None)


def test_the_check_fails_on_a_stale_page(smoke: Path) -> None:
    assert results_page.main([str(smoke)]) == 0
    assert results_page.main([str(smoke), "--check"]) == 0
    (smoke / "RESULTS.md").write_text((smoke / "RESULTS.md").read_text() + "edited\n")
    assert results_page.main([str(smoke), "--check"]) == 1


def test_a_config_of_another_name_is_refused(smoke: Path) -> None:
    with pytest.raises(ValueError, match="exported under config 'smoke'"):
        results_page.render(smoke, [REPO / "config.yaml"])


def _timed(folder: Path, wall_s: float) -> None:
    runs = read_csv(folder / "runs.csv").assign(wall_s=wall_s)
    write_csv(folder / "runs.csv", runs)


def test_a_pending_study_says_its_seeds_and_the_hours_left(smoke: Path) -> None:
    """The 50-seed state: the export's config asks more seeds than the folder holds."""
    prov = read_json(smoke / "provenance.json")
    prov["config"]["studies"]["noise_floor"]["seeds"] = [101, 202, 303]
    prov["studies_complete"].remove("noise_floor")
    prov["studies_pending"] = ["noise_floor"]
    write_json(smoke / "provenance.json", prov)
    _timed(smoke, 600.0)
    page = _render(smoke)
    assert "`noise_floor` 2 of 3." in page
    # Seed 303's square: S_ABC and S_BAC on streams 0 and 1, 600 s each, two at a time.
    assert (
        "`noise_floor` still needs 4 training jobs (1 of its seeds): about 0.3 h of training on "
        "2 cores (4 jobs two at a time, each timed at the median wall time, 10.0 min, of the"
    ) in page
    assert "### noise_floor" not in page


def test_an_extended_study_says_its_seeds_and_the_hours_left(smoke: Path, tmp_path) -> None:
    """The state before the re-export: the folder's study is complete under the export's
    config, and the repository's config asks more seeds."""
    more = tmp_path / "more.yaml"
    more.write_text(yaml.safe_dump({"studies": {"noise_floor": {"seeds": [101, 202, 303, 404]}}}))
    _timed(smoke, 360.0)
    configs = [REPO / "config.yaml", REPO / "config" / "smoke.yaml", more]
    page = _render(smoke, configs)
    assert "**`noise_floor` is being extended** to the 4 seeds" in page
    assert "2 of them are in this folder" in page and "those of the 2 seeds" in page
    assert "still needs 8 training jobs (2 of its seeds): about 0.4 h" in page
    assert "### noise_floor" in page
    assert "being extended" not in _render(smoke, configs[:2])


def test_the_remaining_hours_of_the_full_reference_are_timed_by_its_runs() -> None:
    config = results_page.load_config([REPO / "config.yaml"])
    left = remaining.remaining(FULL, config, "noise_floor")
    runs = read_csv(FULL / "runs.csv")
    timed = runs[
        (runs["protocol"] == "class_split")
        & (runs["segment"] == "base")
        & runs["resumed_at"].isna()
        & (runs["status"] == "ok")
    ]
    floor = config["studies"]["noise_floor"]
    needed = {
        (seed, stream, order)
        for seed in floor["seeds"]
        for stream in (0, floor["stream"])
        for order in ("ABC", "BAC")
    }
    main_runs = runs[(runs["segment"] == "base") & (runs["status"] == "ok")]
    main_runs = main_runs[(main_runs["variant"] == "default") & (main_runs["act"] == "relu")]
    main_runs = main_runs[main_runs["protocol"] == "class_split"]
    main_runs = main_runs[(main_runs["lr"] == 0.05) & (main_runs["optim"] == "reset")]
    have = set(zip(main_runs["seed"], main_runs["stream"], main_runs["order"], strict=True))
    done = progress.study_progress(FULL, config, ["noise_floor"])["noise_floor"]
    assert (left.seeds_left, left.jobs) == (done.seeds - done.done, len(needed - have))
    assert left.hours == pytest.approx(left.jobs * timed["wall_s"].median() / 2 / 3600)


def _decision_tables(folder: Path) -> None:
    common = "common_100"
    rows = [
        {"endpoint": "matched", "primary": False, "verdict": "inconclusive"},
        {"endpoint": common, "primary": True, "verdict": "indistinguishable from SGD noise"},
    ]
    numbers = {"n": 2, "excess": 0.001, "floor": 0.2, "margin": 0.02, "p_above_margin": 0.9}
    numbers |= {"p_below_margin": 0.04, "p_tost": 0.04, "ci_low": -0.01, "ci_high": 0.012}
    numbers |= {"detectable_excess": 0.05, "ci_half_width": 0.03}
    write_csv(folder / "tables" / "noise_floor_decision.csv", pd.DataFrame(rows).assign(**numbers))
    trajectory = [
        {"update": u, "metric": m, "n": 2, "mean": 0.1, "ci_low": 0.05, "ci_high": 0.15, "p_t": 0.5}
        for u in (0, 100)
        for m in ("h_order", "h_floor", "excess")
    ]
    write_csv(folder / "tables" / "order_vs_noise.csv", pd.DataFrame(trajectory))
    shutil.copy(folder / "figures" / "main_h_repr.png", folder / "figures" / "order_vs_noise.png")


def test_the_decision_and_the_trajectory_show_when_the_folder_has_them(smoke: Path) -> None:
    """A folder exported before the decision rule shows neither; one that holds its tables
    shows both, and only under a config that names the rule."""
    for name in ("noise_floor_decision", "order_vs_noise", "order_vs_noise_endpoints"):
        (smoke / "tables" / f"{name}.csv").unlink()
    (smoke / "figures" / "order_vs_noise.png").unlink()
    prov = read_json(smoke / "provenance.json")
    rule = prov["config"]["studies"]["noise_floor"].pop("decision")
    write_json(smoke / "provenance.json", prov)
    before = _render(smoke)
    assert "pre-registered" not in before and "order_vs_noise" not in before
    _decision_tables(smoke)
    with pytest.raises(ValueError, match="no studies.noise_floor.decision"):
        _render(smoke)
    prov["config"]["studies"]["noise_floor"]["decision"] = rule
    write_json(smoke / "provenance.json", prov)
    page = _render(smoke)
    assert (
        "at the primary endpoint, the common endpoint, 100 updates, the excess over the noise "
        "floor is **indistinguishable from SGD noise** (n = 2 seeds; excess 0.0010, 90% t "
        "interval [-0.0100, 0.0120], margin ±0.0200)"
    ) in " ".join(page.split())
    assert "detects an excess of 0.0500 with 80% power" in page
    assert "| 100 | 2 | 0.1000 [0.0500, 0.1500] |" in page
    assert "![order_vs_noise](figures/order_vs_noise.png)" in page


def _row(statistic: str, value: float, low=math.nan, high=math.nan, metric="h_repr"):
    return pd.Series(
        {"statistic": statistic, "value": value, "ci_low": low, "ci_high": high, "metric": metric}
    )


@pytest.mark.parametrize(
    ("row", "ours", "probe", "expected"),
    [
        (_row("mean", 0.15), replication.Reading(0.16, 0.14, 0.17), None, "agrees"),
        (_row("mean", 0.13), replication.Reading(0.16, 0.14, 0.17), None, "differs"),
        (_row("mean", 0.13, 0.12, 0.141), replication.Reading(0.16, 0.14, 0.17), None, "differs"),
        (
            _row("mean", 0.13, 0.12, 0.135),
            replication.Reading(0.16, 0.14, 0.17),
            None,
            "contradicts",
        ),
        (
            _row("mean", 2.7, metric="disagreement_pct"),
            replication.Reading(1.8, 1.7, 1.9),
            replication.Reading(2.6, 2.4, 2.8),
            "agrees",
        ),
        (_row("p_t", 0.027), replication.Reading(0.51), None, "contradicts"),
        (_row("p_t", 0.06), replication.Reading(0.31), None, "agrees"),
        (_row("n_matched", 16), replication.Reading(20), None, "differs"),
        (_row("selected", 0.04), replication.Reading(0.04), None, "agrees"),
        (_row("d_z", 0.5), replication.Reading(-0.1), None, ""),
        (_row("mean", 0.15), None, None, ""),
    ],
)
def test_a_figures_verdict_follows_the_stated_rule(row, ours, probe, expected) -> None:
    assert replication.verdict(row, ours, probe, alpha=0.05) == expected


def test_a_finding_is_as_bad_as_its_worst_figure() -> None:
    table = pd.DataFrame(
        {
            "finding": ["a", "a", "b", "b", "c", "c", "d"],
            "verdict": ["agrees", "contradicts", "agrees", "differs", "agrees", "", ""],
        }
    )
    assert replication.classify(table) == {
        "a": replication.CONTRADICTED,
        "b": replication.UNEXPLAINED,
        "c": replication.REPRODUCED,
    }


@pytest.fixture(scope="module")
def full_table() -> pd.DataFrame:
    config = read_json(FULL / "provenance.json")["config"]
    published = replication.read_published(REPO / "reference" / "published.csv")
    return replication.replication_table(FULL, config, published)


def test_every_published_figure_has_a_reading_in_the_full_reference(full_table) -> None:
    assert full_table["histres"].notna().all(), full_table[full_table["histres"].isna()]
    disagreements = full_table[full_table["metric"].str.startswith("disagreement_pct")]
    assert len(disagreements) == 7 and disagreements["probe_set"].notna().all()
    assert set(full_table["finding"]) == set(phrases.text("findings"))


def test_the_probe_set_reading_is_the_per_seed_tables(full_table) -> None:
    """At main's endpoints the comparison tables' probe-set disagreement, read at each seed's
    update, is the per-seed table's column, with the config's bootstrap CI."""
    config = read_json(FULL / "provenance.json")["config"]
    per_seed = read_csv(FULL / "tables" / "main_per_seed.csv")
    for endpoint in ("matched", "common_10000"):
        values = per_seed.loc[per_seed["endpoint"] == endpoint, "disagreement_probe_pct"]
        expected = describe(values.to_numpy(), Bootstrap.from_config(config["statistics"]))
        row = full_table[
            (full_table["study"] == "main")
            & (full_table["endpoint"] == endpoint)
            & (full_table["metric"] == "disagreement_pct")
        ].iloc[0]
        assert (row["probe_set"], row["probe_set_ci_low"], row["probe_set_ci_high"]) == (
            pytest.approx(expected.mean),
            pytest.approx(expected.ci_low),
            pytest.approx(expected.ci_high),
        )


def test_no_replication_for_a_config_that_is_not_the_published_protocol(smoke: Path) -> None:
    page, table = results_page.render(smoke, [])
    assert table is None
    assert "not the published protocol's" in page


def test_a_missing_phrase_names_the_file_and_the_entry() -> None:
    with pytest.raises(phrases.PhraseError, match=r"phrases.yaml has no entry 'page.nothing'"):
        phrases.say("page.nothing")
    with pytest.raises(phrases.PhraseError, match=r"entry 'pilot.difference': no value for field"):
        phrases.say("pilot.difference", endpoint="x")


def test_a_seed_without_its_probe_table_needs_probing_not_training(smoke: Path) -> None:
    for name in ("seed~202.csv", "seed~202.provenance.json"):
        (smoke / "probes" / name).unlink()
    config = read_json(smoke / "provenance.json")["config"]
    left = remaining.remaining(smoke, config, "probes")
    assert (left.seeds_left, left.jobs) == (1, 0)
    assert remaining.remaining(smoke, config, "main").seeds_left == 0
