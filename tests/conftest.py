"""Fixtures shared by test modules."""

from __future__ import annotations

import pytest

from tests.support.trees import prepared_mnist


@pytest.fixture(scope="module")
def deterministic_torch():
    """Training as the workflow trains (one thread, deterministic kernels) for a module's tests,
    and the caller's torch settings back afterwards."""
    import torch

    from workflow.machine.determinism import configure_torch

    previous = (
        torch.get_num_threads(),
        torch.are_deterministic_algorithms_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory,
    )
    configure_torch(1)
    yield
    torch.set_num_threads(previous[0])
    torch.use_deterministic_algorithms(previous[1])
    torch.utils.deterministic.fill_uninitialized_memory = previous[2]


@pytest.fixture(scope="session")
def mnist_copy(tmp_path_factory):
    """One MNIST copy for every scratch tree that trains (``mnist`` of
    tests.support.trees.copy_repo), made by the workflow's rule prepare_mnist."""
    return prepared_mnist(tmp_path_factory.mktemp("mnist"))
