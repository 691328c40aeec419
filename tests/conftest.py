"""Shared helpers for the semantics / modes / models suites (no autouse fixtures)."""
import pytest
import torch

import torch_tpu  # noqa: F401  (registers the tpu device)


@pytest.fixture
def dev():
    return torch.device("tpu")


@pytest.fixture
def fresh_dynamo():
    """torch.compile tests: each starts and ends with dynamo's caches empty."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
