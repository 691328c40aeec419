"""The docs stay true: docs/environment.md lists every variable of the core's env-var table, and
docs/supported-ops.md's op list is what tools/ops_report.py generates from the lowering tables; the core's
layers include as docs/architecture.md says (tools/include_graph.py)."""
import importlib.util
import os

import torch_tpu
from torch_tpu import _C

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV_DOC = os.path.join(ROOT, "docs", "environment.md")
OPS_DOC = os.path.join(ROOT, "docs", "supported-ops.md")


def _ops_report():
    spec = importlib.util.spec_from_file_location("ops_report", os.path.join(ROOT, "tools", "ops_report.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_env_var_is_documented():
    text = open(ENV_DOC).read()
    names = [name for name, _default, _help in _C._env_vars()]
    assert len(names) >= 8
    for name in names:
        assert f"`{name}`" in text, f"{name} is missing from docs/environment.md"


def test_supported_op_list_is_generated_from_the_tables():
    ops_report = _ops_report()
    assert ops_report.docs_section(OPS_DOC) == ops_report.markdown().strip(), (
        "docs/supported-ops.md's op list is stale: run `make ops-report`"
    )


def test_supported_ops_have_lowerings():
    ops = torch_tpu.supported_ops()
    assert len(ops) == len(set(ops))
    for name in ["aten::add.Tensor", "aten::mm", "aten::_log_softmax", "aten::nll_loss_forward",
                 "aten::_foreach_add_.Scalar", "aten::uniform_"]:
        assert name in ops


def test_core_layers_include_only_downward():
    """tools/include_graph.py: no upward include between the core's layers, no internal header crossed."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "include_graph.py"), "--check", "--quiet"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "upward include" not in r.stdout and "internal header crossed" not in r.stdout, r.stdout
