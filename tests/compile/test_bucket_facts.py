"""What torch.compile's bucketing may assume about an op is a fact beside the
op's lowering in the core (tt_lower_bucket_t in csrc/core/lower/tt_lower.h),
read through torch_tpu._C._lower_facts(): per overload where overloads take
other arguments, so that a rule never reaches an overload whose arguments it
misreads. Ops whose output size depends on the data are facts there too
(TT_LF_HOST_OP), although they have no lowering."""
import torch

import torch_tpu
from torch_tpu import _buckets

aten = torch.ops.aten


def test_bucket_classes_are_the_cores_facts():
    rule = _buckets._rule
    assert rule(aten.sum.dim_IntList) == "reduce" and rule(aten.sum.default) == "reduce"
    assert rule(aten.var.correction) == "reduce"
    assert rule(aten._softmax.default) == "reduce"
    assert rule(aten.view.default) == "view" and rule(aten.reshape.default) == "view"
    assert rule(aten.arange.start_step) == "create" and rule(aten.tril.default) == "create"
    assert rule(aten.clone.default) == "keep"
    assert rule(aten.mm.default) == "matmul" and rule(aten.addmm.default) == "matmul_bias"
    assert rule(aten.split.Tensor) == "split" and rule(aten.native_layer_norm.default) == "layer_norm"
    assert rule(aten._scaled_dot_product_fused_attention_overrideable.default) == "attention"
    assert rule(aten.embedding.default) == "embedding" and rule(aten.sym_size.int) == "size"
    # facts about every overload: the overload packet
    assert rule(aten.transpose.int) == "transpose" and rule(aten.t.default) == "transpose"
    assert rule(aten.slice.Tensor) == "slice" and rule(aten.select.int) == "select"
    assert rule(aten.permute.default) == "permute" and rule(aten.expand.default) == "expand"
    assert rule(aten.unsqueeze.default) == "unsqueeze"


def test_bucket_classes_stop_at_overloads_with_other_arguments():
    rule = _buckets._rule
    assert rule(aten.var.default) is None  # arg 1 is `unbiased`, not dims
    assert rule(aten.max.other) is None  # a binary op
    assert rule(aten.view.dtype) is None  # no view of sizes
    assert rule(aten.mm.dtype) is None
    assert rule(aten.sum.IntList_out) is None and rule(aten.arange.out) is None
    assert rule(aten.add.Tensor) is None and rule(torch.sin) is None


def test_ops_with_data_dependent_sizes_are_host_facts():
    facts = torch_tpu._C._lower_facts()
    host = {op for op, (flags, _) in facts.items() if flags & 0x80}  # TT_LF_HOST_OP
    assert {"aten::masked_select", "aten::nonzero", "aten::nonzero_static", "aten::_unique",
            "aten::_unique2", "aten::unique_consecutive", "aten::unique_dim"} <= host
    x = torch.tensor([0.0, 1.5, 0.0, -2.0])
    t = x.to("tpu")
    assert torch.equal(t.nonzero().cpu(), x.nonzero())
    assert torch.equal(t.masked_select(t != 0).cpu(), x.masked_select(x != 0))
    assert torch.equal(torch.unique(t).cpu(), torch.unique(x))
