"""Verification against a reference folder: the comparison on hand-made tables, the Makefile
entry point, and `make verify`'s target end to end on the small config."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support.trees import MAIN_RUN, copy_repo, failing_snakemake, snakemake
from workflow.config import load_config
from workflow.groups import main_group
from workflow.reference.digests import training_digest
from workflow.reference.tables import IDENTITY
from workflow.reference.verify import (
    IDENTICAL_ENVIRONMENT,
    ConfigMismatch,
    VerificationFailed,
    check_config,
    check_runs_present,
    compare,
    environment_differences,
    first_difference,
    missing_runs,
    parse_seeds,
    report,
    runs_to_retrain,
    select_checkpoints,
    verdict,
    verification_inputs,
)

REPO = Path(__file__).resolve().parent.parent
CONFIG = {
    "name": "tiny",
    "model": {"activation": "relu"},
    "training": {"lr": 0.05, "optimizer_at_common": "reset"},
}
GROUP = main_group(CONFIG)
MAIN = {**GROUP, "seed": 101}


def digest(*parts) -> str:
    return "-".join(map(str, parts))


def checkpoints(run: dict, segment: str, updates, diverged_from: int | None = None):
    """Reference rows of one run segment; from ``diverged_from`` on, diverged placeholders."""
    rows = []
    for update in updates:
        ok = diverged_from is None or update < diverged_from
        rows.append(
            {
                **run,
                "segment": segment,
                "update": update,
                "status": "ok" if ok else "diverged",
                "params_digest": digest(run["order"], run["stream"], segment, update) if ok else "",
            }
        )
    return rows


def reference_table() -> pd.DataFrame:
    """Seed 101's main runs (ABC extended), a noise-floor replicate, and seed 202's ABC."""
    rows = []
    for order in ("ABC", "BAC"):
        rows += checkpoints({**MAIN, "order": order}, "base", [0, 25, 50])
    rows += checkpoints({**MAIN, "order": "ABC"}, "extended", [100])
    rows += checkpoints({**MAIN, "stream": 1, "order": "ABC"}, "base", [0, 25, 50])
    rows += checkpoints({**MAIN, "seed": 202, "order": "ABC"}, "base", [0, 25, 50])
    return pd.DataFrame(rows)[[*IDENTITY, "segment", "update", "status", "params_digest"]]


def reruns_of(expected: pd.DataFrame) -> pd.DataFrame:
    """A rerun table that reproduces ``expected`` exactly."""
    return expected.rename(
        columns={"params_digest": "rerun_digest", "status": "rerun_status"}
    ).copy()


def through_csv(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The table as the adapters see it: written and read back (empty digests become NaN)."""
    table.to_csv(path, index=False)
    return pd.read_csv(path)


ENV = {
    "torch_threads": 1,
    "kernels": "fused",
    "device": "cpu",
    "memory_format": "channels_last",
    "packages": {"python": "3.11.7", "torch": "2.5.1", "numpy": "2.1.3"},
    "cpu_model": "AMD EPYC 9654",
    "cpu_flags": ["avx", "avx2", "avx512f", "fma", "sse4_2"],
    "torch_cpu_capability": "AVX512",
    "platform": "Linux-x86_64",
}


def test_seeds_wildcard_parses():
    assert parse_seeds("101") == [101]
    assert parse_seeds("101,202") == [101, 202]


def test_main_scope_selects_the_main_group_base_segment_of_the_seeds():
    selected = select_checkpoints(reference_table(), [101], "main", GROUP)
    assert set(selected["order"]) == {"ABC", "BAC"}
    assert set(selected["segment"]) == {"base"}
    assert set(selected["stream"]) == {0} and set(selected["seed"]) == {101}
    assert len(selected) == 6
    assert runs_to_retrain(selected, "main") == [
        ({**MAIN, "order": "ABC"}, "base"),
        ({**MAIN, "order": "BAC"}, "base"),
    ]


def test_all_scope_selects_every_run_and_segment_of_the_seeds():
    selected = select_checkpoints(reference_table(), [101], "all", GROUP)
    assert len(selected) == 3 + 3 + 1 + 3
    assert set(selected["stream"]) == {0, 1}
    through = {(run["order"], run["stream"]): seg for run, seg in runs_to_retrain(selected, "all")}
    # Only the run with an extended segment is retrained through it.
    assert through == {("ABC", 0): "extended", ("BAC", 0): "base", ("ABC", 1): "base"}
    both = select_checkpoints(reference_table(), [101, 202], "all", GROUP)
    assert set(both["seed"]) == {101, 202}


def test_unknown_scope_is_refused():
    with pytest.raises(ValueError, match="scope"):
        select_checkpoints(reference_table(), [101], "everything", GROUP)


def test_runs_missing_from_the_reference_are_named():
    selected = select_checkpoints(reference_table(), [101, 202, 303], "main", GROUP)
    missing = missing_runs(selected, [101, 202, 303], GROUP)
    assert [(run["seed"], run["order"]) for run in missing] == [
        (202, "BAC"),
        (303, "ABC"),
        (303, "BAC"),
    ]
    with pytest.raises(VerificationFailed, match="seed~202/order~BAC"):
        check_runs_present(missing, "reference/tiny")
    check_runs_present(missing_runs(selected, [101], GROUP), "reference/tiny")


def test_identical_reruns_match_every_checkpoint(tmp_path):
    expected = select_checkpoints(reference_table(), [101], "all", GROUP)
    table = compare(expected, through_csv(reruns_of(expected), tmp_path / "reruns.csv"))
    assert table["identical"].all() and len(table) == 10
    assert first_difference(table) is None
    text = report(table, [])
    assert "10/10 checkpoints match the reference" in text
    verdict(table, "reference/tiny")


def test_reruns_of_default_and_variant_runs_match_together():
    """A default run's rerun has no variant column; concatenated with a variant's, its rows
    read NaN there, and must still meet their reference rows (SCOPE=all with sensitivity)."""
    variant = {**MAIN, "variant": "raw_input", "order": "ABC"}
    expected = pd.concat(
        [
            select_checkpoints(reference_table(), [101], "main", GROUP),
            pd.DataFrame(checkpoints(variant, "base", [0, 25, 50])),
        ],
        ignore_index=True,
    )
    reruns = reruns_of(expected)
    default_rows = reruns["variant"] == "default"
    table = compare(
        expected,
        pd.concat(
            [reruns[default_rows].drop(columns="variant"), reruns[~default_rows]],
            ignore_index=True,
        ),
    )
    assert table["identical"].all() and len(table) == 9


def test_the_first_differing_checkpoint_is_named_with_both_digests_and_the_count():
    expected = select_checkpoints(reference_table(), [101], "main", GROUP)
    reruns = reruns_of(expected)
    # Two differences; the earlier one in reference order (ABC before BAC) is the first.
    for order, update in (("BAC", 25), ("ABC", 50)):
        at = (reruns["order"] == order) & (reruns["update"] == update)
        reruns.loc[at, "rerun_digest"] = f"changed-{order}-{update}"
    table = compare(expected, reruns)
    assert (~table["identical"]).sum() == 2
    first = first_difference(table)
    assert (first["order"], first["update"]) == ("ABC", 50)
    text = report(table, [])
    assert "2 of 6 checkpoints differ from the reference" in text
    assert (
        "protocol~class_split/variant~default/act~relu/lr~0.05/optim~reset/stream~0/seed~101/order~ABC"
        in text
    )
    assert "base segment, update 50" in text
    assert "reference ABC-0-base-50 (ok)" in text
    assert "rerun     changed-ABC-50 (ok)" in text
    assert IDENTICAL_ENVIRONMENT in text
    with pytest.raises(VerificationFailed, match="2 of 6 checkpoints differ"):
        verdict(table, "reference/tiny")


def test_a_diverged_checkpoint_matches_only_a_rerun_that_never_reached_it(tmp_path):
    run = {**MAIN, "order": "ABC"}
    expected = pd.DataFrame(checkpoints(run, "base", [0, 25, 50], diverged_from=25))
    same = through_csv(reruns_of(expected), tmp_path / "same.csv")
    assert compare(expected, same)["identical"].all()
    # The rerun got further than the reference: a changed result, not a match.
    further = reruns_of(pd.DataFrame(checkpoints(run, "base", [0, 25, 50])))
    assert compare(expected, further)["identical"].tolist() == [True, False, False]
    # The rerun diverged where the reference did not.
    diverged = compare(pd.DataFrame(checkpoints(run, "base", [0, 25, 50])), same)
    assert diverged["identical"].tolist() == [True, False, False]


def test_a_checkpoint_the_reruns_lack_never_matches():
    expected = select_checkpoints(reference_table(), [101], "main", GROUP)
    reruns = reruns_of(expected).iloc[:-1]
    table = compare(expected, reruns)
    assert table["identical"].tolist() == [True] * 5 + [False]
    assert table["rerun_status"].iloc[-1] == "missing"
    assert "(missing)" in report(table, [])


def test_identical_environments_have_no_differences():
    assert environment_differences(ENV, dict(ENV)) == []


def test_environment_differences_name_every_changed_key():
    here = {
        **ENV,
        "torch_threads": 2,
        "kernels": "torch",
        "memory_format": "contiguous_format",
        "packages": {**ENV["packages"], "torch": "2.6.0", "scipy": "1.14.1"},
        "cpu_model": "Intel Xeon",
        "cpu_flags": ["avx", "avx2", "amx_tile", "fma", "sse4_2"],
        "torch_cpu_capability": "AVX2",
    }
    lines = environment_differences(ENV, here)
    assert "torch threads: reference 1, here 2" in lines
    assert "kernels: reference fused, here torch" in lines
    assert "memory format: reference channels_last, here contiguous_format" in lines
    assert "package torch: reference 2.5.1, here 2.6.0" in lines
    assert "package scipy: reference None, here 1.14.1" in lines
    assert "CPU model: reference AMD EPYC 9654, here Intel Xeon" in lines
    assert "CPU ISA flags: missing here avx512f; added here amx_tile" in lines
    assert "torch CPU capability: reference AVX512, here AVX2" in lines
    assert len(lines) == 8


def test_a_mismatch_report_lists_the_environment_differences():
    expected = select_checkpoints(reference_table(), [101], "main", GROUP)
    reruns = reruns_of(expected)
    reruns.loc[0, "rerun_digest"] = "other"
    lines = environment_differences(ENV, {**ENV, "device": "cuda"})
    text = report(compare(expected, reruns), lines)
    assert "environment differences from the reference's:\n  device: reference cpu" in text
    assert IDENTICAL_ENVIRONMENT not in text


def _provenance(config: dict) -> dict:
    return {"training_config_digest": training_digest(config), "config": config}


def test_the_same_training_config_passes_the_config_check():
    other = {**CONFIG, "statistics": {"bootstrap_seed": 1}, "extra": 1}
    check_config(_provenance(CONFIG), other)  # keys that train nothing may differ


def test_another_training_config_is_refused_naming_both_digests_and_the_keys():
    other = {**CONFIG, "training": {**CONFIG["training"], "lr": 0.04}, "extra": 1}
    with pytest.raises(ConfigMismatch) as raised:
        check_config(_provenance(CONFIG), other)
    message = str(raised.value)
    assert training_digest(CONFIG) in message and training_digest(other) in message
    assert "keys that differ: training.lr." in message


def test_verification_library_and_comparison_adapter_run_without_torch():
    """The comparison is a torch-free stage (tests/test_boundaries.py's rule for adapters)."""
    code = (
        "import sys\nimport workflow.reference.verify, workflow.reference.export, "
        "workflow.artifacts, workflow.joblog\nassert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    source = (REPO / "workflow/scripts/verify_reference.py").read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith("from ")}
    assert imports <= {
        "workflow.artifacts",
        "workflow.groups",
        "workflow.joblog",
        "workflow.reference.tables",
        "workflow.reference.verify",
        "pathlib",
    }


def write_reference(folder: Path, config: dict) -> str:
    folder.mkdir(parents=True)
    (folder / "provenance.json").write_text(json.dumps(_provenance(config)))
    reference_table().to_csv(folder / "checkpoints.csv", index=False)
    return str(folder)


PATTERN = "v/{protocol}/{act}/{lr}/{optim}/{stream}/{seed}/{order}/{through}"


def test_verification_reads_the_reruns_the_scope_selects(tmp_path):
    reference = write_reference(tmp_path / "ref", CONFIG)
    inputs = verification_inputs(reference, CONFIG, "all", "101", PATTERN)
    assert inputs["checkpoints"] == f"{reference}/checkpoints.csv"
    assert inputs["digests"] == [
        "v/class_split/relu/0.05/reset/0/101/ABC/extended.csv",
        "v/class_split/relu/0.05/reset/0/101/BAC/base.csv",
        "v/class_split/relu/0.05/reset/1/101/ABC/base.csv",
    ]
    assert inputs["environments"][0].endswith("ABC/extended.json")


def test_nothing_is_retrained_when_nothing_can_match(tmp_path):
    reference = write_reference(tmp_path / "ref", CONFIG)
    files = {"provenance", "checkpoints"}
    other = {**CONFIG, "training": {**CONFIG["training"], "lr": 0.04}}
    assert set(verification_inputs(reference, other, "main", "101", PATTERN)) == files
    # Seed 202 has no BAC run in the reference.
    assert set(verification_inputs(reference, CONFIG, "main", "202", PATTERN)) == files
    absent = str(tmp_path / "none")
    assert set(verification_inputs(absent, CONFIG, "main", "101", PATTERN)) == files


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-n", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )


def test_make_verify_runs_the_verify_target():
    result = make("verify", "SEEDS=101,202", "SCOPE=all", "CONFIG=config/smoke.yaml")
    assert result.returncode == 0, result.stderr
    command = " ".join(result.stdout.replace("\\\n", " ").split())
    assert "snakemake --cores 2 'results/smoke/verify/all/seeds~101,202.csv'" in command
    assert "--configfile 'config/smoke.yaml'" in command
    default = make("verify", "SEEDS=101")
    assert "'results/verify/main/seeds~101.csv'" in default.stdout
    assert "--configfile" not in default.stdout


def test_make_verify_without_seeds_says_so():
    result = make("verify")
    assert result.returncode != 0
    assert "make verify needs SEEDS" in result.stderr


# The end-to-end test trains two tiny runs, then retrains them: about 2 minutes on 2 cores.
SEED_101 = [f"{MAIN_RUN}/seed~101/order~{order}/run.json" for order in ("ABC", "BAC")]
TARGET = "results/smoke/verify/main/seeds~101.csv"


@pytest.mark.workflow
def test_verify_passes_on_a_fresh_reference_and_names_a_tampered_checkpoint(tmp_path, mnist_copy):
    workdir = copy_repo(tmp_path, mnist=mnist_copy)
    smoke = ("--configfile", "config/smoke.yaml")
    snakemake(workdir, *SEED_101, *smoke)
    subprocess.run(
        [sys.executable, "-m", "workflow.reference", "export", *smoke],
        cwd=workdir,
        check=True,
        capture_output=True,
    )
    output = snakemake(workdir, TARGET, *smoke)
    assert "8/8 checkpoints match the reference" in output
    table = pd.read_csv(workdir / TARGET)
    assert len(table) == 8 and table["identical"].all()
    assert "8/8 checkpoints match" in (workdir / TARGET).with_suffix(".txt").read_text()

    # One digest changed in the reference: only the comparison reruns, and it fails naming it.
    reference = workdir / "reference" / "smoke" / "checkpoints.csv"
    rows = pd.read_csv(reference)
    at = (rows["order"] == "BAC") & (rows["update"] == 50)
    original = rows.loc[at, "params_digest"].item()
    rows.loc[at, "params_digest"] = "0" * 64
    rows.to_csv(reference, index=False)
    output = failing_snakemake(workdir, TARGET, *smoke)
    assert "verify_run" not in output.split("Job stats:")[1].split("\n\n")[0]
    log = (workdir / "logs/smoke/verify/main/seeds~101.log").read_text()
    for text in (output, log):
        assert "1 of 8 checkpoints differ from the reference" in text
        assert "seed~101/order~BAC" in text and "base segment, update 50" in text
        assert f"reference {'0' * 64}" in text and f"rerun     {original}" in text

    # Another training config: refused before any retraining, naming the keys that differ.
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["training"]["momentum"] = 0.5
    (workdir / "other.yaml").write_text(yaml.safe_dump(config))
    output = failing_snakemake(workdir, TARGET, "--configfile", "other.yaml")
    assert "Job stats" not in output or "verify_run" not in output.split("Job stats:")[1]
    log = (workdir / "logs/smoke/verify/main/seeds~101.log").read_text()
    assert "keys that differ: training.momentum." in log
    current = load_config([workdir / "config.yaml", workdir / "other.yaml"])
    assert training_digest(current) in log


def capped_capability(config: dict) -> str:
    """The capability torch dispatches to in a job of ``config`` (a fresh process, since the
    caps act when torch loads)."""
    from workflow.machine.caps import isa_caps

    caps = isa_caps(config["machine"]["cpu_isa"], os.environ)
    return subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        env={**os.environ, **caps},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.workflow
def test_the_committed_small_reference_verifies_on_this_machine(tmp_path, mnist_copy):
    """reference/smoke/ was trained by an earlier commit: retraining seed 101 with today's code
    must give the same bits wherever the machine takes the reference's code path (same torch,
    the capability torch dispatches to under machine.cpu_isa's caps, an AVX-512 CPU capped at
    AVX2 included, and the same MKL code: MKL runs other code on Intel CPUs than on AMD ones
    unless machine.mkl_cpu chooses it, reference/cross-checks/cpu-intel-amx-2026-12-02);
    elsewhere the report must name what differs."""
    from workflow.machine.environment import cpu_model
    from workflow.machine.mkl import steers_mkl
    from workflow.reference.accumulate import mkl_code

    workdir = copy_repo(tmp_path, mnist=mnist_copy)
    shutil.copytree(REPO / "reference" / "smoke", workdir / "reference" / "smoke")
    provenance = json.loads((workdir / "reference/smoke/provenance.json").read_text())
    env = provenance["environment"]
    config = load_config([REPO / "config.yaml", REPO / "config/smoke.yaml"])
    chosen = config["machine"]["mkl_cpu"]
    jobs_mkl = chosen if steers_mkl(chosen) else mkl_code(cpu_model(), None)
    import torch

    same_path = (
        env["torch_cpu_capability"] == capped_capability(config)
        and env["packages"]["torch"] == torch.__version__.split("+")[0]
        and jobs_mkl == mkl_code(env["cpu_model"], env.get("mkl_cpu"))
    )
    smoke = ("--configfile", "config/smoke.yaml")
    if same_path:
        output = snakemake(workdir, TARGET, *smoke)
        assert "8/8 checkpoints match the reference" in output
    else:
        output = failing_snakemake(workdir, TARGET, *smoke)
        assert "environment differences from the reference's" in output
