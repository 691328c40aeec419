"""The package itself: its version is the installed distribution's."""
import importlib.metadata as md

import torch_tpu
from torch_tpu import _version


def test_version_is_the_installed_distributions():
    assert torch_tpu.__version__ == md.version("torch_tpu")


def test_installed_distribution_is_this_source_tree():
    # `make` installs the package from this tree (editable): metadata and
    # source agree, so a version bump in _version.py reaches pip's metadata.
    assert md.version("torch_tpu") == _version.VERSION
    assert torch_tpu.__version__.count(".") >= 2
