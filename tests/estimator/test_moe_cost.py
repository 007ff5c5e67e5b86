"""MoE pays for its dispatch and its grouped GEMMs, not only for its active FLOPs.

- Dispatch: Megatron-Core's token permutation copies each token once per chosen expert and the
  un-permutation reads the k outputs back (megatron/core/transformer/moe/moe_utils.py `permute`,
  `unpermute`): 2h + 2kh elements per token per MoE layer, plus the router logits.
- Grouped GEMMs: each local expert sees tokens × k × ep / E rows; with few rows or narrow experts the
  GEMM runs further from peak (the same shape curve as dense GEMMs, performance._shape_efficiency).
"""

from __future__ import annotations

import pytest

from app.estimator.compute import _dispatch_elements, routed_expert_share
from app.estimator.hardware import get_gpu
from app.estimator.performance import microbatch_compute_s
from app.estimator.presets import get_preset
from app.estimator.specs import Plan, Workload

QWEN3_MOE = get_preset("qwen3-30b-a3b").model  # 128 experts, top-8, expert width 768, hidden 2048
LLAMA = get_preset("llama-3.1-8b").model


def test_dispatch_traffic_is_counted_for_moe_only() -> None:
    k, h = QWEN3_MOE.experts_per_token, QWEN3_MOE.hidden
    assert _dispatch_elements(QWEN3_MOE) == pytest.approx(2 * h + 2 * k * h + 2 * QWEN3_MOE.experts)
    assert _dispatch_elements(LLAMA) == 0.0


def test_routed_experts_are_most_of_the_gemm_weights_of_a_fine_grained_moe() -> None:
    assert 0.4 < routed_expert_share(QWEN3_MOE) < 0.9
    assert routed_expert_share(LLAMA) == 0.0


def test_fewer_tokens_per_expert_run_slower() -> None:
    """ep = 8 gathers 8x the rows per local expert than ep = 1 at the same micro-batch."""
    workload = Workload(task="pretrain", seq_len=4096)
    gpu = get_gpu("h100-80g-sxm")
    alone, _ = microbatch_compute_s(QWEN3_MOE, workload, Plan(dp=8, ep=1, micro_batch=1), gpu)
    grouped, _ = microbatch_compute_s(QWEN3_MOE, workload, Plan(dp=8, ep=8, micro_batch=1), gpu)
    assert grouped < alone
