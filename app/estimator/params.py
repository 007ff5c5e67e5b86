"""Exact parameter counts of a decoder-only transformer, derived from its architecture.

Counting follows the layer shapes of the Hugging Face implementations (Llama/Mistral/Qwen/Gemma:
no biases, RMSNorm weight only; GPT-2/GPT-NeoX: biases everywhere, LayerNorm weight and bias) and
agrees with Megatron-LM `megatron/training/theoretical_memory_usage.py` (attention
2h²(1 + g/a), MLP 2hf × 3/2 for SwiGLU) when head_dim = hidden/heads.
MoE (Mixtral, DeepSeek): memory follows the total, FLOPs follow the active count
(Fedus et al. 2021 "Switch Transformers" §2).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from app.estimator.specs import ModelSpec


@dataclass(frozen=True, slots=True)
class ParamCounts:
    total: int
    active: int  # parameters touched per token (MoE: routed top-k + shared experts)
    embedding: int  # input token table (+ learned positions)
    lm_head: int  # 0 when tied to the embedding
    attention_per_layer: int
    dense_mlp_per_layer: int
    moe_mlp_per_layer: int  # all experts + router + shared experts of one MoE layer
    moe_mlp_active_per_layer: int
    norms_per_layer: int
    final_norm: int

    @property
    def largest_layer(self) -> int:
        """Largest single module, DeepSpeed's `largest_layer_params` (embedding usually wins)."""
        layer = self.attention_per_layer + max(self.dense_mlp_per_layer, self.moe_mlp_per_layer)
        return max(self.embedding, self.lm_head, layer)


def _norm_params(model: ModelSpec) -> int:
    return model.hidden * (2 if model.norm == "layernorm" else 1)


def attention_params(model: ModelSpec) -> int:
    h, d = model.hidden, model.d_head
    q_out, kv_out = model.heads * d, model.kv_heads * d
    weights = h * q_out + 2 * h * kv_out + q_out * h
    bias = 0
    if model.linear_bias:
        bias = q_out + 2 * kv_out + h
    elif model.qkv_bias:
        bias = q_out + 2 * kv_out
    return weights + bias


def mlp_params(model: ModelSpec, width: int) -> int:
    matrices = 3 if model.mlp == "swiglu" else 2
    bias = (width * (matrices - 1) + model.hidden) if model.linear_bias else 0
    return matrices * model.hidden * width + bias


@lru_cache(maxsize=4096)
def count_params(model: ModelSpec) -> ParamCounts:
    h = model.hidden
    attention = attention_params(model)
    dense_mlp = mlp_params(model, model.ffn)
    moe_total = moe_active = 0
    if model.is_moe:
        width = model.expert_ffn or model.ffn
        one_expert = mlp_params(model, width)
        router = h * model.experts
        moe_total = model.experts * one_expert + router + model.shared_experts * one_expert
        moe_active = model.experts_per_token * one_expert + router + model.shared_experts * one_expert
    norms = 2 * _norm_params(model)
    dense_layers = model.layers - (model.moe_layers if model.is_moe else 0)
    moe_layers = model.layers - dense_layers
    embedding = model.vocab * h + model.learned_positions * h
    lm_head = 0 if model.tied_embeddings else model.vocab * h
    final_norm = _norm_params(model)
    body_common = model.layers * (attention + norms)
    total = embedding + lm_head + final_norm + body_common + dense_layers * dense_mlp + moe_layers * moe_total
    active = embedding + lm_head + final_norm + body_common + dense_layers * dense_mlp + moe_layers * moe_active
    return ParamCounts(
        total=total,
        active=active,
        embedding=embedding,
        lm_head=lm_head,
        attention_per_layer=attention,
        dense_mlp_per_layer=dense_mlp,
        moe_mlp_per_layer=moe_total,
        moe_mlp_active_per_layer=moe_active,
        norms_per_layer=norms,
        final_norm=final_norm,
    )


def linear_shapes(model: ModelSpec) -> dict[str, tuple[int, int, int]]:
    """(d_in, d_out, copies in the whole model) of each LoRA-targetable matrix.

    MoE experts count once per expert (PEFT adapts every expert's linear layers).
    """
    h, d = model.hidden, model.d_head
    q_out, kv_out = model.heads * d, model.kv_heads * d
    layers = model.layers
    shapes = {
        "q": (h, q_out, layers),
        "k": (h, kv_out, layers),
        "v": (h, kv_out, layers),
        "o": (q_out, h, layers),
    }
    dense_layers = layers - (model.moe_layers if model.is_moe else 0)
    expert_copies = 0
    width_e = model.expert_ffn or model.ffn
    if model.is_moe:
        expert_copies = model.moe_layers * (model.experts + model.shared_experts)
    # dense and expert MLPs have different widths; report the parameter-weighted equivalent
    # by listing them as two shapes folded into one entry per target.
    up_copies = dense_layers
    mlp = {"up": (h, model.ffn, up_copies), "down": (model.ffn, h, up_copies)}
    if model.mlp == "swiglu":
        mlp["gate"] = (h, model.ffn, up_copies)
    shapes.update(mlp)
    if expert_copies:
        shapes["up_experts"] = (h, width_e, expert_copies)
        shapes["down_experts"] = (width_e, h, expert_copies)
        if model.mlp == "swiglu":
            shapes["gate_experts"] = (h, width_e, expert_copies)
    return shapes
