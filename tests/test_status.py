"""make status: job counts from dry runs, durations from benchmark files, an honest ETA."""

from __future__ import annotations

from workflow.status import dry_runs, job_counts, median_seconds, progress_table, report

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
    every, left = dry_runs(["results/full/summary/main.csv"], ["config/smoke.yaml"])
    for args in (every, left):
        assert {"-n", "--nolock", "--rerun-incomplete"} <= set(args)
        assert args[-2:] == ["--configfile", "config/smoke.yaml"]
    assert "--forceall" in every and "--forceall" not in left
