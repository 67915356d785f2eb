"""A reference accumulates: an export keeps the runs its folder holds and the tree lacks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.support.exports import CONFIG, RUN, export_tree, fake_tree
from workflow import headlines, manifest
from workflow.artifacts import read_csv, read_json, write_csv, write_json
from workflow.reference.accumulate import ReferenceConflict, cpu_vendor, mkl_code
from workflow.reference.studies import StudiesWouldBeLost, studies_built


def _runs(out: Path) -> list[tuple[int, str]]:
    table = read_csv(out / "runs.csv")
    return list(zip(table["seed"], table["order"], strict=True))


def test_runs_the_tree_lacks_are_kept_with_the_export_they_came_from(tmp_path) -> None:
    out = tmp_path / "reference"
    lost = {(101, "ABC"): {0: "a0", 25: "a25"}, (202, "ABC"): {0: "b0", 25: "b25"}}
    export_tree(fake_tree(tmp_path / "lost", lost), out, commit="first")
    prov = export_tree(fake_tree(tmp_path / "new", {(202, "ABC"): lost[202, "ABC"]}), out, "second")
    assert _runs(out) == [(101, "ABC"), (202, "ABC")]
    assert len(read_csv(out / "checkpoints.csv")) == 4
    [kept] = prov["carried_over"]
    assert (kept["seed"], kept["order"], kept["export_commit"]) == (101, "ABC", "first")
    # A third export keeps naming the export that first held the run.
    prov = export_tree(fake_tree(tmp_path / "third", {}), out, "third")
    assert [run["export_commit"] for run in prov["carried_over"]] == ["first", "second"]
    assert read_json(out / "provenance.json")["carried_over"] == prov["carried_over"]


def test_one_run_with_two_sets_of_bits_stops_the_export(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(fake_tree(tmp_path / "one", {(101, "ABC"): {0: "a0", 25: "a25"}}), out, "first")
    other = fake_tree(tmp_path / "other", {(101, "ABC"): {0: "a0", 25: "XX"}})
    with pytest.raises(ReferenceConflict, match="seed=101, order=ABC, segment=base at update 25"):
        export_tree(other, out, "second")
    assert read_json(out / "provenance.json")["export_commit"] == "first"  # left as it was
    prov = export_tree(other, out, "second", replace=True)
    assert prov["carried_over"] == []
    assert set(read_csv(out / "checkpoints.csv")["params_digest"]) == {"a0", "XX"}


# With what the progress counts read: the main seeds and the main runs' identity.
STUDIED = CONFIG | {
    "studies": {"main": {"seeds": [101]}},
    "model": {"activation": "relu"},
    "training": CONFIG["training"] | {"lr": 0.05, "optimizer_at_common": "reset"},
}


def test_an_export_never_drops_a_study_the_folder_holds_complete(tmp_path) -> None:
    out = tmp_path / "reference"
    tree = fake_tree(tmp_path / "full", {(101, "ABC"): {0: "a0", 25: "a25"}})
    write_csv(tree[0] / "summary" / "main.csv", pd.DataFrame({"metric": ["h_repr"]}))
    assert export_tree(tree, out, "first", STUDIED)["studies_complete"] == ["main"]
    restored = fake_tree(tmp_path / "restored", {})
    # Its pair results are not in the folder, so it cannot be carried over either.
    with pytest.raises(StudiesWouldBeLost, match="holds main complete.*build_main"):
        export_tree(restored, out, "second", STUDIED)
    assert read_json(out / "provenance.json")["export_commit"] == "first"  # left as it was
    assert export_tree(restored, out, "second", STUDIED, replace=True)["studies_complete"] == []


def _with_main_pair(tree: tuple[Path, Path]) -> None:
    """The main study's one pair of the tiny config (seed 101), as a comparison table."""
    pair = tree[0] / "runs" / Path(RUN.format(seed=101, order="ABC")).parent.relative_to("runs")
    write_csv(pair / "ABC_vs_BAC" / "base.csv", pd.DataFrame({"seed": [101], "update": [0]}))
    write_json(pair / "ABC_vs_BAC" / "base.provenance.json", {"code_version": "x"})


def test_a_complete_study_the_tree_did_not_build_is_carried_over_whole(tmp_path) -> None:
    """A restored tree cannot rebuild a study that reads checkpoints (activation's audit):
    the folder's summary, tables and figures stay, as long as its pairs and config do."""
    out = tmp_path / "reference"
    tree = fake_tree(tmp_path / "full", {(101, "ABC"): {0: "a0", 25: "a25"}})
    _with_main_pair(tree)
    write_csv(tree[0] / "summary" / "main.csv", pd.DataFrame({"metric": ["h_repr"]}))
    write_csv(tree[0] / "tables" / "main_per_seed.csv", pd.DataFrame({"seed": [101]}))
    (tree[0] / "figures").mkdir()
    (tree[0] / "figures" / "main_h_repr.png").write_bytes(b"png")
    export_tree(tree, out, "first", STUDIED)
    restored = fake_tree(tmp_path / "restored", {})
    _with_main_pair(restored)
    prov = export_tree(restored, out, "second", STUDIED)
    assert (prov["studies_complete"], prov["studies_carried"]) == (["main"], ["main"])
    for name in ("summary/main.csv", "tables/main_per_seed.csv", "figures/main_h_repr.png"):
        assert (out / name).is_file(), name
    assert not (out / "audit" / "determinism.csv").exists()
    write_csv(tree[0] / "audit" / "determinism.csv", pd.DataFrame({"identical": [True]}))
    export_tree(tree, out, "third", STUDIED)
    export_tree(
        restored, out, "fourth", STUDIED
    )  # a restored tree has no audit: the folder's stays
    assert read_csv(out / "audit" / "determinism.csv")["identical"].all()
    changed = STUDIED | {"statistics": {"bootstrap_seed": 1}}
    with pytest.raises(StudiesWouldBeLost, match="its config changed"):
        export_tree(restored, out, "third", changed)


def test_a_study_the_tree_half_rebuilt_is_carried_over_not_dropped(tmp_path) -> None:
    """A tree whose build_main stopped after the summary, before a figure the folder holds,
    has not built main: the export keeps the folder's files rather than dropping the figure."""
    out = tmp_path / "reference"
    tree = fake_tree(tmp_path / "full", {(101, "ABC"): {0: "a0", 25: "a25"}})
    _with_main_pair(tree)
    write_csv(tree[0] / "summary" / "main.csv", pd.DataFrame({"metric": ["h_repr"]}))
    (tree[0] / "figures").mkdir()
    (tree[0] / "figures" / "main_h_repr.png").write_bytes(b"png")
    export_tree(tree, out, "first", STUDIED)
    (tree[0] / "figures" / "main_h_repr.png").unlink()
    write_csv(tree[0] / "summary" / "main.csv", pd.DataFrame({"metric": ["rebuilt"]}))
    prov = export_tree(tree, out, "second", STUDIED)
    assert (prov["studies_complete"], prov["studies_carried"]) == (["main"], ["main"])
    assert (out / "figures" / "main_h_repr.png").read_bytes() == b"png"
    assert read_csv(out / "summary" / "main.csv")["metric"].tolist() == ["h_repr"]
    assert studies_built(tree[0], out) == []
    assert studies_built(tree[0]) == ["main"]


def test_a_reopened_study_becomes_pending_and_keeps_the_runs(tmp_path) -> None:
    """A study computed anew under new code leaves the folder's complete ones by name only."""
    out = tmp_path / "reference"
    tree = fake_tree(tmp_path / "full", {(101, "ABC"): {0: "a0", 25: "a25"}})
    for study in ("main", "probes"):
        write_csv(tree[0] / "summary" / f"{study}.csv", pd.DataFrame({"metric": ["h_repr"]}))
    export_tree(tree, out, "first", STUDIED)
    (tree[0] / "summary" / "probes.csv").unlink()
    with pytest.raises(StudiesWouldBeLost, match="holds probes complete"):
        export_tree(tree, out, "second", STUDIED, reopened=["main"])
    prov = export_tree(tree, out, "second", STUDIED, reopened=["probes"])
    assert (prov["studies_complete"], "probes" in prov["studies_pending"]) == (["main"], True)
    assert not (out / "summary" / "probes.csv").exists()
    assert _runs(out) == [(101, "ABC")]


def test_runs_of_another_training_config_are_dropped_not_kept(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(fake_tree(tmp_path / "one", {(101, "ABC"): {0: "a0", 25: "a25"}}), out, "first")
    changed = CONFIG | {"training": CONFIG["training"] | {"lr_note": "another"}}
    prov = export_tree(fake_tree(tmp_path / "two", {}), out, "second", config=changed)
    assert (prov["carried_over"], prov["dropped_earlier_runs"]) == ([], 1)
    assert _runs(out) == []


def test_the_readme_line_says_how_many_runs_were_kept_and_from_where(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(
        fake_tree(tmp_path / "lost", {(101, "ABC"): {0: "a0", 25: "a25"}}), out, "first" * 3
    )
    prov = export_tree(
        fake_tree(tmp_path / "new", {(202, "ABC"): {0: "b0", 25: "b25"}}), out, "second"
    )
    line = headlines.training_line(out, prov["carried_over"])
    assert line.startswith("Training: 2 jobs (2 ok)")
    assert f"1 of them were kept from earlier exports ({prov['date']} at `firstfirstfi`)" in line
    assert "resumed" not in line
    runs = read_csv(out / "runs.csv").assign(resumed_at=[10, None])
    write_csv(out / "runs.csv", runs)
    line = headlines.training_line(out, prov["carried_over"])
    assert "training steps (1 resumed from a killed job's saved state: the hours leave" in line


def test_an_export_killed_while_writing_loses_nothing(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(fake_tree(tmp_path / "lost", {(101, "ABC"): {0: "a0", 25: "a25"}}), out, "first")
    out.rename(out.with_name(f".{out.name}.earlier"))  # killed after setting the folder aside
    prov = export_tree(fake_tree(tmp_path / "new", {}), out, "second")
    assert [run["export_commit"] for run in prov["carried_over"]] == ["first"]
    assert not out.with_name(f".{out.name}.earlier").exists()


def test_a_kept_run_whose_record_predates_the_machine_takes_its_exports_cpu(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(fake_tree(tmp_path / "lost", {(101, "ABC"): {0: "a0", 25: "a25"}}), out, "first")
    runs = read_csv(out / "runs.csv")
    prov = read_json(out / "provenance.json")
    prov["environment"] |= {"cpu_model": "Old CPU", "torch_cpu_capability": "AVX2"}
    write_json(out / "provenance.json", prov)
    runs.drop(columns=["cpu_model", "torch_cpu_capability", "isa_overrides"]).to_csv(
        out / "runs.csv", index=False
    )  # an export from before runs.csv had them
    (out / manifest.NAME).unlink()  # and before manifests
    export_tree(fake_tree(tmp_path / "new", {}), out, "second")
    kept = read_csv(out / "runs.csv").iloc[0]
    assert (kept["cpu_model"], kept["torch_cpu_capability"]) == ("Old CPU", "AVX2")


def _on_cpu(results: Path, seed: int, order: str, model: str, mkl: str | None = None) -> None:
    """The run's record names ``model``, and MKL's code ``mkl`` (records before it had none)."""
    record = results / RUN.format(seed=seed, order=order) / "run.json"
    run = read_json(record)
    run["provenance"]["machine"] = {
        "cpu_model": model,
        "torch_cpu_capability": "AVX2",
        "isa_overrides": {},
    } | ({"mkl_cpu": mkl} if mkl else {})
    write_json(record, run)


def test_runs_of_two_mkl_codes_never_share_a_folder(tmp_path) -> None:
    """MKL runs other code on Intel CPUs than on AMD ones, with other bits: a folder holding
    both could not be checked on any one machine, so the export stops, naming the codes and
    their runs. Records before machine.mkl_cpu take the code of their CPU's vendor."""
    out = tmp_path / "reference"
    amd = fake_tree(tmp_path / "amd", {(101, "ABC"): {0: "a0", 25: "a25"}})
    _on_cpu(amd[0], 101, "ABC", "AMD EPYC")
    export_tree(amd, out, "first")
    intel = fake_tree(tmp_path / "intel", {(202, "ABC"): {0: "b0", 25: "b25"}})
    _on_cpu(intel[0], 202, "ABC", "Intel(R) Xeon(R) Processor")
    with pytest.raises(ReferenceConflict, match=r"1 ran MKL's intel code, 1 ran MKL's zen code"):
        export_tree(intel, out, "second")
    assert read_csv(out / "runs.csv")["seed"].tolist() == [101]  # the folder as it was
    export_tree(intel, out, "afresh", replace=True)
    assert read_csv(out / "runs.csv")["cpu_model"].tolist() == ["Intel(R) Xeon(R) Processor"]
    unknown = fake_tree(tmp_path / "unknown", {(303, "ABC"): {0: "c0", 25: "c25"}})
    _on_cpu(unknown[0], 303, "ABC", "unknown")
    export_tree(unknown, out, "third")  # an unknown CPU names no code


def test_an_intel_run_of_mkls_zen_code_joins_a_folder_of_amd_runs(tmp_path) -> None:
    out = tmp_path / "reference"
    amd = fake_tree(tmp_path / "amd", {(101, "ABC"): {0: "a0", 25: "a25"}})
    _on_cpu(amd[0], 101, "ABC", "AMD EPYC")
    export_tree(amd, out, "first")
    intel = fake_tree(tmp_path / "intel", {(202, "ABC"): {0: "b0", 25: "b25"}})
    _on_cpu(intel[0], 202, "ABC", "Intel(R) Xeon(R) Processor", mkl="zen")
    prov = export_tree(intel, out, "second")
    runs = read_csv(out / "runs.csv")
    assert runs["seed"].tolist() == [101, 202]
    assert runs["mkl_cpu"].isna().tolist() == [True, False]  # the AMD run's record predates it
    assert runs["mkl_cpu"].iloc[1] == "zen"
    assert prov["environment"]["mkl_cpu"] == "zen"  # the runs', not the exporting process's


def test_mkl_code_is_the_record_else_the_vendors_choice() -> None:
    assert [
        mkl_code(model, mkl)
        for model, mkl in (
            ("Intel(R) Xeon(R) Processor", "zen"),
            ("Intel(R) Xeon(R) Processor", None),
            ("AMD EPYC", float("nan")),  # an empty CSV cell
            ("Apple M2", None),
        )
    ] == ["zen", "intel", "zen", ""]


def test_cpu_vendor_reads_the_first_word_of_the_model_name() -> None:
    assert [cpu_vendor(m) for m in ("AMD EPYC", "Intel(R) Xeon(R) Processor", "", None)] == [
        "AMD",
        "Intel",
        "",
        "",
    ]
