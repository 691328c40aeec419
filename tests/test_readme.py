"""README.md stays true: the env-var table and the supported-op list come from the core's tables."""
import os

import torch_tpu
from torch_tpu import _C, ops_report

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def test_every_env_var_is_documented():
    text = open(README).read()
    names = [name for name, _default, _help in _C._env_vars()]
    assert len(names) >= 8
    for name in names:
        assert f"`{name}`" in text, f"{name} is missing from README.md"


def test_supported_op_list_is_generated_from_the_tables():
    assert ops_report.readme_section(README) == ops_report.markdown().strip(), (
        "README.md's supported-op list is stale: run `make ops-report`"
    )


def test_supported_ops_have_lowerings():
    ops = torch_tpu.supported_ops()
    assert len(ops) == len(set(ops))
    for name in ["aten::add.Tensor", "aten::mm", "aten::_log_softmax", "aten::nll_loss_forward",
                 "aten::_foreach_add_.Scalar", "aten::uniform_"]:
        assert name in ops
