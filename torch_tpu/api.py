"""Helpers kept for code written against older TorchTPU releases."""
import torch


def tpu_device(index=None):
    """The `tpu` torch.device (of the current device when index is None)."""
    if index is None:
        index = torch.tpu.current_device()
    return torch.device("tpu", index)
