"""Model descriptions, three ways: an explicit architecture, a bare parameter count, or a pasted
Hugging Face `config.json`. Each path ends in a validated, frozen ModelSpec.

Parameter counting itself lives in `params.py` (exact for the HF layer shapes); this module only
builds and checks specs. Errors are EstimatorError with a dotted `field` (e.g. "model.heads").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from app.estimator.params import count_params
from app.estimator.specs import EstimatorError, ModelSpec, Warning_

MAX_PARAMS = 1e13  # 10 T: ~10x the largest published dense/MoE model (DeepSeek-V3 671B, Llama 3.1 405B)
MIN_PARAMS = 1e6
MAX_DIM = 2**20  # no published model has a hidden/ffn/vocab dimension above ~1M
PARAMS_MISMATCH_REFUSE = 0.05  # a stated count more than 5 % off the architecture is a different model
PARAMS_MISMATCH_WARN = 0.001  # under 0.1 %: biases/norm variants we do not model (Qwen3 q/k norms, Gemma 2 extra norms)

_POSITIVE_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


# --- (a) explicit architecture -------------------------------------------------------------


def _check_positive(model: ModelSpec) -> None:
    for name in _POSITIVE_FIELDS:
        value = getattr(model, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise EstimatorError.of("positive_integer", field=f"model.{name}", name=name, value=value)
        if value > MAX_DIM:
            raise EstimatorError.of("model_dim_absurd", field=f"model.{name}", name=name, value=value, most=MAX_DIM)


def _check_heads(model: ModelSpec) -> None:
    if model.head_dim is None and model.hidden % model.heads:
        raise EstimatorError.of("model_heads_divide", field="model.heads", hidden=model.hidden, heads=model.heads)
    if model.head_dim is not None and model.head_dim <= 0:
        raise EstimatorError.of("model_head_dim_positive", field="model.head_dim", head_dim=model.head_dim)
    if model.kv_heads > model.heads or model.heads % model.kv_heads:
        raise EstimatorError.of(
            "model_kv_heads_divide", field="model.kv_heads", kv_heads=model.kv_heads, heads=model.heads
        )


def _check_moe(model: ModelSpec) -> None:
    if model.experts < 0 or model.experts_per_token < 0 or model.moe_layers < 0 or model.shared_experts < 0:
        raise EstimatorError.of("model_moe_negative", field="model.experts")
    if model.experts == 0:
        return
    if not 1 <= model.experts_per_token <= model.experts:
        raise EstimatorError.of(
            "model_experts_per_token",
            field="model.experts_per_token",
            experts=model.experts,
            experts_per_token=model.experts_per_token,
        )
    if model.moe_layers > model.layers:
        raise EstimatorError.of(
            "model_moe_layers", field="model.moe_layers", moe_layers=model.moe_layers, layers=model.layers
        )
    if model.expert_ffn is not None and not 0 < model.expert_ffn <= MAX_DIM:
        raise EstimatorError.of("model_expert_ffn", field="model.expert_ffn", most=MAX_DIM)


def _check_stated_params(model: ModelSpec, params: float) -> list[Warning_]:
    exact = count_params(model).total
    if not math.isfinite(params) or params <= 0:
        raise EstimatorError.of(
            "model_params_positive", field="model.params", params=params if math.isfinite(params) else str(params)
        )
    relative = (params - exact) / exact
    if abs(relative) > PARAMS_MISMATCH_REFUSE:
        raise EstimatorError.of(
            "model_params_mismatch", field="model.params", params=params, exact=exact, relative=relative
        )
    if abs(relative) > PARAMS_MISMATCH_WARN:
        return [
            Warning_(
                "params_mismatch",
                {"stated": params, "exact": exact, "difference": params - exact, "relative": relative},
            )
        ]
    return []


def validate_model(model: ModelSpec, params: float | None = None) -> list[Warning_]:
    """Check an explicit architecture; `params`, when stated too, is compared with the exact count.

    Raises EstimatorError naming the field; returns warnings (e.g. a small params mismatch).
    """
    _check_positive(model)
    _check_heads(model)
    _check_moe(model)
    if model.tied_embeddings is not True and model.tied_embeddings is not False:
        raise EstimatorError.of("model_tied_embeddings", field="model.tied_embeddings")
    total = count_params(model).total
    if total > MAX_PARAMS:
        raise EstimatorError.of("model_too_large", field="model", total=total, most=MAX_PARAMS)
    if total < MIN_PARAMS:  # the range a bare `params` count is held to (model_from_params): no smaller LLM is sized
        raise EstimatorError.of("model_too_small", field="model", total=total, least=MIN_PARAMS, most=MAX_PARAMS)
    return _check_stated_params(model, params) if params is not None else []


# --- (b) from a parameter count ------------------------------------------------------------

# Published Llama-family shapes: (params_b, layers, hidden, heads, kv_heads, ffn). Sources: HF config.json of
# EleutherAI/pythia-160m-sized Llama variants are not public, so the small rows follow TinyLlama/OpenLLaMA:
#   1.1B TinyLlama/TinyLlama-1.1B (22, 2048, 32, 4, 5632); 3B openlm-research/open_llama_3b (26, 3200, 32, 32, 8640);
#   7B/13B/70B meta-llama/Llama-2-*-hf; 34B codellama/CodeLlama-34b-hf (48, 8192, 64, 8, 22016);
#   405B meta-llama/Llama-3.1-405B (126, 16384, 128, 8, 53248). The 0.1B/0.35B rows are GPT-2 small/medium
#   widths with a SwiGLU ffn of 8h/3 rounded up to a multiple of 256, as in Llama (Touvron et al. 2023, §2.2).
_SHAPES: tuple[tuple[float, int, int, int, int, int], ...] = (
    (0.1, 12, 768, 12, 12, 2048),
    (0.35, 24, 1024, 16, 16, 2816),
    (1.1, 22, 2048, 32, 4, 5632),
    (3.0, 26, 3200, 32, 32, 8640),
    (7.0, 32, 4096, 32, 32, 11008),
    (13.0, 40, 5120, 40, 40, 13824),
    (34.0, 48, 8192, 64, 8, 22016),
    (70.0, 80, 8192, 64, 8, 28672),
    (405.0, 126, 16384, 128, 8, 53248),
)
_DEFAULT_VOCAB = 32000  # Llama 2 tokenizer


def _nearest_shape(n_params: float) -> tuple[float, int, int, int, int, int]:
    # compare on a log scale: 5B is "closer" to 7B than to 3B in architecture terms
    return min(_SHAPES, key=lambda row: abs(math.log(row[0] * 1e9 / n_params)))


def model_from_params(n_params: float, *, name: str | None = None, vocab: int = _DEFAULT_VOCAB) -> ModelSpec:
    """A plausible Llama-style architecture with about `n_params` parameters (marked approximate).

    Width, heads and ffn come from the nearest published Llama-family shape; the layer count is then
    solved so that the total matches (embeddings + final norm + layers × per-layer params).
    """
    if not isinstance(n_params, int | float) or not math.isfinite(n_params):
        raise EstimatorError.of("model_params_finite", field="model.params", params=str(n_params))
    if not MIN_PARAMS <= n_params <= MAX_PARAMS:
        raise EstimatorError.of(
            "model_params_range", field="model.params", params=n_params, least=MIN_PARAMS, most=MAX_PARAMS
        )
    _, layers, hidden, heads, kv_heads, ffn = _nearest_shape(n_params)
    probe = ModelSpec(name="probe", layers=1, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=vocab)
    one_layer = count_params(probe).total - count_params(replace(probe, layers=0)).total
    fixed = count_params(replace(probe, layers=0)).total
    layers = max(1, round((n_params - fixed) / one_layer))
    label = name or f"approx-{n_params / 1e9:.3g}B"
    return replace(probe, name=label, layers=layers, approximate=True)


# --- (c) from a Hugging Face config.json ---------------------------------------------------


def _get(config: Mapping[str, Any], keys: tuple[str, ...], missing: list[str]) -> Any:
    """First present key among aliases; records the first alias as missing otherwise."""
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    missing.append(keys[0])
    return None


def _require(config: Mapping[str, Any], spec: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    missing: list[str] = []
    values = {field: _get(config, keys, missing) for field, keys in spec.items()}
    if missing:
        model_type = config.get("model_type")
        raise EstimatorError.of(
            "hf_config_missing", field="model.hf_config", model_type=str(model_type), missing=list(missing)
        )
    return values


_LLAMA_KEYS = {
    "layers": ("num_hidden_layers",),
    "hidden": ("hidden_size",),
    "heads": ("num_attention_heads",),
    "vocab": ("vocab_size",),
}


def _llama_like(config: Mapping[str, Any], *, qkv_bias: bool = False, tied_default: bool = False) -> ModelSpec:
    v = _require(config, {**_LLAMA_KEYS, "ffn": ("intermediate_size",)})
    return ModelSpec(
        name=str(config.get("_name_or_path") or config.get("model_type")),
        layers=int(v["layers"]),
        hidden=int(v["hidden"]),
        heads=int(v["heads"]),
        kv_heads=int(config.get("num_key_value_heads") or v["heads"]),
        ffn=int(v["ffn"]),
        vocab=int(v["vocab"]),
        mlp="swiglu",
        tied_embeddings=bool(config.get("tie_word_embeddings", tied_default)),
        head_dim=_head_dim(config),
        qkv_bias=bool(config.get("attention_bias", qkv_bias)),
    )


def _head_dim(config: Mapping[str, Any]) -> int | None:
    head_dim = config.get("head_dim")
    if head_dim is None:
        return None
    if int(head_dim) * int(config["num_attention_heads"]) == int(config["hidden_size"]):
        return None  # redundant with hidden // heads; keep the spec canonical
    return int(head_dim)


def _from_llama(config: Mapping[str, Any]) -> ModelSpec:
    return _llama_like(config)


def _from_qwen2(config: Mapping[str, Any]) -> ModelSpec:
    # Qwen2 has biases on q, k and v only (transformers models/qwen2/modeling_qwen2.py, Qwen2Attention)
    return replace(_llama_like(config), qkv_bias=True)


def _from_qwen3(config: Mapping[str, Any]) -> ModelSpec:
    # Qwen3 dropped the qkv bias and added per-head q/k RMSNorm (2·head_dim params a layer, not counted)
    return _llama_like(config)


def _from_gemma(config: Mapping[str, Any]) -> ModelSpec:
    # Gemma/Gemma 2: GeGLU (3 matrices, like SwiGLU), explicit head_dim, tied embeddings (modeling_gemma.py)
    return _llama_like(config, tied_default=True)


def _from_mixtral(config: Mapping[str, Any]) -> ModelSpec:
    base = _llama_like(config)
    v = _require(config, {"experts": ("num_local_experts",), "top_k": ("num_experts_per_tok",)})
    # a Mixtral routes every layer's tokens to its experts: none (review R10) is not a dense model but no model
    experts, top_k = _as_count(v["experts"], "num_local_experts", 1), _as_count(v["top_k"], "num_experts_per_tok", 1)
    return replace(base, experts=experts, experts_per_token=top_k, expert_ffn=base.ffn, moe_layers=base.layers)


def _multiples_in(start: int, stop: int, step: int) -> int:
    """How many i in range(start, stop) have i % step == 0, counted without iterating."""
    return max(0, (stop - 1) // step - (start - 1) // step) if stop > start else 0


def _sparse_layer_count(config: Mapping[str, Any], layers: int) -> int:
    # Qwen MoE: layer i is sparse when i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
    step = int(config.get("decoder_sparse_step") or 1)
    dense_only = {int(i) for i in config.get("mlp_only_layers") or []}
    sparse = _multiples_in(1, layers + 1, step)  # i + 1 runs over 1..layers
    return sparse - sum(1 for i in dense_only if 0 <= i < layers and (i + 1) % step == 0)


def _from_qwen_moe(config: Mapping[str, Any], *, qkv_bias: bool) -> ModelSpec:
    v = _require(
        config,
        {
            **_LLAMA_KEYS,
            "experts": ("num_experts",),
            "top_k": ("num_experts_per_tok",),
            "expert_ffn": ("moe_intermediate_size",),
        },
    )
    base = _llama_like({**config, "intermediate_size": config.get("intermediate_size") or v["expert_ffn"]})
    shared_width = int(config.get("shared_expert_intermediate_size") or 0)
    # one shared expert of width k·moe_intermediate is counted as k shared experts (same parameter count)
    shared = round(shared_width / int(v["expert_ffn"])) if shared_width else 0
    return replace(
        base,
        qkv_bias=qkv_bias,
        experts=int(v["experts"]),
        experts_per_token=int(v["top_k"]),
        expert_ffn=int(v["expert_ffn"]),
        shared_experts=shared,
        moe_layers=_sparse_layer_count(config, base.layers),
    )


def _from_phi3(config: Mapping[str, Any]) -> ModelSpec:
    # fused qkv_proj and gate_up_proj have the same shapes as separate ones (modeling_phi3.py)
    return _llama_like(config)


def _from_gpt2(config: Mapping[str, Any]) -> ModelSpec:
    v = _require(
        config,
        {"layers": ("n_layer",), "hidden": ("n_embd",), "heads": ("n_head",), "vocab": ("vocab_size",)},
    )
    hidden = int(v["hidden"])
    return ModelSpec(
        name=str(config.get("_name_or_path") or "gpt2"),
        layers=int(v["layers"]),
        hidden=hidden,
        heads=int(v["heads"]),
        kv_heads=int(v["heads"]),
        ffn=int(config.get("n_inner") or 4 * hidden),
        vocab=int(v["vocab"]),
        mlp="gelu",
        tied_embeddings=bool(config.get("tie_word_embeddings", True)),
        norm="layernorm",
        linear_bias=True,
        learned_positions=int(config.get("n_positions") or config.get("n_ctx") or 1024),
    )


def _from_gpt_neox(config: Mapping[str, Any]) -> ModelSpec:
    v = _require(config, {**_LLAMA_KEYS, "ffn": ("intermediate_size",)})
    return ModelSpec(
        name=str(config.get("_name_or_path") or "gpt_neox"),
        layers=int(v["layers"]),
        hidden=int(v["hidden"]),
        heads=int(v["heads"]),
        kv_heads=int(v["heads"]),
        ffn=int(v["ffn"]),
        vocab=int(v["vocab"]),
        mlp="gelu",
        tied_embeddings=bool(config.get("tie_word_embeddings", False)),
        norm="layernorm",
        linear_bias=bool(config.get("attention_bias", True)),
    )


def _falcon_kv_heads(config: Mapping[str, Any], heads: int) -> int:
    # falcon-7b: multi_query=True (1 kv head); falcon-40b/180b: new_decoder_architecture with num_kv_heads
    if config.get("new_decoder_architecture"):
        return int(config.get("num_kv_heads") or heads)
    return 1 if config.get("multi_query", True) else heads


def _from_falcon(config: Mapping[str, Any]) -> ModelSpec:
    v = _require(
        config,
        {
            "layers": ("num_hidden_layers", "n_layer"),
            "hidden": ("hidden_size",),
            "heads": ("num_attention_heads", "n_head"),
            "vocab": ("vocab_size",),
        },
    )
    hidden, heads = int(v["hidden"]), int(v["heads"])
    return ModelSpec(
        name=str(config.get("_name_or_path") or "falcon"),
        layers=int(v["layers"]),
        hidden=hidden,
        heads=heads,
        kv_heads=_falcon_kv_heads(config, heads),
        ffn=int(config.get("ffn_hidden_size") or 4 * hidden),
        vocab=int(v["vocab"]),
        mlp="gelu",
        tied_embeddings=bool(config.get("tie_word_embeddings", True)),
        norm="layernorm",
        linear_bias=bool(config.get("bias", False)),
    )


_MLA_KEYS = {
    **_LLAMA_KEYS,
    "ffn": ("intermediate_size",),
    "kv_lora_rank": ("kv_lora_rank",),
    "rope_dim": ("qk_rope_head_dim",),
    "nope_dim": ("qk_nope_head_dim",),
    "v_dim": ("v_head_dim",),
    "experts": ("n_routed_experts",),
    "top_k": ("num_experts_per_tok",),
    "expert_ffn": ("moe_intermediate_size",),
}


def mla_attention_params(config: Mapping[str, Any]) -> int:
    """Exact MLA attention parameters of one DeepSeek-V2/V3 layer (modeling_deepseek.py, DeepseekV2Attention)."""
    h, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    q_head = int(config["qk_nope_head_dim"]) + int(config["qk_rope_head_dim"])
    kv_rank, rope = int(config["kv_lora_rank"]), int(config["qk_rope_head_dim"])
    q_rank = config.get("q_lora_rank")
    q_params = h * heads * q_head if not q_rank else h * int(q_rank) + int(q_rank) + int(q_rank) * heads * q_head
    kv_up = kv_rank * heads * (int(config["qk_nope_head_dim"]) + int(config["v_head_dim"]))
    kv_params = h * (kv_rank + rope) + kv_rank + kv_up
    return q_params + kv_params + heads * int(config["v_head_dim"]) * h


def _divisors(n: int) -> list[int]:
    """The divisors of n in O(sqrt n) steps."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _mla_equivalent_heads(config: Mapping[str, Any]) -> tuple[int, int]:
    """(head_dim, kv_heads) of a GQA layer with MLA's parameter count and about its KV-cache size.

    MLA caches kv_lora_rank + rope_dim values per token and layer (DeepSeek-V2 paper, §2.1.2, Table 1);
    GQA caches 2·kv_heads·head_dim. Both cannot match exactly; parameters are matched first.
    """
    h, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    cache_values = int(config["kv_lora_rank"]) + int(config["qk_rope_head_dim"])
    target = mla_attention_params(config)
    head_dim = max(1, round((target / (2 * h) - cache_values / 2) / heads))
    divisors = _divisors(heads)
    kv_heads = min(divisors, key=lambda g: abs(2 * g * head_dim - cache_values))
    head_dim = max(1, round(target / (2 * h * (heads + kv_heads))))
    return head_dim, kv_heads


def _from_deepseek(config: Mapping[str, Any]) -> ModelSpec:
    v = _require(config, _MLA_KEYS)
    head_dim, kv_heads = _mla_equivalent_heads(config)
    layers = int(v["layers"])
    first_dense = int(config.get("first_k_dense_replace") or 0)
    step = int(config.get("moe_layer_freq") or 1)
    moe_layers = _multiples_in(first_dense, layers, step)
    return ModelSpec(
        name=str(config.get("_name_or_path") or config.get("model_type")),
        layers=layers,
        hidden=int(v["hidden"]),
        heads=int(v["heads"]),
        kv_heads=kv_heads,
        ffn=int(v["ffn"]),
        vocab=int(v["vocab"]),
        tied_embeddings=bool(config.get("tie_word_embeddings", False)),
        head_dim=head_dim,
        experts=int(v["experts"]),
        experts_per_token=int(v["top_k"]),
        expert_ffn=int(v["expert_ffn"]),
        shared_experts=int(config.get("n_shared_experts") or 0),
        moe_layers=moe_layers,
        mla=(
            int(config.get("q_lora_rank") or 0),
            int(v["kv_lora_rank"]),
            int(v["nope_dim"]),
            int(v["rope_dim"]),
            int(v["v_dim"]),
        ),
        first_dense_layers=first_dense if step == 1 else 0,
    )


# Every count a family reads from config.json, with its least allowed value; the most is MAX_DIM. They are
# all checked before a builder runs, so no builder sees a bool, a string, a fraction, an infinity or a count
# large enough to make arithmetic on it slow. (Non-zero steps: transformers divides by decoder_sparse_step and
# moe_layer_freq, modeling_qwen2_moe.py and modeling_deepseek.py.)
_HF_COUNTS: dict[str, int] = {
    **dict.fromkeys(("num_hidden_layers", "n_layer", "hidden_size", "n_embd", "num_attention_heads", "n_head"), 1),
    **dict.fromkeys(("num_key_value_heads", "num_kv_heads", "intermediate_size", "n_inner", "ffn_hidden_size"), 1),
    **dict.fromkeys(("vocab_size", "head_dim", "moe_intermediate_size", "n_positions", "n_ctx"), 1),
    **dict.fromkeys(("kv_lora_rank", "v_head_dim", "decoder_sparse_step", "moe_layer_freq"), 1),
    **dict.fromkeys(("num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok"), 0),
    **dict.fromkeys(("shared_expert_intermediate_size", "n_shared_experts", "first_k_dense_replace"), 0),
    **dict.fromkeys(("qk_rope_head_dim", "qk_nope_head_dim", "q_lora_rank"), 0),
}


def _as_count(value: Any, key: str, least: int) -> int:
    """An integer in least..MAX_DIM (an integral float such as 4096.0 counts), or EstimatorError naming the key."""
    ok = (type(value) is int) or (type(value) is float and math.isfinite(value) and value.is_integer())
    if not ok or not least <= value <= MAX_DIM:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise EstimatorError.of(
            "hf_config_count", field=f"model.hf_config.{key}", key=key, least=least, most=MAX_DIM, value=shown
        )
    return int(value)


# The numbers config.json states beyond the counts that the estimator reads as floats (and multiplies: a
# context length by a rope factor): each must be finite and at most 2**53 - 1 in size, the range RFC 8259
# §6 calls interoperable (what an IEEE double holds exactly). The largest real ones are far inside it (a
# rope_theta of 10**7, a context of 10**7 tokens), and a product of two stays far from float overflow.
MAX_CONFIG_NUMBER = 2**53 - 1
CONTEXT_LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_sequence_length")


def check_config_numbers(config: Mapping[str, Any]) -> None:
    """EstimatorError naming the key for a number read as a float that is not finite or too large for one."""
    scaling = config.get("rope_scaling")
    keyed = [(key, config.get(key)) for key in ("rope_theta", "rotary_emb_base", *NORM_EPS_KEYS, *CONTEXT_LENGTH_KEYS)]
    if isinstance(scaling, Mapping):
        keyed += [(f"rope_scaling.{key}", scaling.get(key)) for key in ("factor", *ROPE_PARAM_KEYS)]
    for key, value in keyed:
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > MAX_CONFIG_NUMBER:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise EstimatorError.of(
                "hf_config_number", field=f"model.hf_config.{key}", key=key, most=MAX_CONFIG_NUMBER, value=shown
            )


# Numbers that must be at least 1 where a config states them: a context length (transformers' PretrainedConfig
# reads it as a count of positions) and a RoPE scaling factor (transformers modeling_rope_utils.py validates
# `factor` as a float >= 1 for the linear, dynamic, yarn, longrope and llama3 types). Review R10: a factor of -2
# was reported on seq_len, a context of 0 accepted.
_AT_LEAST_ONE = (*CONTEXT_LENGTH_KEYS, "rope_scaling.factor")


def _check_at_least_one(config: Mapping[str, Any]) -> None:
    scaling = config.get("rope_scaling")
    stated = {key: config.get(key) for key in CONTEXT_LENGTH_KEYS}
    if isinstance(scaling, Mapping):
        stated["rope_scaling.factor"] = scaling.get("factor")
    for key in _AT_LEAST_ONE:
        value = stated.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 1:
            raise EstimatorError.of("hf_config_at_least", field=f"model.hf_config.{key}", key=key, least=1, value=value)


# The true/false keys a family reads from config.json (transformers' configuration_*.py declare each a bool). Review
# R12: bool() of the string "yes" (or "false") was true. A null is not stated: the family's default applies.
_HF_FLAGS = ("tie_word_embeddings", "attention_bias", "bias", "multi_query", "new_decoder_architecture")


def _checked_flags(config: dict[str, Any]) -> None:
    """Each stated flag of `config` is JSON true or false (EstimatorError naming the key); a null one is dropped."""
    for key in _HF_FLAGS:
        value = config.get(key, False)
        if value is None:
            del config[key]
        elif not isinstance(value, bool):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise EstimatorError.of("hf_config_flag", field=f"model.hf_config.{key}", key=key, value=shown)


def _checked_counts(config: Mapping[str, Any]) -> dict[str, Any]:
    """config with every known count validated and made an int, its flags true or false (_checked_flags), and its
    other numbers checked (check_config_numbers), before any builder uses one."""
    check_config_numbers(config)
    _check_at_least_one(config)
    checked = dict(config)
    _checked_flags(checked)
    for key, least in _HF_COUNTS.items():
        if checked.get(key) is not None:
            checked[key] = _as_count(checked[key], key, least)
    dense_only = checked.get("mlp_only_layers")
    if dense_only is not None:
        if not isinstance(dense_only, list) or len(dense_only) > MAX_DIM:
            raise EstimatorError.of("hf_config_mlp_only_layers", field="model.hf_config.mlp_only_layers")
        checked["mlp_only_layers"] = [_as_count(i, "mlp_only_layers", 0) for i in dense_only]
    return checked


_FAMILIES: dict[str, Callable[[Mapping[str, Any]], ModelSpec]] = {
    "llama": _from_llama,
    "mistral": _from_llama,
    "mixtral": _from_mixtral,
    "qwen2": _from_qwen2,
    "qwen2_moe": lambda c: _from_qwen_moe(c, qkv_bias=True),
    "qwen3": _from_qwen3,
    "qwen3_moe": lambda c: _from_qwen_moe(c, qkv_bias=False),
    "gemma": _from_gemma,
    "gemma2": _from_gemma,
    "phi3": _from_phi3,
    "gpt2": _from_gpt2,
    "gpt_neox": _from_gpt_neox,
    "falcon": _from_falcon,
    "deepseek_v2": _from_deepseek,
    "deepseek_v3": _from_deepseek,
}
SUPPORTED_HF_TYPES: tuple[str, ...] = tuple(sorted(_FAMILIES))
APPROXIMATE_NOTES = {
    "deepseek_v2": "MLA attention approximated by GQA with the same parameter count; KV cache is approximate.",
    "deepseek_v3": "MLA attention approximated by GQA with the same parameter count; KV cache is approximate. "
    "The multi-token-prediction module is not counted.",
}


def model_from_hf_config(config: Mapping[str, Any], *, name: str | None = None) -> ModelSpec:
    """A ModelSpec from a Hugging Face config.json dict; unknown model_type or missing keys raise."""
    if not isinstance(config, Mapping):
        raise EstimatorError.of("hf_config_object", field="model.hf_config")
    model_type = config.get("model_type")
    builder = _FAMILIES.get(str(model_type))
    if builder is None:
        raise EstimatorError.of(
            "hf_config_model_type",
            field="model.hf_config.model_type",
            model_type=str(model_type),
            supported=list(SUPPORTED_HF_TYPES),
        )
    config = _checked_counts(config)
    try:
        model = builder(config)
    except (TypeError, ValueError, KeyError, ArithmeticError) as exc:
        if isinstance(exc, EstimatorError):
            raise
        raise EstimatorError.of("hf_config_malformed", field="model.hf_config", detail=str(exc)) from exc
    theta = config.get("rope_theta", config.get("rotary_emb_base"))
    if isinstance(theta, int | float) and not isinstance(theta, bool) and theta > 0 and not model.learned_positions:
        model = replace(model, rope_theta=float(theta))
    model = replace(
        model,
        rope_scaling=_rope_scaling(config),
        rope_params=_rope_params(config),
        norm_eps=_norm_eps(config),
        family=str(model_type),
    )
    if name:
        model = replace(model, name=name)
    validate_model(model)
    return model


NORM_EPS_KEYS = ("rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps", "norm_epsilon")


def _norm_eps(config: Mapping[str, Any]) -> float | None:
    """The normalisation epsilon config.json states (the key depends on the family), None when absent."""
    for key in NORM_EPS_KEYS:
        value = config.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def _rope_scaling(config: Mapping[str, Any]) -> tuple[str, float] | None:
    """config.json rope_scaling as (rope_type, factor); transformers reads `rope_type`, older configs `type`."""
    scaling = config.get("rope_scaling")
    if not isinstance(scaling, Mapping):
        return None
    kind, factor = scaling.get("rope_type", scaling.get("type")), scaling.get("factor")
    if not isinstance(kind, str) or not isinstance(factor, int | float) or isinstance(factor, bool):
        return None
    return kind, float(factor)


# rope_scaling keys beyond the type and factor that a launch passes on (YaRN: transformers
# modeling_rope_utils._compute_yarn_parameters; DeepSeek-V2/V3 config.json)
ROPE_PARAM_KEYS = ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "original_max_position_embeddings")


def _rope_params(config: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    """config.json rope_scaling's numbers other than the factor (ROPE_PARAM_KEYS), those it states."""
    scaling = config.get("rope_scaling")
    if not isinstance(scaling, Mapping):
        return ()
    return tuple(
        (key, float(value))
        for key in ROPE_PARAM_KEYS
        if isinstance(value := scaling.get(key), int | float) and not isinstance(value, bool)
    )
