"""scaled_dot_product_attention on tpu, against CPU: the overrideable backend
(one lowered op, forward and backward) where the bridge selects it, the math
decomposition elsewhere. Randomized over shapes, masks, is_causal, scale,
dtypes and layouts."""
import copy
import random
import re

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

import torch_tpu  # noqa: F401
from suite import sweep

FUSED = "aten._scaled_dot_product_fused_attention_overrideable.default"
FUSED_BWD = "aten._scaled_dot_product_fused_attention_overrideable_backward.default"
TOL = {torch.float32: dict(atol=2e-5, rtol=2e-4), torch.float64: dict(atol=1e-10, rtol=1e-9),
       torch.bfloat16: dict(atol=3e-2, rtol=3e-2), torch.float16: dict(atol=3e-3, rtol=3e-3)}


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _strides(t):
    """Strides of the dims of more than one element (the others' strides carry no layout)."""
    return [t.stride(d) for d in range(t.dim()) if t.shape[d] > 1]


def run(q, k, v, mask, grad_out, **kw):
    """Forward and, when grad_out is given, the gradients of every leaf."""
    leaves = [t for t in (q, k, v, mask) if t is not None and t.requires_grad]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    grads = torch.autograd.grad(out, leaves, grad_out) if grad_out is not None else ()
    return out, grads


def to_tpu(t):
    if t is None:
        return None
    return t.detach().to("tpu").requires_grad_(t.requires_grad)


def cpu_runs_flash(q, k, v, mask, **kw):
    """Whether PyTorch's CPU runs its flash kernel here (else its math path)."""
    choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, kw.get("is_causal", False), scale=kw.get("scale"),
                                     enable_gqa=kw.get("enable_gqa", False))
    return choice == SDPBackend.FLASH_ATTENTION.value


def check(q, k, v, mask=None, grad=True, expect_fused=None, **kw):
    """The tpu's results, gradients and layouts equal the CPU's; the fused op runs where the CPU
    runs its flash kernel (expect_fused=None) or as told."""
    tol = TOL[q.dtype]
    go = torch.randn(*q.shape[:-1], v.shape[-1], dtype=q.dtype) if grad else None
    for t in (q, k, v):
        t.requires_grad_(grad)
    cpu_flash = cpu_runs_flash(q, k, v, mask, **kw)
    if expect_fused is None:
        expect_fused = cpu_flash
    ref, ref_g = run(q, k, v, mask, go, **kw)
    with OpLog() as log:
        out, g = run(to_tpu(q), to_tpu(k), to_tpu(v), to_tpu(mask), None if go is None else go.to("tpu"), **kw)
    assert out.device.type == "tpu" and out.dtype == ref.dtype and out.shape == ref.shape
    torch.testing.assert_close(out.cpu(), ref, **tol)
    assert _strides(out) == _strides(ref)
    assert len(g) == len(ref_g)
    for a, b in zip(g, ref_g):
        torch.testing.assert_close(a.cpu(), b, **tol)
        if cpu_flash == expect_fused:  # both ran the fused op or both the math ops
            assert _strides(a) == _strides(b)
    assert (FUSED in log.ops) == expect_fused, log.ops
    if grad and expect_fused:
        assert FUSED_BWD in log.ops


def rand_mask(rng, lead, L, S, kind, dtype):
    """A mask broadcastable to (*lead, L, S): some leading dims dropped or 1."""
    shape = [L, S]
    for d in reversed(lead):
        r = rng.random()
        if r < 0.3:
            break
        shape.insert(0, 1 if r < 0.6 else d)
    if kind == "bool":
        m = torch.rand(*shape) > 0.3
        if L > 1:
            m[..., L // 2, :] = False  # a row that attends to nothing: 0 as in CPU's math
        return m
    return torch.randn(*shape, dtype=dtype)


@pytest.mark.parametrize("seed", range(24))
def test_sdpa_random(seed):
    rng = random.Random(seed)
    dtype = [torch.float32, torch.float32, torch.float64, torch.bfloat16, torch.float16][seed % 5]
    B, H = rng.randint(1, 3), rng.randint(1, 3)
    L, S = rng.randint(1, 9), rng.randint(1, 9)
    E, Dv = rng.choice([1, 4, 8]), rng.choice([2, 4, 8])
    q = torch.randn(B, H, L, E, dtype=dtype)
    k = torch.randn(B, H, S, E, dtype=dtype)
    v = torch.randn(B, H, S, Dv, dtype=dtype)
    kind = rng.choice(["none", "causal", "bool", "float"])
    mask, kw = None, {}
    if kind == "causal":
        kw["is_causal"] = True
    elif kind != "none":
        mask = rand_mask(rng, (B, H), L, S, kind, dtype)
        if kind == "float" and rng.random() < 0.5:
            mask.requires_grad_(True)
    if rng.random() < 0.4:
        kw["scale"] = rng.uniform(0.05, 2.0)
    torch.manual_seed(seed)
    check(q, k, v, mask, **kw)


@pytest.mark.parametrize("seed", range(sweep(1, 3)))
def test_sdpa_layouts_random(seed):
    """Inputs in every memory order, head dims equal or not: the output has CPU's strides (the
    fused op exactly where the CPU runs its flash kernel, whose output follows the query's layout;
    the math ops elsewhere), and so do the gradients where both run the math ops."""
    rng = random.Random(100 + seed)
    for _ in range(12):
        B, H, L, S = (rng.choice([1, 2, 3]) for _ in range(4))
        E = rng.choice([1, 4, 8])
        Ev = rng.choice([E, E, rng.choice([1, 3, 8])])
        perm = list(range(4))
        rng.shuffle(perm)
        inv = [perm.index(i) for i in range(4)]

        def make(shape):
            return torch.randn([shape[p] for p in perm]).permute(inv)

        kind = rng.choice(["none", "causal", "float"])
        kw = {"is_causal": True} if kind == "causal" else {}
        mask = torch.randn(L, S).requires_grad_(rng.random() < 0.5) if kind == "float" else None
        check(make((B, H, L, E)), make((B, H, S, E)), make((B, H, S, Ev)), mask, **kw)


def test_sdpa_transposed_inputs_like_a_transformer():
    # q, k, v as a GPT makes them: (B, L, H, E) viewed as (B, H, L, E)
    x = torch.randn(2, 6, 3 * 4 * 8)
    q, k, v = (t.reshape(2, 6, 4, 8).transpose(1, 2) for t in x.split(32, dim=-1))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    xd = x.to("tpu")
    qd, kd, vd = (t.reshape(2, 6, 4, 8).transpose(1, 2) for t in xd.split(32, dim=-1))
    outd = F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
    assert outd.stride() == out.stride() or outd.is_contiguous() == out.is_contiguous()
    torch.testing.assert_close(outd.cpu(), out, **TOL[torch.float32])
    check(q.contiguous().clone(), k.contiguous().clone(), v.contiguous().clone(), is_causal=True)


def test_sdpa_fully_masked_rows_are_zero_with_zero_grads():
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    m = torch.zeros(4, 5, dtype=torch.bool)
    m[0, :2] = True
    check(q, k, v, m)
    fm = torch.full((4, 5), float("-inf"))
    fm[2] = 0.0
    check(q, k, v, fm)


def test_sdpa_zero_size():
    # PyTorch answers empty inputs itself, before choosing a backend
    check(torch.randn(2, 1, 0, 4), torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4), expect_fused=False)
    check(torch.randn(0, 1, 2, 4), torch.randn(0, 1, 3, 4), torch.randn(0, 1, 3, 4), expect_fused=False)
    check(torch.randn(1, 1, 2, 4), torch.randn(1, 1, 0, 4), torch.randn(1, 1, 0, 4), expect_fused=False)


def test_sdpa_math_where_not_lowered():
    # dropout, grouped-query attention, 3-d inputs: the decomposition, still CPU's results
    q, k, v = torch.randn(1, 4, 5, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    check(q, k, v, expect_fused=False, enable_gqa=True)
    check(torch.randn(3, 5, 8), torch.randn(3, 6, 8), torch.randn(3, 6, 4), expect_fused=False, is_causal=True)
    qd = torch.randn(2, 2, 5, 8, device="tpu")
    with OpLog() as log:
        out = F.scaled_dot_product_attention(qd, qd, qd, dropout_p=0.5)
    assert FUSED not in log.ops and out.shape == qd.shape and torch.isfinite(out.cpu()).all()


def test_sdpa_kernel_context_selects_math():
    q, k, v = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
    with sdpa_kernel(SDPBackend.MATH):
        check(q, k, v, expect_fused=False, is_causal=True)
    with sdpa_kernel([SDPBackend.OVERRIDEABLE, SDPBackend.MATH]):
        check(q, k, v, expect_fused=True, is_causal=True)


def test_sdpa_one_program_in_strict():
    q = torch.randn(2, 2, 7, 8, device="tpu")
    with torch_tpu.eager_mode("strict"):
        F.scaled_dot_product_attention(q, q, q, is_causal=True).cpu()
        before = torch.tpu._get_cache_stats()["requests"]
        F.scaled_dot_product_attention(q, q, q, is_causal=True)
        torch.tpu.synchronize()
        assert torch.tpu._get_cache_stats()["requests"] - before == 1


def _fast_path_ops(fn):
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = set()

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.add(func.__name__.split(".")[0])
            return func(*args, **(kwargs or {}))

    with Log():
        out = fn()
    return out, seen


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("padding", [False, True])
def test_multihead_attention_inference_fast_path(need_weights, padding):
    """nn.MultiheadAttention in eval mode without grad, self-attention: PyTorch takes its
    fast path (torch._native_multi_head_attention) on tpu as on CPU; same outputs."""
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    mt = copy.deepcopy(m).to("tpu")
    x = torch.randn(3, 6, 16)
    kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5]) if padding else None
    xt = x.to("tpu")
    with torch.no_grad():
        want = m(x, x, x, key_padding_mask=kpm, need_weights=need_weights)
        got, ops = _fast_path_ops(lambda: mt(xt, xt, xt, key_padding_mask=None if kpm is None else kpm.to("tpu"),
                                              need_weights=need_weights))
    assert "_native_multi_head_attention" in ops
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_inference_fast_path(norm_first, activation):
    """nn.TransformerEncoderLayer / TransformerEncoder in eval mode without grad take
    torch._transformer_encoder_layer_fwd (on tpu as on CPU), with a key padding mask."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=activation, batch_first=True,
                                             norm_first=norm_first).eval()
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    enct = copy.deepcopy(enc).to("tpu")
    x = torch.randn(2, 5, 16)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        want = enc(x, src_key_padding_mask=kpm)
        got, ops = _fast_path_ops(lambda: enct(x.to("tpu"), src_key_padding_mask=kpm.to("tpu")))
    assert "_transformer_encoder_layer_fwd" in ops
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_masked_softmax_and_qkv_rescale_match_cpu():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 5, 5, generator=g)
    full = torch.rand(2, 3, 5, 5, generator=g) > 0.6
    pad = torch.tensor([[False] * 5, [False] * 2 + [True] * 3])
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    for mask, dim, mt in ((full, None, None), (full, 2, 2), (pad, 3, 1), (causal, 3, 0)):
        want = torch._masked_softmax(x, mask, dim, mt)
        got = torch._masked_softmax(x.to("tpu"), mask.to("tpu"), dim, mt)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-6, equal_nan=True)
    for mask, mt in ((pad[:, :4], 1), (causal[:4], 0), (full[0], 2)):
        with pytest.raises(RuntimeError) as e:
            torch._masked_softmax(x, mask, 3, mt)
        with pytest.raises(RuntimeError, match=re.escape(str(e.value))):
            torch._masked_softmax(x.to("tpu"), mask.to("tpu"), 3, mt)
    for dt in (torch.float32, torch.bfloat16):
        qkv, bias = torch.randn(2, 4, 36, generator=g).to(dt), torch.randn(36, generator=g).to(dt)
        want = torch._transform_bias_rescale_qkv(qkv, bias, 3)
        got = torch._transform_bias_rescale_qkv(qkv.to("tpu"), bias.to("tpu"), 3)
        for a, b in zip(got, want):
            assert a.shape == b.shape and a.dtype == b.dtype
            torch.testing.assert_close(a.cpu(), b, rtol=0, atol=0)
