"""The torch set-up of every job that computes with a model: the conditions for bit-exact reruns.

    configure_torch(threads=1)   # done by workflow.machine.enter_job; tests call it directly

Alone in its module so that the jobs after training (dumps, probes) hash this and not the
training loop: a change to how runs train never makes their dumps look stale.
"""

from __future__ import annotations

import os

import torch
import torch.utils.deterministic

from workflow.machine.heap import keep_heap


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
    keep_heap()
