"""The machine a result is computed on: the instruction-set cap every job takes from the config,
and what a run records of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from workflow.environment import ISA_VARIABLES, IsaConflict, isa_caps, run_machine
from workflow.reference import machine_columns

AVX2 = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}


def test_avx2_caps_aten_onednn_and_mkl() -> None:
    assert isa_caps("avx2", {}) == AVX2
    # Applying them twice (Snakemake parses the workflow again inside a cluster job) is fine.
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


def _machine_in_fresh_process(environ: dict[str, str]) -> dict:
    code = "import json, workflow.environment as e; print(json.dumps(e.run_machine()))"
    clean = {k: v for k, v in os.environ.items() if k not in ISA_VARIABLES}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **environ},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_a_run_records_the_capability_torch_took_under_the_caps() -> None:
    plain, capped = _machine_in_fresh_process({}), _machine_in_fresh_process(AVX2)
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
