"""The machine a result is computed on: the instruction-set cap, OpenBLAS kernels and MKL code
every job takes from the config (workflow.machine), and what a run records of it."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from workflow.machine.caps import IsaConflict, blas_caps, isa_caps
from workflow.machine.environment import (
    ISA_VARIABLES,
    cpu_flags,
    cpu_model,
    mkl_answer,
    run_machine,
)
from workflow.machine.mkl import mkl_preload, shim
from workflow.reference.accumulate import mkl_code
from workflow.reference.tables import machine_columns

REPO = Path(__file__).resolve().parent.parent
LINUX_X86 = (platform.system(), platform.machine()) == ("Linux", "x86_64")

AVX2 = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}


def test_avx2_caps_aten_onednn_and_mkl() -> None:
    assert isa_caps("avx2", {}) == AVX2
    # Applying them twice (a job started from an environment that has them) is fine.
    assert isa_caps("avx2", {**AVX2, "PATH": "/bin"}) == AVX2


@pytest.mark.parametrize(
    "leftover",
    [{"ATEN_CPU_CAPABILITY": "avx512"}, {"MKL_CBWR": "AUTO"}, {"DNNL_MAX_CPU_ISA": "ALL"}],
)
def test_a_cap_refuses_any_other_instruction_set_variable(leftover: dict) -> None:
    ((name, value),) = leftover.items()
    with pytest.raises(IsaConflict, match=f"environment has {name}={value}: unset it"):
        isa_caps("avx2", leftover)


def test_no_cap_leaves_the_environment_to_decide() -> None:
    assert isa_caps(None, {"ATEN_CPU_CAPABILITY": "default"}) == {}


def test_every_capped_variable_is_one_a_run_records() -> None:
    assert set(AVX2) <= set(ISA_VARIABLES)


HASWELL = {"OPENBLAS_CORETYPE": "Haswell"}


def test_avx2_pins_numpy_openblas_to_its_avx2_kernels_where_the_cpu_has_them() -> None:
    assert blas_caps("avx2", {}, ["avx", "avx2", "fma", "sse4_2"]) == HASWELL
    assert blas_caps("avx2", HASWELL, ["avx2", "fma"]) == HASWELL
    # Haswell's kernels would be illegal instructions on a CPU without AVX2 and FMA.
    assert blas_caps("avx2", {}, ["avx", "sse4_2"]) == {}
    assert blas_caps(None, {"OPENBLAS_CORETYPE": "SkylakeX"}, ["avx2", "fma"]) == {}


def test_the_blas_cap_refuses_another_openblas_core() -> None:
    with pytest.raises(IsaConflict, match="environment has OPENBLAS_CORETYPE=SkylakeX: unset"):
        blas_caps("avx2", {"OPENBLAS_CORETYPE": "SkylakeX"}, ["avx2", "fma"])


# Every variable a cap sets, kept out of the fresh processes below unless a test sets it.
CAPS = (*ISA_VARIABLES, "LD_PRELOAD", "OPENBLAS_CORETYPE")


def _stdout_of_fresh_process(code: str, environ: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in CAPS}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **environ},
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return out.stdout.strip()


def _job(machine: dict, torch_threads: int | None, then: str) -> str:
    """Python that sets up a job's machine as the adapters do, then runs ``then``."""
    return (
        "from workflow.machine import enter_job\n"
        f"enter_job({machine!r}, torch_threads={torch_threads!r})\n" + then
    )


def _openblas_core_in_fresh_process(machine: dict | None) -> str | None:
    code = "import json, workflow.machine.environment as e; print(json.dumps(e.openblas_core()))"
    return json.loads(_stdout_of_fresh_process(_job(machine, None, code) if machine else code, {}))


@pytest.mark.skipif(not LINUX_X86, reason="the cap applies to x86-64 CPUs with AVX2 and FMA")
def test_a_job_under_the_cap_runs_openblas_haswell_kernels() -> None:
    """The job's set-up reaches OpenBLAS: its kernels are Haswell's under the cap (measured on
    a Xeon whose own are SkylakeX's, and whose CKA bits then moved)."""
    if not blas_caps("avx2", {}, cpu_flags()):
        pytest.skip("this CPU lacks AVX2 or FMA")
    if _openblas_core_in_fresh_process(None) is None:
        pytest.skip("this numpy does not bundle OpenBLAS")
    assert _openblas_core_in_fresh_process({"cpu_isa": "avx2", "mkl_cpu": None}) == "Haswell"


def _machine_in_fresh_process(machine: dict | None, environ: dict | None = None) -> dict:
    """A run's record of its machine in a fresh process, after one MKL product; ``machine``:
    set up as a job, None: not at all."""
    code = (
        "import json, torch, workflow.machine.environment as e\n"
        "torch.nn.functional.linear(torch.ones(2, 2), torch.ones(2, 2))\n"
        "print(json.dumps(e.run_machine()))\n"
    )
    if machine is not None:
        code = _job(machine, 1, code)
    return json.loads(_stdout_of_fresh_process(code, environ or {}))


def test_a_run_records_the_capability_torch_took_under_the_caps() -> None:
    plain = _machine_in_fresh_process(None)
    capped = _machine_in_fresh_process({"cpu_isa": "avx2", "mkl_cpu": None})
    assert plain["isa_overrides"] == {} and capped["isa_overrides"] == AVX2
    assert plain["cpu_model"] == capped["cpu_model"] and plain["cpu_flags"] == capped["cpu_flags"]
    if "avx2" in plain["cpu_flags"]:
        assert capped["torch_cpu_capability"] == "AVX2"


def test_runs_csv_shows_the_machine_or_nothing_for_older_records() -> None:
    machine = {**run_machine(), "isa_overrides": AVX2}
    columns = machine_columns(machine)
    assert columns["isa_overrides"] == (
        "ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2"
    )
    assert machine_columns({**machine, "isa_overrides": {}})["isa_overrides"] == "none"
    assert set(machine_columns(None).values()) == {""}


@pytest.mark.skipif(not LINUX_X86, reason="MKL is steered on Linux x86-64 only")
def test_a_preload_puts_the_shim_before_other_libraries_and_only_once() -> None:
    """For processes started outside the workflow (the benchmarks' workers)."""
    wanted = mkl_preload("zen", {"LD_PRELOAD": "/opt/other.so"})
    assert wanted == {"LD_PRELOAD": f"{shim()} /opt/other.so"}
    assert mkl_preload("zen", wanted) == wanted
    # The loader's list may be colon-separated too.
    listed = f"/opt/other.so:{shim()}"
    assert mkl_preload("zen", {"LD_PRELOAD": listed}) == {"LD_PRELOAD": f"/opt/other.so {shim()}"}


def test_no_mkl_choice_preloads_nothing() -> None:
    assert mkl_preload(None, {"LD_PRELOAD": "/opt/other.so"}) == {}


@pytest.mark.skipif(not LINUX_X86, reason="MKL is steered on Linux x86-64 only")
def test_a_run_records_the_mkl_code_it_ran() -> None:
    """MKL's own choice is its CPU vendor's code; in a job set up for zen, Zen's on any CPU."""
    plain = _machine_in_fresh_process(None)
    if plain["mkl_cpu"] is None:
        pytest.skip("this torch has no MKL")
    assert plain["mkl_cpu"] == (mkl_code(cpu_model(), None) or "other")
    assert _machine_in_fresh_process({"cpu_isa": "avx2", "mkl_cpu": "zen"})["mkl_cpu"] == "zen"


# The bits of one MKL matrix product (fc1's shape).
PRODUCT = (
    "import hashlib, torch; g = torch.Generator().manual_seed(0); "
    "x, w = torch.randn(64, 800, generator=g), torch.randn(100, 800, generator=g); "
    "print(hashlib.sha256(torch.nn.functional.linear(x, w).numpy().tobytes()).hexdigest())"
)


def _mkl_digest_in_job(mkl_cpu: str | None) -> str:
    machine = {"cpu_isa": "avx2", "mkl_cpu": mkl_cpu}
    return _stdout_of_fresh_process(_job(machine, 1, PRODUCT), {})


@pytest.mark.skipif(not LINUX_X86, reason="MKL is steered on Linux x86-64 only")
def test_the_shim_changes_the_bits_mkl_computes_unless_it_ran_zen_code_already() -> None:
    """What the record says is what MKL did: the shim moves a product's bits exactly when
    MKL's own choice was not Zen's code (measured on an Intel Xeon: fc1's bits moved)."""
    own = _machine_in_fresh_process({"cpu_isa": "avx2", "mkl_cpu": None})["mkl_cpu"]
    if own is None:
        pytest.skip("this torch has no MKL")
    assert (_mkl_digest_in_job(None) == _mkl_digest_in_job("zen")) == (own == "zen")


@pytest.mark.skipif(not LINUX_X86, reason="MKL is steered on Linux x86-64 only")
def test_a_job_computes_the_bits_of_a_process_started_under_the_preload() -> None:
    """The job loads the shim itself, before torch; jobs used to get it through LD_PRELOAD
    from the Snakemake process, and their bits are the reference's: the same bits."""
    started = {**AVX2, **mkl_preload("zen", {}), "OMP_NUM_THREADS": "1"}
    assert _stdout_of_fresh_process(PRODUCT, started) == _mkl_digest_in_job("zen")


def _answers(intel: bool, zen: bool, asked: int | None = None) -> SimpleNamespace:
    counter = {} if asked is None else {"histres_mkl_asked": lambda: asked}
    return SimpleNamespace(
        mkl_serv_intel_cpu_true=lambda: intel, mkl_serv_cpuiszen=lambda: zen, **counter
    )


def test_the_mkl_answer_is_the_shims_only_where_mkl_asked_it() -> None:
    shim_asked, own_intel = _answers(False, True, asked=2), _answers(True, False)
    assert mkl_answer(shim_asked, [own_intel]) == "zen"
    # Loaded but never asked (MKL bound its own queries), or no shim at all: MKL's own choice.
    assert mkl_answer(_answers(False, True, asked=0), [own_intel]) == "intel"
    assert mkl_answer(SimpleNamespace(), [own_intel]) == "intel"
    assert mkl_answer(SimpleNamespace(), [_answers(False, False)]) == "other"


def test_a_torch_without_mkl_records_none_even_with_the_shim() -> None:
    assert mkl_answer(_answers(False, True, asked=1), [SimpleNamespace()]) is None
    assert mkl_answer(_answers(False, True, asked=1), []) is None


def test_runs_csv_shows_the_mkl_code_or_nothing_for_older_records() -> None:
    machine = {**run_machine(), "isa_overrides": {}}
    assert machine_columns({**machine, "mkl_cpu": "zen"})["mkl_cpu"] == "zen"
    assert machine_columns({k: v for k, v in machine.items() if k != "mkl_cpu"})["mkl_cpu"] == ""
