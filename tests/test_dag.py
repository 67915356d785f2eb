"""The workflow's plan before any job runs: the DAG that dry runs of the default and small
configs schedule (its shape, priorities and run paths), a bad config stopping it, and the device
check before every training job.

These tests run Snakemake in copies of the repository, so they never touch your results/.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import torch
import yaml

from tests.support.trees import (
    HANG_S,
    MAIN_RUN,
    REPO,
    SNAKEMAKE,
    copy_repo,
    smoke_with,
    snakemake,
)
from workflow.config import load_config
from workflow.status import job_counts as planned_jobs

pytestmark = pytest.mark.workflow


def test_parsing_the_workflow_imports_no_torch(tmp_path):
    """Dry runs, lint and the report never load torch: the Snakemake process may run in an
    environment without it (per-rule conda environments). A stand-in torch fails on import."""
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('torch imported while parsing')\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    workdir = copy_repo(repo)
    result = subprocess.run(
        [*SNAKEMAKE, "-n", "--cores", "1", "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(fake.parent)},
        timeout=HANG_S,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Job stats:" in result.stdout + result.stderr


def test_default_config_dry_run_has_the_full_main_study(tmp_path):
    jobs = planned_jobs(snakemake(copy_repo(tmp_path), "-n", "results/summary/main.csv"))
    assert jobs == {
        "prepare_mnist": 1,
        "train_history": 40,
        "dump_representations": 40,
        "compare_orders_base": 20,
        "select_matches": 1,
        "summarize_pairs": 1,
    }


def _job_blocks(plan: str) -> list[dict[str, str]]:
    """Each job of a dry run's plan: its rule, wildcards and priority (0 when not printed)."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", plan)[1:]:
        job = {"rule": re.match(r"(?:local)?rule (\w+):", block).group(1), "priority": "0"}
        if found := re.search(r"^\s+priority: (\d+)$", block, re.MULTILINE):
            job["priority"] = found.group(1)
        if found := re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE):
            job |= dict(item.split("=", 1) for item in found.group(1).split(", "))
        jobs.append(job)
    return jobs


def test_training_goes_seed_by_seed_and_a_finished_pair_is_compared_first(tmp_path):
    """Priorities: the main seeds in order, stream 0 before the replicates, both orders of a
    pair alike; every dump, comparison and probe before any training."""
    targets = [f"results/summary/{s}.csv" for s in ("main", "noise_floor", "probes")]
    jobs = _job_blocks(snakemake(copy_repo(tmp_path), "-n", *targets))
    studies = load_config([REPO / "config.yaml"])["studies"]
    main, floor = studies["main"]["seeds"], studies["noise_floor"]["seeds"]
    seeds = [*main, *(seed for seed in floor if seed not in main)]
    training = [job for job in jobs if job["rule"] == "train_history"]
    # Both orders on both streams of every noise floor seed (the main seeds among them).
    assert len(training) == 4 * len(floor) == 200
    by_run = {(int(j["seed"]), int(j["stream"]), j["order"]): int(j["priority"]) for j in training}
    ranked = sorted(by_run, key=lambda run: -by_run[run])
    assert [(seed, stream) for seed, stream, _ in ranked[::2]] == [
        (seed, stream) for seed in seeds for stream in (0, 1)
    ]
    assert all(
        by_run[seed, stream, "ABC"] == by_run[seed, stream, "BAC"] for seed, stream, _ in by_run
    )
    after = [j for j in jobs if j["rule"].startswith(("dump_", "compare_", "train_probes"))]
    assert min(int(j["priority"]) for j in after) > max(by_run.values())


def test_default_config_dry_run_of_every_study_shares_runs(tmp_path):
    jobs = planned_jobs(snakemake(copy_repo(tmp_path), "-n"))
    # Main (40 runs) is shared by the pilot's reset arm, long, noise floor stream 0 and the
    # probes; new runs: pilot preserve (10), rotated (10), the noise floor's 30 further seeds
    # on stream 0 (60), noise-floor replicates (100: both orders of its 50 seeds on stream 1),
    # the sensitivity variants (2 x 5 seeds x 2 orders, at their own paths). The activation
    # runs appear only once the stability search (10 traces at 0.05) has decided.
    assert jobs["train_history"] == 40 + 10 + 10 + 60 + 100 + 20
    assert jobs["extend_history"] == 10
    assert jobs["dump_representations"] == 240
    # ABC vs BAC: main, rotated, pilot preserve, the noise floor's further seeds, the
    # replicates' own order pair, the variants.
    assert jobs["compare_orders_base"] == 20 + 5 + 5 + 30 + 50 + 10
    # Each replicate against both stream-0 runs of its seed: the rest of the square.
    assert jobs["compare_streams_base"] == 50 * 4
    assert jobs["train_probes"] == 20
    assert jobs["trace_stability"] == 10
    # main, rotated, pilot preserve, pilot reset, the two variants
    assert jobs["summarize_pairs"] == 6
    assert jobs["summarize_sensitivity"] == 1
    assert sum(n for rule, n in jobs.items() if rule.startswith("plot_")) == 12


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        (("training", "lr"), -0.1, "training.lr"),
        (("model", "activation"), "swish", "model.activation"),
        (("studies", "main", "seeds"), [], "studies.main.seeds"),
        (("studies", "main", "seeds"), [101, 101], "studies.main.seeds"),
        # NaN passes any JSON-schema minimum: it once gave "Nothing to be done".
        (("training", "lr"), float("nan"), "training.lr: nan is not a finite number"),
        (("training", "checkpoints"), [0, float("inf")], "checkpoints[1]: inf is not a finite"),
        (("studies", "probes", "budgets"), [25, 50, 500, 6000], "probes.budgets: 6000 training"),
        (("tasks", "probe_per_digit"), 893, "tasks.probe_per_digit: 893 test images"),
        (("audit", "orders"), [], "audit.orders"),
    ],
)
def test_bad_config_stops_before_any_job_naming_the_key(tmp_path, key, value, named):
    workdir = copy_repo(tmp_path)
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    node = config
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    (workdir / "bad.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [*SNAKEMAKE, "-n", "--cores", "1", "--configfile", "bad.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode != 0
    assert named in result.stdout + result.stderr
    assert not (workdir / "results").exists()


def job_inputs(output: str, rule: str) -> list[str]:
    """The input line of every job of ``rule`` in a dry run's output."""
    blocks = re.findall(rf"^(?:local)?rule {rule}:\n((?:    .*\n)+)", output, flags=re.MULTILINE)
    return [re.search(r"^    input: (.*)$", b, flags=re.MULTILINE).group(1) for b in blocks]


def test_a_run_path_writes_the_learning_rate_exactly(tmp_path):
    """f"{lr:g}" once wrote 0.05000001 as 0.05: the run would have trained under lr~0.05."""
    workdir = copy_repo(tmp_path)
    override = smoke_with(workdir, "near", lr=0.05000001)
    output = snakemake(workdir, "-n", "results/smoke/summary/main.csv", "--configfile", override)
    assert "/lr~0.05000001/" in output
    assert "/lr~0.05/" not in output


DEVICE_CHECK = "results/smoke/preflight/device~cuda.json"


# Planned for a cluster: a dry run of local execution checks the device on this machine too.
CLUSTER = ("--executor", "slurm", "--jobs", "2")


def test_the_device_check_runs_before_every_training_job(tmp_path):
    workdir = copy_repo(tmp_path)
    override = smoke_with(workdir, "gpu", device="cuda", kernels="torch")
    output = snakemake(workdir, "-n", *CLUSTER, "--configfile", override)
    jobs = planned_jobs(output)
    assert jobs["check_device"] == 1
    for rule in ("train_history", "extend_history", "trace_stability", "audit_run"):
        inputs = job_inputs(output, rule)
        assert len(inputs) == jobs[rule] > 0, rule
        assert all(DEVICE_CHECK in line for line in inputs), (rule, inputs)
    assert "preflight" not in job_inputs(output, "train_probes")[0]  # probes run on the CPU
    rerun = MAIN_RUN.replace("results/smoke/runs/", "results/smoke/verify/runs/")
    verify = snakemake(
        workdir,
        "-n",
        *CLUSTER,
        f"{rerun}/seed~101/order~ABC/through~base.csv",
        "--configfile",
        override,
    )
    assert planned_jobs(verify)["check_device"] == 1
    assert DEVICE_CHECK in job_inputs(verify, "verify_run")[0]


def test_the_cpu_needs_no_device_check(tmp_path):
    """Inputs of the training rules stay what they were: runs trained before the check existed
    are not rerun for a changed set of input files."""
    output = snakemake(copy_repo(tmp_path), "-n", "--configfile", "config/smoke.yaml")
    assert "check_device" not in planned_jobs(output)
    assert job_inputs(output, "train_history")
    assert all(line == "resources/mnist.npz" for line in job_inputs(output, "train_history"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_missing_device_fails_one_job_and_starts_no_training(tmp_path, mnist_copy):
    workdir = copy_repo(tmp_path, mnist=mnist_copy)
    override = smoke_with(workdir, "gpu", device="cuda", kernels="torch")
    # An output of an earlier run that a training job would replace (and so first delete).
    earlier = workdir / MAIN_RUN / "seed~101/order~ABC/run.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("an earlier run's record\n")
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--keep-going", "--configfile", override],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config key training.device: cuda requested, but CUDA is not available" in output
    assert "Error in rule check_device" in output
    started = set(re.findall(r"^(?:local)?rule (\w+):", output, flags=re.MULTILINE))
    assert not started & {"train_history", "extend_history", "trace_stability", "audit_run"}
    assert earlier.read_text() == "an earlier run's record\n"


def test_variant_runs_never_share_a_path_with_default_runs(tmp_path):
    """Every variant (even one that changes no identity field, like raw_input) trains at its own
    variant~ path; a variant that changes the rate names that rate in its path."""
    workdir = copy_repo(tmp_path)
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["variants"] = {"slow": {"training": {"lr": 0.04}}}
    config["studies"]["sensitivity"]["variants"] = ["raw_input", "fixed_c_order", "slow"]
    (workdir / "variants.yaml").write_text(yaml.safe_dump(config))
    output = snakemake(workdir, "-n", "--configfile", "variants.yaml")
    records = re.findall(r"(results/smoke/runs/\S+?/run\.json)", output)
    runs = {path.removesuffix("/run.json") for path in records}
    variants = {re.search(r"/variant~(\w+)/", run).group(1) for run in runs}
    assert variants == {"default", "raw_input", "fixed_c_order", "slow"}
    by_identity: dict[str, set[str]] = {}
    for run in runs:
        rest = re.sub(r"/variant~\w+/", "/", run)
        by_identity.setdefault(rest, set()).add(run)
    # raw_input and fixed_c_order share every other field with default runs: only the variant
    # segment tells them apart, and it does.
    shared = [paths for paths in by_identity.values() if len(paths) > 1]
    assert shared
    for paths in shared:
        assert len({re.search(r"variant~\w+", path)[0] for path in paths}) == len(paths)
    assert any("/variant~slow/act~relu/lr~0.04/" in run for run in runs)
    assert not any("/variant~slow/act~relu/lr~0.05/" in run for run in runs)
