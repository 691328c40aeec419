"""Shared helpers for the semantics / modes / models suites (no autouse fixtures)."""
import pytest
import torch

import torch_tpu  # noqa: F401  (registers the tpu device)


@pytest.fixture
def dev():
    return torch.device("tpu")
