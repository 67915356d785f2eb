"""Which kernels numpy's OpenBLAS runs in every job, capped with ``machine.cpu_isa``.

    os.environ.update(blas_caps("avx2", os.environ, cpu_flags()))   # before numpy loads

The stages after the dumps compute in float64 with numpy, and OpenBLAS picks its matrix
kernels by CPU. On an Intel Xeon with AVX-512 it runs its SkylakeX kernels, and the CKA of seed
101's main pair came out one or two units in the last place away from the AMD EPYC's values
(at most 1.2e-15; 3 December 2026); with ``OPENBLAS_CORETYPE=Haswell`` every value was the
EPYC's, bit for bit. ``avx2`` therefore pins OpenBLAS to its Haswell kernels, the AVX2 and FMA
code the reference's EPYC ran, on every CPU that has both. A CPU without them runs its own
narrower kernels, as ATen and oneDNN do under the cap. Torch-free; ``OPENBLAS_CORETYPE`` acts
when OpenBLAS loads, so it reaches the jobs, never a process that has already imported numpy.
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path

from workflow.environment import refuse_clashes

# machine.cpu_isa -> (the CPU flags the kernels need, the variables that select them).
BLAS_CAPS = {"avx2": (("avx2", "fma"), {"OPENBLAS_CORETYPE": "Haswell"})}


def blas_caps(
    cpu_isa: str | None, environ: Mapping[str, str], flags: Iterable[str]
) -> dict[str, str]:
    """The variables a job needs for ``machine.cpu_isa`` on a CPU with ``flags``. Like the
    other caps, it refuses an ``OPENBLAS_CORETYPE`` that ``environ`` sets otherwise."""
    if cpu_isa is None:
        return {}
    needs, wanted = BLAS_CAPS[cpu_isa]
    if not set(needs) <= set(flags):
        return {}
    refuse_clashes(cpu_isa, wanted, wanted, environ)
    return dict(wanted)


def openblas_core() -> str | None:
    """The kernels numpy's OpenBLAS runs in this process (e.g. "Haswell"); None where numpy
    does not bundle OpenBLAS."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or spec.origin is None:
        return None
    import numpy  # noqa: F401  (loads OpenBLAS, which reads OPENBLAS_CORETYPE once)

    libraries = sorted((Path(spec.origin).parents[1] / "numpy.libs").glob("libscipy_openblas*"))
    for path in libraries:
        query = getattr(ctypes.CDLL(str(path)), "scipy_openblas_get_corename64_", None)
        if query is not None:
            query.restype = ctypes.c_char_p
            return query().decode()
    return None
