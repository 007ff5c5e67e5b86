"""Context parallelism and the attention kernel: no stack runs context parallelism with eager attention (Megatron-LM
megatron/core/transformer/dot_product_attention.py: "Context parallelism is only supported by TEDotProductAttention!";
torchtitan's context parallelism patches F.scaled_dot_product_attention, whose flash / memory-efficient / cuDNN
backends run the ring). Eager attention under cp was sized with only the (s/cp)² diagonal block of scores, where
each rank keeps its s/cp queries against all s keys: Llama 3.1 8B at 8,192 tokens, cp 8, 32 heads, 32 layers keeps
1024 × 8192 × 32 × 6 B × 32 ≈ 48 GiB of scores, and it read 11.7 GiB of activations and fit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, EstimatorError, Plan, Workload

LLAMA_8B = get_preset("llama-3.1-8b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)


def test_eager_attention_under_context_parallelism_is_refused_on_plan_attention() -> None:
    workload = Workload(task="full_finetune", seq_len=8192)
    plan = Plan(cp=8, zero_stage=3, flash_attention=False, attention="eager")
    with pytest.raises(EstimatorError) as raised:
        estimate_memory(LLAMA_8B, workload, plan, H100)
    assert raised.value.code == "cp_eager_attention" and raised.value.field == "plan.attention"
    estimate_memory(LLAMA_8B, workload, replace(plan, attention="sdpa"), H100)  # SDPA runs the ring
    estimate_memory(LLAMA_8B, workload, replace(plan, cp=1, dp=8), H100)  # eager without cp is sized


def test_the_zero3_advice_names_the_ranks_it_shards_over_with_context_parallelism() -> None:
    """ZeRO-3 shards over dp × cp (Megatron's data-parallel group with context parallelism, torchtitan's FSDP mesh
    dp_shard × cp), as the estimate does: at dp 1 × cp 8 the advice said "ZeRO-3 over 1 data-parallel GPUs"."""
    workload = Workload(task="full_finetune", seq_len=65536)
    advice = [
        w
        for w in estimate_memory(LLAMA_8B, workload, Plan(cp=8, recompute="full"), H100).warnings
        if w.code == "no_fit"
    ]
    assert len(advice) == 1 and advice[0].params["dp"] == 8
