"""The model zoo: tiny, seeded configurations of the model families people run
(Transformers 5.25, Diffusers 0.42), built from configs (nothing downloads).

Each family is a `Family`: `build()` makes the model on CPU (seeded), `batch(g)`
makes an input batch (a dict of CPU tensors) from a torch.Generator, `loss(out,
batch)` the training loss, `logits(out)` what the forward is compared on, and
`generate` whether greedy generation applies (causal LMs and encoder-decoders).
"""
import dataclasses
from typing import Callable

import torch
import torch.nn.functional as F

import diffusers  # in requirements.txt: a missing install fails, it does not skip
import transformers

V = 256  # vocabulary
TOK = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)
LM = dict(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
          num_key_value_heads=2, max_position_embeddings=64, **TOK)


@dataclasses.dataclass
class Family:
    name: str
    build: Callable[[], torch.nn.Module]
    batch: Callable[[torch.Generator], dict]
    loss: Callable
    logits: Callable
    generate: bool = False
    moe: bool = False
    kind: str = "lm"


def _ids(g, b=2, t=12):
    return torch.randint(3, V, (b, t), generator=g)


def _lm_batch(g):
    ids = _ids(g)
    return {"input_ids": ids, "labels": ids}


def _hf_loss(out, batch):
    return out.loss


def _hf_logits(out):
    return out.logits


def _causal(name, cfg_cls, model_cls, moe=False, **kw):
    def build():
        cfg = cfg_cls(**{**LM, **kw})
        return model_cls(cfg)
    return Family(name, build, _lm_batch, _hf_loss, _hf_logits, generate=True, moe=moe)


FAMILIES = {}


def _add(f):
    FAMILIES[f.name] = f


# ---- mixture of experts ---------------------------------------------------------
_add(_causal("mixtral", transformers.MixtralConfig, transformers.MixtralForCausalLM, moe=True,
             num_local_experts=4, num_experts_per_tok=2))
_add(_causal("qwen3_moe", transformers.Qwen3MoeConfig, transformers.Qwen3MoeForCausalLM, moe=True,
             head_dim=8, moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1))
_add(_causal("deepseek_v3", transformers.DeepseekV3Config, transformers.DeepseekV3ForCausalLM, moe=True,
             moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=1,
             topk_group=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=16, qk_rope_head_dim=8,
             qk_nope_head_dim=8, v_head_dim=8, num_key_value_heads=4))
_add(_causal("gpt_oss", transformers.GptOssConfig, transformers.GptOssForCausalLM, moe=True,
             intermediate_size=32, head_dim=8, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
             layer_types=["sliding_attention", "full_attention"]))
_add(_causal("glm4_moe", transformers.Glm4MoeConfig, transformers.Glm4MoeForCausalLM, moe=True,
             moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=1,
             topk_group=1, first_k_dense_replace=1, head_dim=8))
_add(_causal("qwen3_next", transformers.Qwen3NextConfig, transformers.Qwen3NextForCausalLM, moe=True,
             head_dim=8, linear_conv_kernel_dim=4, linear_key_head_dim=8, linear_value_head_dim=8,
             linear_num_key_heads=2, linear_num_value_heads=4, moe_intermediate_size=32,
             shared_expert_intermediate_size=32, num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1,
             layer_types=["linear_attention", "full_attention"]))

# ---- dense decoders -------------------------------------------------------------------
_add(_causal("llama", transformers.LlamaConfig, transformers.LlamaForCausalLM))
_add(_causal("qwen3", transformers.Qwen3Config, transformers.Qwen3ForCausalLM, head_dim=8))
_add(_causal("gemma3", transformers.Gemma3TextConfig, transformers.Gemma3ForCausalLM, head_dim=8,
             sliding_window=8, layer_types=["sliding_attention", "full_attention"]))
_add(_causal("mistral", transformers.MistralConfig, transformers.MistralForCausalLM, sliding_window=8))
_add(_causal("phi3", transformers.Phi3Config, transformers.Phi3ForCausalLM))
_add(_causal("olmo2", transformers.Olmo2Config, transformers.Olmo2ForCausalLM))


# ---- state space ---------------------------------------------------------------------------
def _mamba():
    cfg = transformers.MambaConfig(vocab_size=V, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2,
                                   conv_kernel=4, time_step_rank=4, **TOK)
    return transformers.MambaForCausalLM(cfg)


_add(Family("mamba", _mamba, _lm_batch, _hf_loss, _hf_logits, generate=True))


# ---- encoder-decoders: text and audio ----------------------------------------------------------
def _t5():
    cfg = transformers.T5Config(vocab_size=V, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                decoder_start_token_id=0, dropout_rate=0.0, **TOK)
    return transformers.T5ForConditionalGeneration(cfg)


def _t5_batch(g):
    return {"input_ids": _ids(g), "labels": _ids(g, t=6)}


_add(Family("t5", _t5, _t5_batch, _hf_loss, _hf_logits, generate=True, kind="seq2seq"))


def _whisper():
    cfg = transformers.WhisperConfig(vocab_size=V, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,
                                     decoder_start_token_id=1, dropout=0.0, begin_suppress_tokens=None,
                                     suppress_tokens=None, **TOK)
    return transformers.WhisperForConditionalGeneration(cfg)


def _whisper_batch(g):
    return {"input_features": torch.randn(2, 16, 32, generator=g), "labels": _ids(g, t=6)}


_add(Family("whisper", _whisper, _whisper_batch, _hf_loss, _hf_logits, generate=True, kind="seq2seq"))


# ---- encoders: text and vision ------------------------------------------------------------------
def _modernbert():
    cfg = transformers.ModernBertConfig(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, max_position_embeddings=64, global_attn_every_n_layers=2,
                                        local_attention=8, **TOK, sep_token_id=3, cls_token_id=4)
    return transformers.ModernBertForMaskedLM(cfg)


_add(Family("modernbert", _modernbert, _lm_batch, _hf_loss, _hf_logits, kind="encoder"))


def _vit():
    cfg = transformers.ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=4, intermediate_size=64, num_labels=5,
                                 hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return transformers.ViTForImageClassification(cfg)


def _vit_batch(g):
    return {"pixel_values": torch.randn(2, 3, 16, 16, generator=g), "labels": torch.randint(0, 5, (2,), generator=g)}


_add(Family("vit", _vit, _vit_batch, _hf_loss, _hf_logits, kind="vision"))


def _clip():
    text = dict(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=16, **TOK)
    vision = dict(image_size=16, patch_size=4, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4)
    cfg = transformers.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    return transformers.CLIPModel(cfg)


def _clip_batch(g):
    return {"input_ids": _ids(g, t=8), "pixel_values": torch.randn(2, 3, 16, 16, generator=g), "return_loss": True}


_add(Family("clip", _clip, _clip_batch, _hf_loss, lambda out: out.logits_per_image, kind="vision"))


# ---- Diffusers --------------------------------------------------------------------------------------
def _flux():
    return diffusers.FluxTransformer2DModel(patch_size=1, in_channels=4, out_channels=4, num_layers=1,
                                            num_single_layers=1, attention_head_dim=8, num_attention_heads=2,
                                            joint_attention_dim=16, pooled_projection_dim=16, axes_dims_rope=(2, 2, 4))


def _flux_ids(h, w):
    img = torch.zeros(h, w, 3)
    img[..., 1] = torch.arange(h)[:, None]
    img[..., 2] = torch.arange(w)[None, :]
    return img.reshape(h * w, 3)


def _flux_batch(g):
    return {"hidden_states": torch.randn(1, 16, 4, generator=g),
            "encoder_hidden_states": torch.randn(1, 6, 16, generator=g),
            "pooled_projections": torch.randn(1, 16, generator=g),
            "timestep": torch.tensor([0.5]), "img_ids": _flux_ids(4, 4), "txt_ids": torch.zeros(6, 3),
            "target": torch.randn(1, 16, 4, generator=g)}


def _wan():
    return diffusers.WanTransformer3DModel(patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=8,
                                           in_channels=4, out_channels=4, text_dim=16, freq_dim=16, ffn_dim=32,
                                           num_layers=1, rope_max_seq_len=32)


def _wan_batch(g):
    return {"hidden_states": torch.randn(1, 4, 2, 8, 8, generator=g), "timestep": torch.tensor([500]),
            "encoder_hidden_states": torch.randn(1, 6, 16, generator=g),
            "target": torch.randn(1, 4, 2, 8, 8, generator=g)}


def _unet():
    return diffusers.UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
                                          block_out_channels=(16, 32), down_block_types=("CrossAttnDownBlock2D",
                                                                                         "DownBlock2D"),
                                          up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=16,
                                          attention_head_dim=4, norm_num_groups=8)


def _unet_batch(g):
    return {"sample": torch.randn(2, 4, 8, 8, generator=g), "timestep": torch.tensor([10, 700]),
            "encoder_hidden_states": torch.randn(2, 6, 16, generator=g),
            "target": torch.randn(2, 4, 8, 8, generator=g)}


def _vae():
    return diffusers.AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
                                   up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(8, 16),
                                   layers_per_block=1, latent_channels=4, norm_num_groups=4, sample_size=16)


def _vae_batch(g):
    x = torch.randn(1, 3, 16, 16, generator=g)
    return {"sample": x, "target": x}


def _diff_loss(out, batch):
    return F.mse_loss(out.sample, batch["target"])


def _diff_logits(out):
    return out.sample


for _n, _b, _d in (("flux", _flux, _flux_batch), ("wan", _wan, _wan_batch), ("unet", _unet, _unet_batch),
                   ("vae", _vae, _vae_batch)):
    _add(Family(_n, _b, _d, _diff_loss, _diff_logits, kind="diffusers"))


def call(model, fam, batch):
    """The model's forward on a batch (the target stays out of Diffusers' call)."""
    if fam.kind == "diffusers":
        kw = {k: v for k, v in batch.items() if k != "target"}
        if fam.name == "vae":
            kw["sample_posterior"] = False
        return model(**kw)
    return model(**batch)


def flow_matching(model, batch, steps=3):
    """A 3-step flow-matching denoising loop (Diffusers' FlowMatchEulerDiscreteScheduler) with the
    Flux transformer: the latents after `steps` Euler steps."""
    sched = diffusers.FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=1.0)
    sched.set_timesteps(steps, device=batch["hidden_states"].device)
    x = batch["hidden_states"]
    for t in sched.timesteps:
        kw = {k: v for k, v in batch.items() if k not in ("target", "hidden_states", "timestep")}
        v = model(hidden_states=x, timestep=(t / 1000).expand(x.shape[0]).to(x.dtype), **kw).sample
        x = sched.step(v, t, x).prev_sample
    return x
