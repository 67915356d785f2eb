"""The torch set-up of every job that computes with a model: the conditions for bit-exact reruns.

    configure_torch(threads=1)   # first thing a training, dump, probe or audit job does

Alone in its module so that the jobs after training (dumps, probes) hash this and not the
training loop: a change to how runs train never makes their dumps look stale.
"""

from __future__ import annotations

import ctypes
import os

import torch
import torch.utils.deterministic

from workflow.heap import HEAP_ENVIRONMENT


def configure_torch(threads: int) -> None:
    """Deterministic kernels and a fixed thread count: the conditions for bit-exact reruns."""
    torch.set_num_threads(threads)
    # cuBLAS is deterministic only with a fixed workspace; it must be set before CUDA starts.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # The public torch.use_deterministic_algorithms also imports torch._inductor to set its
    # flag, which costs about 1.5 s per job; nothing here compiles, so set the core flag alone.
    if hasattr(torch._C, "_set_deterministic_algorithms"):
        torch._C._set_deterministic_algorithms(True, warn_only=False)
    else:
        torch.use_deterministic_algorithms(True)
    if not torch.are_deterministic_algorithms_enabled():
        raise RuntimeError("torch refused deterministic algorithms")
    # Deterministic mode otherwise fills every new tensor with NaN, which costs time and
    # changes no result of a kernel that writes its whole output.
    torch.utils.deterministic.fill_uninitialized_memory = False
    _keep_heap()


# HEAP_ENVIRONMENT (workflow.heap): jobs get it before Python starts (rules/common.smk);
# _keep_heap applies it at run time to processes started any other way.


def _keep_heap() -> None:
    if all(os.environ.get(key) == value for key, value in HEAP_ENVIRONMENT.items()):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    options = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}
    for key, value in HEAP_ENVIRONMENT.items():
        libc.mallopt(options[key], int(value))
