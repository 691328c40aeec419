"""Builds torch_tpu._C (the C++ bridge) against the installed torch and links
the C core (build/libttcore.a, built by `make core`). Install with
`pip install --no-build-isolation -e .` (the Makefile does it): an isolated
build would download another torch."""
import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

here = os.path.dirname(os.path.abspath(__file__))
_version = {}
with open(os.path.join(here, "torch_tpu", "_version.py")) as f:
    exec(f.read(), _version)  # no import: torch_tpu needs its extension to import
# the bridge's files, and its ATen-specific rules (csrc/bridge/aten)
sources = sorted(os.path.join(d, f) for d in (os.path.join("csrc", "bridge"), os.path.join("csrc", "bridge", "aten"))
                 for f in os.listdir(os.path.join(here, d)) if f.endswith(".cpp"))

# `make` builds the extension in place (incremental, ninja) and installs the
# package editable with TORCH_TPU_SKIP_EXT=1: only the metadata and the
# torch.backends entry point, so the extension is not compiled twice.
ext_modules = [] if os.environ.get("TORCH_TPU_SKIP_EXT") else [
    CppExtension(
        "torch_tpu._C",
        sources,
        extra_compile_args=["-O2", "-std=c++20", "-Wall", "-Wno-unused-parameter"],
        extra_objects=[os.path.join(here, "build", "libttcore.a")],
        libraries=["dl", "pthread"],
        depends=[os.path.join(here, "build", "libttcore.a")],  # relink when the core changes
    )
]

setup(
    name="torch_tpu",
    version=_version["VERSION"],
    description="A native PyTorch backend for the `tpu` device on PJRT plugins (TPU, GPU, CPU)",
    packages=find_packages(include=["torch_tpu", "torch_tpu.*"]),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    entry_points={
        "torch.backends": ["torch_tpu = torch_tpu:_autoload"],
        "torch_dynamo_backends": ["tpu = torch_tpu._compile:backend"],
    },
    python_requires=">=3.10",
)
