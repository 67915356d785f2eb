"""The reference exporter and each study's generated results text."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support.exports import REPO, RUN, run_record
from workflow import headlines, results_page
from workflow.artifacts import read_csv, read_json, write_csv, write_json
from workflow.config import load_config
from workflow.reference import pair_results
from workflow.reference.digests import config_digest, git_commit
from workflow.reference.export import PDF_LIMIT_BYTES, export
from workflow.reference.studies import STUDIES
from workflow.reference.tables import IDENTITY, read_reference, run_tables


def _results(tmp_path: Path) -> tuple[Path, Path]:
    results, logs = tmp_path / "results", tmp_path / "logs"
    for order, reached in (("ABC", {0: "d0", 25: "d25"}), ("BAC", {0: "e0"})):
        run = RUN.format(seed=101, order=order)
        write_json(results / run / "run.json", run_record(101, order, reached, [0, 25]))
        (logs / run).mkdir(parents=True)
        (logs / run / "train_history.benchmark.tsv").write_text("s\th:m:s\n12.5\t0:00:12\n")
    group = RUN.format(seed=101, order="ABC").rsplit("/", 1)[0]
    write_csv(results / group / "ABC_vs_BAC" / "base.csv", pd.DataFrame({"seed": [101]}))
    write_csv(results / "summary" / "main.csv", pd.DataFrame({"metric": ["h_repr"]}))
    (results / "figures").mkdir(parents=True)
    (results / "figures" / "main_h_repr.png").write_bytes(b"png")
    (results / "figures" / "main_h_repr.pdf").write_bytes(b"x" * (PDF_LIMIT_BYTES + 1))
    return results, logs


def test_run_tables_list_every_checkpoint_with_status_and_job_speed(tmp_path) -> None:
    results, logs = _results(tmp_path)
    record = results / RUN.format(seed=101, order="ABC") / "run.json"
    machine = {"cpu_model": "CPU", "cpu_flags": [], "torch_cpu_capability": "AVX2"}
    write_json(
        record,
        read_json(record)
        | {
            "provenance": read_json(record)["provenance"]
            | {"machine": machine | {"isa_overrides": {}}}
        },
    )
    runs, checkpoints = run_tables(results, logs, {"base": [0, 25]})
    assert list(runs["order"]) == ["ABC", "BAC"]
    assert list(runs["cpu_model"]) == ["CPU", ""]  # BAC's record predates the machine
    assert list(runs["isa_overrides"]) == ["none", ""]
    assert list(runs["status"]) == ["ok", "diverged"]
    assert list(runs["wall_s"]) == [12.5, 12.5]
    assert list(runs["updates"]) == [40, 40] and list(runs["updates_per_s"]) == [10.0, 10.0]
    assert list(runs["resumed_at"].isna()) == [True, True]
    bac = checkpoints[checkpoints["order"] == "BAC"]
    assert list(bac["update"]) == [0, 25]
    assert list(bac["status"]) == ["ok", "diverged"]
    assert list(bac["params_digest"].fillna("")) == ["e0", ""]


def test_a_resumed_job_is_timed_on_the_updates_it_trained(tmp_path) -> None:
    """The killed job's C updates before the saved state are not in the record's seconds."""
    results, logs = _results(tmp_path)
    log = logs / RUN.format(seed=101, order="BAC") / "train_history.log"
    log.write_text("... resuming from the state saved at C update 10\n...")
    runs, _ = run_tables(results, logs, {"base": [0, 25]})
    bac = runs[runs["order"] == "BAC"].iloc[0]
    assert bac["resumed_at"] == 10
    assert bac["updates"] == 40 and bac["updates_per_s"] == (40 - 10) / 4.0
    # Diverged before C's end: the record has no C phase to split, so no rate.
    record = results / RUN.format(seed=101, order="BAC") / "run.json"
    phases = [p for p in read_json(record)["phases"] if p["phase"] != "common"]
    write_json(record, read_json(record) | {"phases": phases})
    runs, _ = run_tables(results, logs, {"base": [0, 25]})
    assert runs[runs["order"] == "BAC"]["updates_per_s"].isna().all()


def test_export_copies_complete_studies_and_labels_the_rest_pending(tmp_path) -> None:
    results, logs = _results(tmp_path)
    training = {"torch_threads": 1, "kernels": "fused", "device": "cpu"}
    config = {
        "name": "tiny",
        "training": training | {"checkpoints": [0, 25], "extended_checkpoints": []},
    }
    out = tmp_path / "reference" / "tiny"
    prov = export(results, logs, out, config, REPO)
    assert prov["studies_complete"] == ["main"]
    assert "noise_floor" in prov["studies_pending"]
    assert (out / "summary" / "main.csv").is_file()
    assert (
        out
        / "comparisons"
        / RUN.format(seed=101, order="ABC").replace("/order~ABC", "/ABC_vs_BAC/base.csv")[
            len("runs/") :
        ]
    ).is_file()
    assert (out / "figures" / "main_h_repr.png").is_file()
    assert not (out / "figures" / "main_h_repr.pdf").exists()  # too large to track
    assert prov["config_digest"] == config_digest(config)
    assert len(read_csv(out / "checkpoints.csv")) == 4
    assert json.loads((out / "provenance.json").read_text())["environment"]["torch_threads"] == 1
    assert prov["export_commit"] == git_commit(REPO)


def test_export_names_the_commit_it_is_told(tmp_path) -> None:
    """A device machine's copy of the tree has another history: the caller names the commit."""
    training = {"torch_threads": 1, "kernels": "fused", "device": "cpu"}
    config = {
        "name": "tiny",
        "training": training | {"checkpoints": [0, 25], "extended_checkpoints": []},
    }
    out = tmp_path / "reference" / "tiny"
    prov = export(*_results(tmp_path), out, config, REPO, commit="abc123")
    assert prov["export_commit"] == "abc123"


def test_config_merges_like_snakemake(tmp_path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({"x": {"y": 1, "z": [1, 2]}, "w": 0}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"x": {"z": [3]}}))
    merged = load_config([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert merged == {"x": {"y": 1, "z": [3]}, "w": 0}


def _summary_row(**values) -> dict:
    base = {"n": 5, "n_seeds": 5, "n_unmatched": 0, "n_diverged": 0, "sd": 0.1}
    base |= {"t": 1.0, "p_t": 0.01, "p_wilcoxon": 0.03, "d_z": 1.2}
    return base | values


@pytest.mark.parametrize(
    ("low", "high", "words"),
    [(0.01, 0.03, "lies above it"), (-0.01, 0.03, "cannot be told apart"), (-0.03, -0.01, "below")],
)
def test_noise_floor_is_stated_plainly_whatever_it_shows(low, high, words) -> None:
    rows = [
        _summary_row(endpoint="matched", metric="h_order", mean=0.04, ci_low=0.03, ci_high=0.05),
        _summary_row(endpoint="matched", metric="h_floor", mean=0.02, ci_low=0.01, ci_high=0.03),
        _summary_row(endpoint="matched", metric="excess", mean=0.02, ci_low=low, ci_high=high),
    ]
    text = headlines.noise_floor_study(pd.DataFrame(rows), alpha=0.05)
    assert words in text
    assert "2.0 times" in text
    assert "0.0200 [" in text
    assert "weak evidence" not in text


def test_a_ci_the_paired_tests_do_not_back_is_called_weak() -> None:
    rows = [
        _summary_row(endpoint="matched", metric=metric, mean=0.02, ci_low=0.001, ci_high=0.03)
        for metric in ("h_order", "h_floor")
    ]
    rows.append(
        _summary_row(
            endpoint="matched", metric="excess", mean=0.01, ci_low=0.0001, ci_high=0.02, p_t=0.088
        )
    )
    text = headlines.noise_floor_study(pd.DataFrame(rows), alpha=0.05)
    assert (
        "lies above it: the CI of the excess excludes zero, but the paired t-test (p = 0.088) "
        "does not reject at the 5% level: weak evidence." in text
    )


def test_an_untried_rate_shows_no_trace_count() -> None:
    columns = ["lr", "tried", "n_traces", "n_finite", "selected"]
    summary = pd.DataFrame(
        [[0.04, True, 10, 9, False], [0.035, True, 10, 10, True], [0.03, False, 0, 0, False]],
        columns=columns,
    )
    rows = headlines.lr_search_study(summary).splitlines()[2:]
    assert rows == [
        "| 0.04 | yes | 9/10 |  |",
        "| 0.035 | yes | 10/10 | **selected** |",
        "| 0.03 | no | — |  |",
    ]


def test_reference_folder_is_consistent() -> None:
    """Every complete study has its summary; every run's checkpoints are listed with digests;
    the config recorded is the repository's full config."""
    folder = REPO / "reference" / "full"
    prov, checkpoints = read_reference(folder)
    for study in prov["studies_complete"]:
        assert (folder / "summary" / f"{study}.csv").is_file(), study
    runs = read_csv(folder / "runs.csv")
    ok = checkpoints[checkpoints["status"] == "ok"]
    assert ok["params_digest"].str.fullmatch(r"[0-9a-f]{64}").all()
    assert len(runs) == len(checkpoints.groupby([*IDENTITY, "segment"]))
    assert prov["config"] == load_config([REPO / "config.yaml"])


@pytest.mark.parametrize("name", ["full", "smoke"])
def test_every_pair_result_read_checkpoints_the_reference_lists(name: str) -> None:
    """Each comparison table, probe table and search trace has its provenance, and every
    checkpoint digest it names is the reference's for that run: a result never outlives the
    bits it came from."""
    folder = REPO / "reference" / name
    listed = pair_results.checkpoint_digests(read_csv(folder / "checkpoints.csv"))
    results = pair_results.in_reference(folder)
    assert results or name == "full"  # the small reference is complete
    for result in results:
        provenance = pair_results.provenance(result.kind, result.in_reference(folder))
        assert provenance is not None, result
        assert pair_results.agrees(result.kind, provenance, listed), result


def test_every_study_of_a_reference_has_a_headline_text() -> None:
    assert all(callable(headlines.renderer(study)) for study in STUDIES)
    assert set(STUDIES) == set(headlines.QUESTIONS)


def test_the_smoke_reference_sections_render_every_complete_study() -> None:
    """The small reference has every study, sensitivity included: each renders."""
    folder = REPO / "reference" / "smoke"
    prov = read_json(folder / "provenance.json")
    assert "sensitivity" in prov["studies_complete"]
    text, _ = results_page.render(folder, [])
    assert "H_repr minus default" in text and "raw_input" in text


def test_the_section_names_the_caps_that_chose_the_code_path() -> None:
    env = {"torch_cpu_capability": "AVX2", "isa_overrides": {}}
    assert headlines.cpu_path(env) == "AVX2"
    env["isa_overrides"] = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
    assert headlines.cpu_path(env) == "AVX2 under ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2"


def test_behaviour_says_how_much_of_the_pairs_errors_overlap() -> None:
    means = {"either_wrong_pct": 4.0, "both_wrong_pct": 1.0, "both_wrong_differently_pct": 0.2}
    rows = [
        _summary_row(
            analysis="variant",
            arm="default",
            contrast=None,
            endpoint="matched",
            metric=metric,
            mean=means.get(metric, 98.0),
            ci_low=0.0,
            ci_high=1.0,
        )
        for metric, _ in headlines.BEHAVIOUR
    ]
    text = headlines.behaviour_text(pd.DataFrame(rows))
    assert "| matched checkpoint | 5 of 5 | 98.00 [0.00, 1.00] |" in text
    assert (
        "4.00% of test images are wrong in at least one network and 1.00% in both (0.20% with "
        "different labels): the two share 25% of the images either gets wrong" in text
    )
