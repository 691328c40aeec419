"""Transformers models on tpu, built from configs (no downloads): the compiled
forward equals CPU, and greedy generation with the static cache, which
Transformers compiles by itself on tpu (backend "tpu"), gives CPU's tokens."""
import copy

import pytest
import torch

import transformers  # in requirements.txt: a missing install fails, it does not skip

import torch_tpu  # noqa: F401
from torch_tpu import _compile

DEV = "tpu"


def llama():
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return transformers.LlamaForCausalLM(cfg)


def gpt2():
    cfg = transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=64, resid_pdrop=0.0,
                                  embd_pdrop=0.0, attn_pdrop=0.0,
                                  pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return transformers.GPT2LMHeadModel(cfg)


MODELS = {"llama": llama, "gpt2": gpt2}


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def both(name):
    torch.manual_seed(0)
    cpu = MODELS[name]().eval()
    return cpu, copy.deepcopy(cpu).to(DEV)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_forward_equals_cpu(name):
    cpu, tpu = both(name)
    ctpu = torch.compile(tpu, backend="tpu")
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(3):
            ids = torch.randint(3, 64, (2, 12), generator=g)
            want = cpu(ids).logits
            got = ctpu(ids.to(DEV)).logits
            torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_training_step_equals_cpu(name):
    cpu, tpu = both(name)
    cpu.train(), tpu.train()
    ctpu = torch.compile(tpu, backend="tpu")
    oc = torch.optim.AdamW(cpu.parameters(), lr=1e-3)
    ot = torch.optim.AdamW(tpu.parameters(), lr=1e-3)
    ids = torch.randint(3, 64, (2, 10), generator=torch.Generator().manual_seed(2))
    for _ in range(3):
        lc = cpu(ids, labels=ids).loss
        lt = ctpu(ids.to(DEV), labels=ids.to(DEV)).loss
        torch.testing.assert_close(lt.detach().cpu(), lc.detach(), rtol=1e-4, atol=1e-5)
        for m, o, loss in ((cpu, oc, lc), (tpu, ot, lt)):
            o.zero_grad()
            loss.backward()
            o.step()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_static_cache_generate_compiles_and_matches_cpu(name):
    cpu, tpu = both(name)
    ids = torch.randint(3, 64, (1, 6), generator=torch.Generator().manual_seed(3))
    kw = dict(max_new_tokens=10, do_sample=False, cache_implementation="static", pad_token_id=0)
    want = cpu.generate(ids, **kw)
    n0 = _compile.graph_serial()
    got = tpu.generate(ids.to(DEV), **kw)
    assert torch.equal(got.cpu(), want), (got, want)
    # Transformers compiled the decoding step itself, with backend "tpu"
    gs = _compile.compiled_graphs(since=n0)
    assert gs, "generate did not compile on tpu"
    assert sum(g["replays"] for g in gs) > 0, gs
