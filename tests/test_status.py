"""make status: job counts from dry runs, durations from benchmark files, an honest ETA."""

from __future__ import annotations

from workflow.status import (
    dry_runs,
    job_counts,
    median_seconds,
    progress_table,
    reference_seconds,
    report,
)

DRY_RUN = """Building DAG of jobs...
Job stats:
job                     count
--------------------  -------
train_history              4
compare_orders_base        2
total                      6

Reasons:
"""


def test_job_counts_read_the_dry_run_table() -> None:
    assert job_counts(DRY_RUN) == {"train_history": 4, "compare_orders_base": 2}
    assert job_counts("Nothing to be done (all requested files are present and up to date).") == {}


def test_median_seconds_per_rule_from_benchmark_files(tmp_path) -> None:
    for name, seconds in (("a", 100.0), ("b", 300.0), ("c", 200.0)):
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        (folder / "train_history.benchmark.tsv").write_text(f"s\th:m:s\n{seconds}\t0:00:00\n")
    (tmp_path / "runs/a/broken.benchmark.tsv").write_text("garbage")
    assert median_seconds(tmp_path) == {"train_history": 200.0}


def test_the_default_configs_times_are_its_own(tmp_path) -> None:
    """The default config's logs/ holds the other configs' logs/<name>/ too: a small config's
    jobs once timed the full config's ETA."""
    for folder, seconds in (("runs/a", 600.0), ("smoke/runs/b", 5.0), ("smoke/runs/c", 5.0)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "train_history.benchmark.tsv").write_text(f"s\n{seconds}\n")
    (tmp_path / "smoke/probes").mkdir(parents=True)
    (tmp_path / "smoke/probes/seed~101.benchmark.tsv").write_text("s\n1.0\n")
    assert median_seconds(tmp_path) == {"train_history": 600.0}
    assert median_seconds(tmp_path / "smoke") == {"train_history": 5.0, "train_probes": 1.0}


def test_report_counts_jobs_and_names_unmeasured_rules() -> None:
    total = {"train_history": 10, "compare_orders_base": 5, "prepare_mnist": 1}
    left = {"train_history": 4, "compare_orders_base": 5}
    table = progress_table(total, left, {"train_history": 1800.0})
    row = table.set_index("rule").loc["train_history"]
    assert (row["done"], row["left"], row["job_hours_left"]) == (6, 4, 2.0)
    text = report(table, cores=2)
    assert "jobs: 7 of 16 done, 9 left" in text
    assert "ETA about 1.0 h on 2 core(s)" in text
    assert "not yet measured here: compare_orders_base" in text
    finished = report(progress_table(total, {}, {}), cores=2)
    assert "nothing left to run" in finished


def test_dry_runs_plan_while_jobs_are_running() -> None:
    """A running job's outputs are marked incomplete: without --rerun-incomplete Snakemake
    refuses to plan (IncompleteFilesException), and make status failed while make full ran."""
    every, left = dry_runs(["results/summary/main.csv"], ["config/smoke.yaml"])
    for args in (every, left):
        assert {"-n", "--nolock", "--rerun-incomplete"} <= set(args)
        assert args[-2:] == ["--configfile", "config/smoke.yaml"]
    assert "--forceall" in every and "--forceall" not in left


def test_jobs_behind_a_checkpoint_count_in_the_total() -> None:
    """The forced dry run plans nothing behind the stability search's checkpoint; the other
    plans the activation runs: a rule's total is never below its jobs left (it once printed
    'done -12 of 10')."""
    total = {"train_history": 100, "extend_history": 10, "check_stability": 1}
    left = {"train_history": 20, "extend_history": 20, "plot_activation": 1}
    table = progress_table(total, left, {}).set_index("rule")
    assert table.loc["extend_history", ["done", "total", "left"]].tolist() == [0, 20, 20]
    assert table.loc["train_history", ["done", "total", "left"]].tolist() == [80, 100, 20]
    assert table.loc["plot_activation", ["done", "total"]].tolist() == [0, 1]
    assert (table["done"] >= 0).all()


def test_a_machine_with_no_finished_job_takes_training_times_from_the_reference(
    tmp_path,
) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(
        "seed,order,segment,wall_s\n"
        "101,ABC,base,600\n101,BAC,base,800\n202,ABC,base,700\n101,ABC,extended,1800\n"
    )
    reference = reference_seconds(runs)
    assert reference == {"train_history": 700.0, "extend_history": 1800.0}
    assert reference_seconds(tmp_path / "missing.csv") == {}
    left = {"train_history": 4, "extend_history": 2, "dump_representations": 4}
    here = {"train_history": 360.0}
    table = progress_table(left, left, here, reference).set_index("rule")
    assert table.loc["train_history", ["s_per_job", "timed"]].tolist() == [360.0, "here"]
    assert table.loc["extend_history", ["s_per_job", "timed"]].tolist() == [1800.0, "reference"]
    text = report(table.reset_index(), cores=2)
    assert "ETA about 0.7 h on 2 core(s)" in text  # (4 * 360 + 2 * 1800) s / 2 cores
    assert "(extend_history timed by the reference's runs, not on this machine)" in text
    assert "not yet measured here: dump_representations" in text
