"""A reference keeps each finished pair's results, tied to the digests of the checkpoints they
read, and puts them back into a tree whose code and config would make them again."""

from __future__ import annotations

from pathlib import Path

from tests.support.exports import (
    COMPARISON,
    FULL,
    GROUP,
    TRACE,
    export_tree,
    fake_comparison,
    fake_trace,
    fake_tree,
    trained_tree,
)
from workflow import lineage, manifest
from workflow.artifacts import read_json, write_json
from workflow.provenance import REPO_ROOT
from workflow.reference import pair_results


def _comparisons(out: Path) -> list[str]:
    return sorted(r.relative.as_posix() for r in pair_results.in_reference(out))


def test_export_keeps_each_pair_with_its_provenance(tmp_path) -> None:
    out = tmp_path / "reference"
    prov = export_tree(trained_tree(tmp_path / "tree", [101]), out, "first", config=FULL)
    [result] = pair_results.in_reference(out)
    assert pair_results.provenance_of(result.in_reference(out)).is_file()
    assert (prov["carried_over_results"], prov["dropped_earlier_results"]) == (0, 0)


def test_pairs_of_a_lost_tree_are_carried_over(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101, 202]), out, "first", config=FULL)
    prov = export_tree(trained_tree(tmp_path / "new", [202]), out, "second", config=FULL)
    assert prov["carried_over_results"] == 1
    assert _comparisons(out) == [
        f"{GROUP.removeprefix('runs/')}/seed~{seed}/ABC_vs_BAC/base.csv" for seed in (101, 202)
    ]


def test_a_tree_restored_from_an_older_export_changes_no_record_of_the_folder(tmp_path) -> None:
    """The same table, read from the same checkpoints, under another code's record (what a
    tree restored from an older export holds): the folder keeps its own record."""
    out, tree = tmp_path / "reference", trained_tree(tmp_path / "tree", [101])
    export_tree(tree, out, "first", config=FULL)
    [result] = pair_results.in_reference(out)
    record = pair_results.provenance_of(result.in_reference(out))
    kept = record.read_bytes()
    older = pair_results.provenance_of(result.in_tree(tree[0]))
    write_json(older, {**read_json(older), "code_version": "0123456789abcdef"})
    export_tree(tree, out, "second", config=FULL)
    assert record.read_bytes() == kept
    # Another table is another result: the tree's, with its record.
    table = result.in_tree(tree[0])
    table.write_text(table.read_text().replace("0.1", "0.2"))
    export_tree(tree, out, "third", config=FULL)
    assert result.in_reference(out).read_bytes() == table.read_bytes()
    assert read_json(record)["code_version"] == "0123456789abcdef"


def test_a_pair_that_read_other_bits_than_the_reference_lists_is_dropped(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101]), out, "first", config=FULL)
    [result] = pair_results.in_reference(out)
    prov_path = pair_results.provenance_of(result.in_reference(out))
    prov = read_json(prov_path)
    prov["params_digests"]["second"]["25"] = "XX"
    write_json(prov_path, prov)
    manifest.seal(out)  # as an export would have written it
    summary = export_tree(fake_tree(tmp_path / "empty", {}), out, "second", config=FULL)
    assert (summary["carried_over_results"], summary["dropped_earlier_results"]) == (0, 1)
    assert _comparisons(out) == []


def test_restore_puts_current_pairs_into_a_new_tree(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101, 202]), out, "first", config=FULL)
    results = tmp_path / "fresh" / "results" / "tiny"
    fake_comparison(results, 202)  # the new tree made this one itself: left alone
    done = pair_results.restore(out, results, FULL)
    assert (done.restored, done.present, done.refused) == (1, 1, {})
    restored = results / COMPARISON.format(seed=101)
    assert restored.read_bytes() == (out / "comparisons" / COMPARISON.format(seed=101)
                                     .removeprefix("runs/")).read_bytes()  # fmt: skip
    assert pair_results.provenance_of(restored).is_file()


def test_restore_refuses_what_this_config_or_code_would_make_otherwise(tmp_path) -> None:
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101]), out, "first", config=FULL)
    results = tmp_path / "fresh" / "results" / "tiny"
    other_dumps = {**FULL, "evaluation": {"batch_size": 20}}
    done = pair_results.restore(out, results, other_dumps)
    assert (done.restored, done.refused) == (0, {"its config is not the current one": 1})
    other_grid = {**FULL, "training": {**FULL["training"], "checkpoints": [0, 10, 25]}}
    done = pair_results.restore(out, results, other_grid)
    assert done.refused == {"its checkpoints are not the config's": 1}
    [result] = pair_results.in_reference(out)
    prov_path = pair_results.provenance_of(result.in_reference(out))
    write_json(prov_path, read_json(prov_path) | {"code_version": "0123456789abcdef"})
    manifest.seal(out)  # as an export under that code would have written it
    done = pair_results.restore(out, results, FULL)
    assert done.refused == {"its code_version is not the current one": 1}
    assert not (results / "runs").exists()


def test_a_search_trace_is_kept_carried_and_restored(tmp_path) -> None:
    """The traces read no checkpoint: a new machine gets them back instead of searching again."""
    out, tree = tmp_path / "reference", fake_tree(tmp_path / "lost", {})
    fake_trace(tree[0], 101)
    export_tree(tree, out, "first", config=FULL)
    assert [r.kind for r in pair_results.in_reference(out)] == ["lr_search"]
    assert (
        export_tree(fake_tree(tmp_path / "new", {}), out, "second", config=FULL)[
            "carried_over_results"
        ]
        == 1
    )
    results = tmp_path / "fresh" / "results" / "tiny"
    done = pair_results.restore(out, results, FULL)
    assert (done.restored, done.refused) == (1, {})
    restored = results / TRACE.format(seed=101)
    assert restored.read_bytes() == (out / "lr_search/lr~0.05/seed~101/order~ABC.json").read_bytes()
    assert pair_results.restore(out, results, FULL).present == 1


def test_a_trace_of_other_search_settings_is_not_restored(tmp_path) -> None:
    out, tree = tmp_path / "reference", fake_tree(tmp_path / "lost", {})
    fake_trace(tree[0], 101)
    export_tree(tree, out, "first", config=FULL)
    results = tmp_path / "fresh" / "results" / "tiny"
    longer = {**FULL, "studies": {"activation": {"trace_updates": 50}}}
    done = pair_results.restore(out, results, longer)
    assert done.refused == {"its search settings are not the config's": 1}
    other_model = {**FULL, "model": {"activation": "relu", "width": 16}}
    done = pair_results.restore(out, results, other_model)
    assert done.refused == {"its config is not the current one": 1}
    assert not results.exists()


def test_an_export_drops_the_earlier_results_this_code_would_not_make(tmp_path) -> None:
    """Results of superseded code never count as done: the study computes them anew."""
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101, 202]), out, "first", config=FULL)
    [old, _] = pair_results.in_reference(out)
    prov_path = pair_results.provenance_of(old.in_reference(out))
    write_json(prov_path, read_json(prov_path) | {"code_version": "0123456789abcdef"})
    manifest.seal(out)  # as an export under that code would have written it
    prov = export_tree(fake_tree(tmp_path / "empty", {}), out, "second", config=FULL)
    assert (prov["carried_over_results"], prov["dropped_earlier_results"]) == (1, 1)
    assert old not in pair_results.in_reference(out)


def test_every_code_version_the_references_hold_is_one_this_code_reproduces():
    """An edit of a module a pair result's rule imports changes its code version: list the
    earlier version (python -m workflow.lineage) once the small config's bit-for-bit test has
    passed, or every restore would refuse the reference's results and retrain their runs."""
    folders = sorted(p for p in (REPO_ROOT / "reference").iterdir() if p.is_dir())
    found = pair_results.code_versions(folders)
    assert {adapter for adapter, _ in found} == {"compare_runs", "train_probes", "trace_stability"}
    stale = sorted((a, v) for a, v in found if v not in lineage.accepted(a))
    assert not stale, f"run python -m workflow.lineage after checking the bits: {stale}"


def test_a_listed_earlier_version_is_accepted_and_recorded_once(tmp_path):
    path = tmp_path / "reproduced.json"
    assert lineage.accepted("compare_runs", path) == {lineage.current("compare_runs")}
    added = lineage.record([("compare_runs", "0" * 16), ("compare_runs", "0" * 16)], "why", path)
    assert added == [("compare_runs", "0" * 16)]
    assert "0" * 16 in lineage.accepted("compare_runs", path)
    assert lineage.record([("compare_runs", "0" * 16)], "why", path) == []
