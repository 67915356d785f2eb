"""workflow.machine: each job sets up its own machine, first thing; parsing the workflow sets up
nothing; a job whose MKL would run other code than machine.mkl_cpu stops before it computes."""

from __future__ import annotations

import ast
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workflow.machine import job_identity, mkl
from workflow.machine.cbuild import record_path
from workflow.machine.environment import ISA_VARIABLES, machine_identity

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "workflow" / "scripts"
LINUX_X86 = (platform.system(), platform.machine()) == ("Linux", "x86_64")
ZEN = {"cpu_isa": "avx2", "mkl_cpu": "zen"}
# Variables a job's set-up reads or sets, kept out of the fresh processes below.
SET_UP = (*ISA_VARIABLES, "LD_PRELOAD", "OPENBLAS_CORETYPE")
# The adapters whose numbers depend on the machine: torch's (and MKL's), or numpy's OpenBLAS.
TORCH_JOBS = {
    "audit_run",
    "dump_representations",
    "trace_stability",
    "train_history",
    "train_probes",
    "verify_run",
}
BLAS_JOBS = {"compare_runs"}


def _fresh_job(code: str, cache: Path, **environ: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in SET_UP}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "HISTRES_KERNELS": str(cache), **environ},
        capture_output=True,
        text=True,
        cwd=REPO,
    )


# A training job in miniature: the set-up, then what MKL ran (a run's record).
TRAINING_JOB = (
    "from workflow.machine import enter_job\n"
    f"enter_job({ZEN!r}, torch_threads=1)\n"
    "from workflow.machine.environment import run_machine\n"
    "print('trained with', run_machine()['mkl_cpu'])\n"
)


@pytest.fixture
def built_shim(tmp_path, monkeypatch) -> Path:
    """The shim, built into an empty cache folder."""
    if not LINUX_X86 or shutil.which(os.environ.get("CC") or "cc") is None:
        pytest.skip("the shim is built on Linux x86-64, with a C compiler")
    monkeypatch.setenv("HISTRES_KERNELS", str(tmp_path / "cache"))
    return mkl.shim()


def test_a_job_set_up_for_zen_runs_mkls_zen_code(built_shim) -> None:
    done = _fresh_job(TRAINING_JOB, built_shim.parent)
    assert done.returncode == 0, done.stderr
    if "trained with None" in done.stdout:
        pytest.skip("this torch has no MKL")
    assert "trained with zen" in done.stdout


def test_a_garbage_shim_is_built_anew_before_it_is_loaded(built_shim) -> None:
    """The loader would ignore a garbage preload ("cannot be preloaded: ignored") and MKL
    would run its own code; the job finds that the file is not the one it built."""
    built_shim.write_bytes(b"garbage")
    done = _fresh_job(TRAINING_JOB, built_shim.parent)
    assert done.returncode == 0, done.stderr
    assert "differs from the library its build record names" in done.stderr
    assert built_shim.read_bytes().startswith(b"\x7fELF")
    assert "trained with zen" in done.stdout or "trained with None" in done.stdout


def _forge_record(library: Path) -> None:
    """Writes a record that vouches for ``library`` as it now is (an attacker's)."""
    import hashlib

    record = json.loads(record_path(library).read_text())
    record["library_sha256"] = hashlib.sha256(library.read_bytes()).hexdigest()
    record_path(library).write_text(json.dumps(record))


def test_a_garbage_shim_with_a_forged_record_stops_the_job(built_shim) -> None:
    built_shim.write_bytes(b"garbage")
    _forge_record(built_shim)
    done = _fresh_job(TRAINING_JOB, built_shim.parent)
    assert done.returncode != 0
    assert "does not load" in done.stderr and str(built_shim) in done.stderr
    assert "trained with" not in done.stdout


IMPOSTORS = {
    # Answers as an Intel CPU, and says MKL asked it.
    "intel": "int mkl_serv_intel_cpu_true(void) { return 1; }\n"
    "int mkl_serv_cpuiszen(void) { return 0; }\n"
    "int histres_mkl_asked(void) { return 1; }\n",
    # Not the shim at all.
    "unrelated": "int unrelated(void) { return 0; }\n",
}


@pytest.mark.parametrize("impostor", sorted(IMPOSTORS))
def test_a_shim_that_does_not_give_mkl_zens_answers_stops_the_job(
    built_shim, tmp_path, impostor
) -> None:
    source = tmp_path / "impostor.c"
    source.write_text(IMPOSTORS[impostor])
    cc = shutil.which(os.environ.get("CC") or "cc")
    subprocess.run([cc, "-shared", "-fPIC", str(source), "-o", str(built_shim)], check=True)
    _forge_record(built_shim)
    done = _fresh_job(TRAINING_JOB, built_shim.parent)
    if done.returncode == 0 and "trained with None" in done.stdout:
        pytest.skip("this torch has no MKL")
    assert done.returncode != 0
    assert "machine.mkl_cpu is zen, but MKL ran its" in done.stderr
    assert "trained with" not in done.stdout


def test_a_job_that_loads_numpy_before_its_set_up_is_refused(tmp_path) -> None:
    code = (
        "import numpy\n"
        "from workflow.machine import enter_job\n"
        "enter_job({'cpu_isa': 'avx2', 'mkl_cpu': None})\n"
    )
    done = _fresh_job(code, tmp_path)
    assert done.returncode != 0
    assert "enter_job must come before numpy is imported" in done.stderr


def _first_statements(adapter: Path) -> list[str]:
    body = ast.parse(adapter.read_text()).body[1:]  # after the docstring
    return [ast.unparse(node) for node in body[:3]]


@pytest.mark.parametrize("adapter", sorted(TORCH_JOBS | BLAS_JOBS))
def test_every_job_that_computes_sets_up_its_machine_first(adapter: str) -> None:
    first = _first_statements(SCRIPTS / f"{adapter}.py")
    assert first[0] == "from workflow.machine import enter_job"
    assert first[2].startswith("enter_job(smk.config['machine']")
    assert ("torch_threads=" in first[2]) == (adapter in TORCH_JOBS)


def test_every_adapter_that_reaches_the_network_or_cka_sets_up_its_machine() -> None:
    """A new adapter that computes with the model or with CKA must be in the lists above."""
    from workflow.provenance import library_files

    computing = {"model.py", "cka.py"}
    for adapter in SCRIPTS.glob("*.py"):
        reached = {path.name for path in library_files(adapter)}
        if reached & computing:
            assert adapter.stem in TORCH_JOBS | BLAS_JOBS, adapter.stem


def test_a_verification_knows_the_caps_its_job_will_set() -> None:
    identity = job_identity(ZEN, {})
    assert identity["isa_overrides"] == {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    }
    assert machine_identity({})["isa_overrides"] == {}
