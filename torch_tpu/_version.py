"""The package version: setup.py reads it from here, so the installed
distribution and `torch_tpu.__version__` cannot disagree."""
VERSION = "0.1.0"
