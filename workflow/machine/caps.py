"""The variables that cap a job's code path at ``machine.cpu_isa``.

    os.environ.update(job_caps(machine, os.environ))   # in a job, before numpy and torch load

PyTorch's CPU code (ATen, oneDNN, MKL) picks its vector instruction set from the CPU, and so
does numpy's OpenBLAS; each reads its variable once, when it loads or first runs. ``avx2`` caps
ATen, oneDNN and MKL at AVX2, and pins OpenBLAS to its Haswell kernels (the AVX2 and FMA code
the reference's EPYC ran) on every CPU that has both: on an Intel Xeon with AVX-512, OpenBLAS
otherwise runs its SkylakeX kernels, and the CKA of seed 101's main pair came out one or two
units in the last place away from the EPYC's values (at most 1.2e-15; 3 December 2026), while
under ``OPENBLAS_CORETYPE=Haswell`` every value was the EPYC's, bit for bit. A CPU without AVX2
and FMA runs its own narrower OpenBLAS kernels, as ATen and oneDNN do under the cap. A variable
the environment already sets otherwise is refused, never overridden: one left over in a shell
must not change silently which code path the results come from. Pure: nothing here sets them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workflow.machine.environment import ISA_VARIABLES, cpu_flags

# machine.cpu_isa -> the variables that cap ATen, oneDNN and MKL at that instruction set.
ISA_CAPS = {
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    },
}
# machine.cpu_isa -> (the CPU flags the OpenBLAS kernels need, the variables that select them).
BLAS_CAPS = {"avx2": (("avx2", "fma"), {"OPENBLAS_CORETYPE": "Haswell"})}


class IsaConflict(ValueError):
    """The environment already caps the instruction set otherwise than the config asks."""


def job_caps(machine: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """Every variable a job needs for ``machine.cpu_isa`` on this CPU."""
    cpu_isa = machine["cpu_isa"]
    return {**isa_caps(cpu_isa, environ), **blas_caps(cpu_isa, environ, cpu_flags())}


def isa_caps(cpu_isa: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that cap ATen, oneDNN and MKL; None caps nothing and leaves the
    environment to decide, as every run records."""
    if cpu_isa is None:
        return {}
    wanted = ISA_CAPS[cpu_isa]
    refuse_clashes(cpu_isa, wanted, ISA_VARIABLES, environ)
    return dict(wanted)


def blas_caps(
    cpu_isa: str | None, environ: Mapping[str, str], flags: Iterable[str]
) -> dict[str, str]:
    """The variables that pin numpy's OpenBLAS, on a CPU with ``flags``."""
    if cpu_isa is None:
        return {}
    needs, wanted = BLAS_CAPS[cpu_isa]
    if not set(needs) <= set(flags):
        return {}
    refuse_clashes(cpu_isa, wanted, wanted, environ)
    return dict(wanted)


def refuse_clashes(
    cpu_isa: str, wanted: Mapping[str, str], names: Iterable[str], environ: Mapping[str, str]
) -> None:
    """Refuses a variable of ``names`` that ``environ`` sets otherwise than ``wanted``."""
    clashes = [
        f"{name}={environ[name]}"
        for name in names
        if name in environ and environ[name] != wanted.get(name)
    ]
    if clashes:
        raise IsaConflict(
            f"machine.cpu_isa {cpu_isa} sets "
            + " ".join(f"{name}={value}" for name, value in wanted.items())
            + ", but the environment has "
            + ", ".join(clashes)
            + ": unset it, or set machine.cpu_isa to null to let the environment decide"
        )
