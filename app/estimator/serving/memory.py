"""Bytes and tokens of one replica: a model's weights in a storage format and its KV cache per token (parameter
groups as serving reads them, the experts a batch touches, the context length a config allows), and what the
engine's memory budget leaves the paged KV cache (`serving_memory`, `kv_cache_tokens`, `max_concurrency`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.estimator.models import CONTEXT_LENGTH_KEYS, check_config_numbers
from app.estimator.params import count_params, mlp_params
from app.estimator.serving.config import ServingConfig, ServingMemory
from app.estimator.serving.engines import (
    ENGINE_DEFAULTS,
    _batched_tokens,
    _max_num_seqs,
    _memory_fraction,
    engine_release,
)
from app.estimator.serving.scope import _MEMO
from app.estimator.specs import GIB, GpuSpec, ModelSpec

# Bytes per weight of each storage format. Quantised formats also store one 16-bit scale per group
# of `group` weights (int4 also a packed 4-bit zero point): AWQ/GPTQ default group size 128
# (AutoAWQ `q_group_size=128`, AutoGPTQ `group_size=128`); int8 weight-only and FP8 use one scale per
# output channel (vLLM fp8 per-channel/per-tensor, gpt-fast int8), i.e. a negligible group scale.
WEIGHT_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
GROUP_OVERHEAD_BYTES: dict[str, float] = {"int4": 2.0 + 0.5, "int8": 2.0, "fp8": 4.0}  # per group
DEFAULT_GROUP_SIZE: dict[str, int] = {"int4": 128, "int8": 4096, "fp8": 4096}  # per-channel ≈ one group per row
KV_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0}


# Activation workspace of the memory profile: bytes per batched token = factor x (3*ffn/tp + 4*h) x 2
# bytes, plus the sampler's fp32 logits for max_num_seqs rows. Fitted on vLLM "Memory profiling
# results" lines (#10517: peak_torch_memory - weights = 2.07 GiB at 20000 tokens, 2.99 GiB at 29000).
WORKSPACE_FACTOR = 0.88
# Memory outside the PyTorch allocator: CUDA context, cuBLAS workspaces; NCCL and custom all-reduce
# buffers with TP (vLLM logs: non_torch_memory 0.35 GiB on an RTX 3090 (#10517), 1.79 GiB at TP1 and
# 3.58 GiB at TP2 on an 80 GB card (#10511)). At one GPU the profiler's own figure, as logged since its
# fix in vllm-project/vllm#12126 ("further polish memory profiling": 0.16 GiB for an H100 at TP 1) and in the
# #10517 run (0.35 GiB, RTX 3090, TP 1): the larger of the two. The 1.79 GiB of #10511 was read before that
# fix; 0.6 GiB before this change read the KV cache of the #10517 runs 5.7-5.8 % short (0.25 GiB, 2,048
# tokens of Llama-3.1-8B) of the blocks they logged.
NON_TORCH_GIB = 0.35
NON_TORCH_TP_GIB = 1.8
# CUDA graphs for decode batches up to graph_max_batch: vLLM logs "Graph capturing finished ... took
# 0.3-1.2 GiB"; they live in the (1 - utilisation) margin for vLLM and SGLang, inside TRT-LLM's.
GRAPH_GIB = 0.5


def mla_cache_values(hf_config: Mapping[str, Any] | None) -> int:
    """Values MLA caches per token and layer, kv_lora_rank + qk_rope_head_dim (DeepSeek-V2 paper §2.1.2);
    0 for a model without MLA."""
    if not hf_config or not hf_config.get("kv_lora_rank"):
        return 0
    return int(hf_config["kv_lora_rank"]) + int(hf_config.get("qk_rope_head_dim") or 0)


# config.json keys that bound the sequence length, as vLLM reads them (vllm/config.py
# `_get_and_verify_max_len`: the smallest of those present), and the rope scalings that do not extend it
# there (llama3 and longrope configs already state the extended length).
CONTEXT_KEYS = CONTEXT_LENGTH_KEYS
UNSCALED_ROPE = ("default", "llama3", "longrope", "su", "mrope")


def context_limit(hf_config: Mapping[str, Any] | None) -> int | None:
    """The longest sequence (prompt + output) an engine serves the model at, None when the config says none:
    the config's length times the rope_scaling factor (YaRN: of original_max_position_embeddings)."""
    if not hf_config:
        return None
    check_config_numbers(hf_config)  # finite, and small enough that the product below is
    lengths = [
        int(hf_config[k]) for k in CONTEXT_KEYS if isinstance(hf_config.get(k), int | float) and hf_config[k] > 0
    ]
    if not lengths:
        return None
    limit = float(min(lengths))
    scaling = hf_config.get("rope_scaling")
    if isinstance(scaling, Mapping) and isinstance(scaling.get("factor"), int | float):
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind not in UNSCALED_ROPE:
            original = scaling.get("original_max_position_embeddings")
            if kind == "yarn" and isinstance(original, int | float) and original > 0:
                limit = float(original)
            limit *= float(scaling["factor"])
    return int(limit)


def kv_bytes_per_token(model: ModelSpec, kv_format: str, mla_cache_values: int = 0) -> float:
    """KV-cache bytes per token for the whole model: 2·L·kv_heads·head_dim (GQA) or L·(rank + rope) (MLA)."""
    values = mla_cache_values if mla_cache_values else 2 * model.kv_heads * model.d_head
    return model.layers * values * KV_BYTES[kv_format]


def kv_bytes_per_token_per_gpu(model: ModelSpec, kv_format: str, tp: int, pp: int, mla_cache_values: int = 0) -> float:
    """KV heads split over TP ranks (replicated when kv_heads < tp; MLA's latent is replicated); layers over PP."""
    if mla_cache_values:
        per_layer = mla_cache_values * KV_BYTES[kv_format]
    else:
        heads_per_rank = max(1.0, model.kv_heads / tp)
        per_layer = 2 * heads_per_rank * model.d_head * KV_BYTES[kv_format]
    return math.ceil(model.layers / pp) * per_layer


def weight_bytes_per_param(fmt: str, group_size: int | None = None) -> float:
    group = group_size or DEFAULT_GROUP_SIZE.get(fmt, 0)
    return WEIGHT_BYTES[fmt] + (GROUP_OVERHEAD_BYTES.get(fmt, 0.0) / group if group else 0.0)


@dataclass(frozen=True, slots=True)
class _Parts:
    """Parameter groups of a model as serving reads them."""

    quantised: float  # linear layers outside the routed experts (attention, dense MLPs, shared experts, router)
    expert: float  # one routed expert's parameters
    experts_total: float  # all routed experts of all MoE layers
    head: float  # the LM head matrix (16-bit; quantisers keep it and the embedding unquantised)
    embedding: float  # input table (16-bit; looked up, not streamed)
    small: float  # norms, biases


@lru_cache(maxsize=1024)
def _parts(model: ModelSpec) -> _Parts:
    counts = count_params(model)
    head = float(model.vocab * model.hidden)  # tied or not, the LM head GEMM reads V × h
    small = float(counts.norms_per_layer * model.layers + counts.final_norm)
    if model.is_moe:
        one = float(mlp_params(model, model.expert_ffn or model.ffn))
        experts_total = one * model.experts * model.moe_layers
    else:
        one = experts_total = 0.0
    quantised = float(counts.total) - counts.embedding - counts.lm_head - small - experts_total
    return _Parts(quantised, one, experts_total, head, float(counts.embedding), small)


def weights_bytes(model: ModelSpec, fmt: str, group_size: int | None = None) -> float:
    """Stored bytes of the whole model: linear layers in `fmt` (with group scales); embedding, head and norms
    in 16 bits."""
    p = _parts(model)
    per = weight_bytes_per_param(fmt, group_size)
    head = 0.0 if model.tied_embeddings else p.head
    return (p.quantised + p.experts_total) * per + (p.embedding + head + p.small) * 2.0


def draft_weights_bytes(model: ModelSpec, cfg: ServingConfig) -> float:
    """Stored bytes of the speculation's draft (whole, before TP): an EAGLE-3 head or an MTP module is one decoder
    layer of the target, in its format, and an LM head in 16 bits (serving_levers); a draft model its own linear
    layers and head; n-gram lookup none."""
    spec = cfg.speculative
    if spec is None or spec.method == "ngram":
        return 0.0
    if spec.draft is not None:
        return weights_bytes(spec.draft, cfg.weight_format, cfg.group_size)
    p = _parts(model)
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    return (p.quantised + p.experts_total) / model.layers * per + p.head * 2.0


def _draft_kv_per_token(model: ModelSpec, cfg: ServingConfig, tp: int) -> float:
    """KV bytes per token per GPU the draft caches beside the target's: one layer of the target's (EAGLE-3 head,
    MTP module), or the draft model's whole cache."""
    spec = cfg.speculative
    if spec is None or spec.method == "ngram":
        return 0.0
    if spec.draft is not None:
        return kv_bytes_per_token_per_gpu(spec.draft, cfg.kv_format, tp, 1)
    return kv_bytes_per_token_per_gpu(model, cfg.kv_format, tp, 1, cfg.mla_cache_values) / model.layers


def expected_experts_touched(experts: int, top_k: int, tokens: float) -> float:
    """Distinct experts per MoE layer that `tokens` uniformly routed top-k picks touch: E·(1 − (1 − k/E)^T)."""
    if experts <= 0 or tokens <= 0:
        return 0.0
    untouched: float = (1.0 - top_k / experts) ** tokens
    return experts * (1.0 - untouched)


def _workspace_bytes(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, tokens: int, layers: int) -> float:
    """Activation peak of the engine's profiling step over `tokens` tokens, per GPU (`layers` on this GPU)."""
    width = model.ffn if not model.is_moe else max(model.ffn, (model.expert_ffn or model.ffn) * model.experts_per_token)
    per_token = WORKSPACE_FACTOR * (3.0 * width / tp + 4.0 * model.hidden) * 2.0
    logits = _max_num_seqs(cfg, gpu) * model.vocab * 4.0  # fp32 logits of the last token of each sequence
    held = 0.0
    if tp > 1 and engine_release(cfg.release).profile_holds_allreduce_inputs:
        # two all-reduces per layer (attention and MLP outputs) and the vocab-parallel embedding's, each
        # a [tokens, hidden] 16-bit tensor that stays reserved until the forward synchronises
        held = (2 * layers + 1) * tokens * model.hidden * 2.0
    return tokens * per_token + logits + held


def attention_ranks(cfg: ServingConfig, tp: int) -> int:
    """Ranks of a replica that each run attention for their own sequences: tp under DP attention, else 1."""
    return tp if cfg.dp_attention else 1


def replica_weights_per_gpu(model: ModelSpec, cfg: ServingConfig, tp: int, pp: int) -> float:
    """Weight bytes on each GPU: all split over tp x pp; under DP attention the layers outside the routed experts
    (attention, dense MLPs, shared experts, embedding and head) whole on every rank and the routed experts over the
    tp ranks (expert parallel)."""
    whole = weights_bytes(model, cfg.weight_format, cfg.group_size) + draft_weights_bytes(model, cfg)
    if not cfg.dp_attention:
        return whole / (tp * pp)
    experts = _parts(model).experts_total * weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    return (whole - experts) / pp + experts / (tp * pp)


def serving_memory(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> ServingMemory:
    """Per-GPU memory: weights, the KV cache the engine allocates, workspace and reserve."""
    total = gpu.memory_gib * GIB
    weights = replica_weights_per_gpu(model, cfg, tp, pp)
    fraction = _memory_fraction(cfg, tp)
    non_torch = (NON_TORCH_GIB + (NON_TORCH_TP_GIB if tp * pp > 1 else 0.0)) * GIB
    workspace = _workspace_bytes(model, cfg, gpu, tp, _batched_tokens(cfg, gpu), math.ceil(model.layers / pp))
    graphs = GRAPH_GIB * GIB
    if cfg.engine == "sglang":
        kv = total * fraction - weights - non_torch
    elif cfg.engine == "trt-llm":
        kv = fraction * (total - weights - workspace - non_torch - graphs)
    else:
        kv = total * fraction - weights - workspace - non_torch
    kv = max(0.0, kv)
    reserve = max(0.0, total - weights - kv - workspace)
    return ServingMemory(weights=weights, kv_cache=kv, activations=workspace, engine_reserve=reserve, capacity=total)


def _rank_kv_tokens(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Tokens one GPU's paged KV cache holds (whole blocks): the replica's under TP attention (each rank holds its
    share of every token), one rank's own sequences' under DP attention (each rank holds whole tokens: its
    attention runs unsplit, attention tp 1). Within an answer's scope (scope._MEMO), once per replica and traffic: a
    search asks for it a thousand times per answer on a large catalog."""
    memo = _MEMO.get()
    if memo is None:
        return _new_rank_kv_tokens(model, cfg, gpu, tp, pp)
    key = (model, cfg, gpu.id, tp, pp)  # (a GPU type is its id: hardware.load_gpus, as memo._where keys it)
    found = memo.kv_tokens.get(key)
    if found is None:
        found = memo.kv_tokens[key] = _new_rank_kv_tokens(model, cfg, gpu, tp, pp)
    return found


def _new_rank_kv_tokens(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    memory = serving_memory(model, cfg, gpu, tp, pp)
    split = 1 if cfg.dp_attention else tp
    per_token = kv_bytes_per_token_per_gpu(model, cfg.kv_format, split, pp, cfg.mla_cache_values)
    per_token += _draft_kv_per_token(model, cfg, split)
    block = ENGINE_DEFAULTS[cfg.engine].block_size
    return int(memory.kv_cache // (per_token * block)) * block


def sequence_kv_tokens(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Tokens of KV cache one sequence may use: the replica's under TP attention, one rank's under DP attention (a
    sequence lives on one rank; SGLang caps a request at its rank's max_total_num_tokens)."""
    return _rank_kv_tokens(model, cfg, gpu, tp, pp)


def kv_cache_tokens(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Tokens one replica's paged KV cache holds (whole blocks); under DP attention the sum of its ranks'."""
    return _rank_kv_tokens(model, cfg, gpu, tp, pp) * attention_ranks(cfg, tp)


def _blocks_per_sequence(tokens: int, block: int) -> int:
    return math.ceil(tokens / block)


def max_concurrency(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Sequences of input + output tokens one replica holds at once: KV blocks, max_num_seqs."""
    return _sequences(cfg, gpu, tp, _rank_kv_tokens(model, cfg, gpu, tp, pp), 1.0)


def _sequences(cfg: ServingConfig, gpu: GpuSpec, tp: int, cache_tokens: int, share: float) -> int:
    """Sequences one replica runs in `cache_tokens` (one rank's: a sequence lives on one rank) when each holds its
    input and (1 + share) / 2 of its output, whole blocks (share 1: input + output); at most max_num_seqs a rank."""
    block = ENGINE_DEFAULTS[cfg.engine].block_size
    if share >= 1:
        per_seq: float = _blocks_per_sequence(cfg.input_tokens + cfg.output_tokens, block) * block
    else:  # a growing cache: the tokens held on average over the decode, half a block left part-filled
        per_seq = cfg.input_tokens + (1 + share) * cfg.output_tokens / 2 + block / 2
    ranks = attention_ranks(cfg, tp)  # under DP attention each rank schedules its own (max_num_seqs each)
    return ranks * max(0, min(_max_num_seqs(cfg, gpu), int(cache_tokens // per_seq)))


def held_sequences(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Sequences one replica runs at once under load by its engine's KV rule: a request holds its prompt, the output
    it has generated, and the engine's reserve share s of the output still owed (ENGINE_DEFAULTS kv_reserve_share),
    input + (1 + s)·output / 2 tokens averaged over its decode (vLLM V1, s = 0: input + output / 2, blocks allocated
    as tokens come; TensorRT-LLM's GUARANTEED_NO_EVICT, s = 1: input + output, `max_concurrency`); at most
    max_num_seqs, and at least `max_concurrency` (what the cache holds at whole lengths). Steers the load search and
    the simulated replica's sequence slots; `max_concurrency` stays the figure reported (as vLLM logs it)."""
    cache_tokens = _rank_kv_tokens(model, cfg, gpu, tp, pp)
    full = _sequences(cfg, gpu, tp, cache_tokens, 1.0)
    share = ENGINE_DEFAULTS[cfg.engine].kv_reserve_share
    if full < 1 or share >= 1:
        return full
    return max(full, _sequences(cfg, gpu, tp, cache_tokens, share))
