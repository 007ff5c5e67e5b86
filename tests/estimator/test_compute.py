"""FLOP counts against the closed forms of the papers that defined them."""

from __future__ import annotations

import pytest

from app.estimator.compute import (
    decode_weight_bytes,
    kv_cache_bytes,
    megatron_flops_per_iteration,
    prefill_flops_per_token,
    training_flops,
)
from app.estimator.specs import LoraSpec, ModelSpec, Workload
from tests.estimator.perf_cases import LLAMA2_7B, gpt3_style

# GPT-3 175B: 96 layers, h = 12288, 96 heads, s = 2048, V = 51200 (Brown et al. 2020 Table 2.1;
# Narayanan et al. 2021 Table 1 uses the same shape).
GPT3 = gpt3_style("gpt3-175b", 96, 12288, 96)
SEQ = 2048
# Biases and LayerNorms (~13h per layer against 12h²) are GEMM-free in the closed form: 1e-3 covers them.
REL = 1e-3


def test_model_flops_equal_megatron_72_formula() -> None:
    """Korthikanti et al. 2022 §5 / Megatron `num_floating_point_operations`: 72·B·s·L·h²(1+s/6h+V/12Lh)."""
    ours = training_flops(GPT3, Workload(task="pretrain", seq_len=SEQ)).model * SEQ
    assert ours == pytest.approx(megatron_flops_per_iteration(1, SEQ, 96, 12288, 51200, full_recompute=False), rel=REL)


def test_full_recompute_hardware_flops_equal_megatron_96_formula() -> None:
    """Narayanan et al. 2021: 96·B·s·L·h²(1+s/6h+V/16Lh) counts the recomputed forward (no causal halving)."""
    flops = training_flops(GPT3, Workload(task="pretrain", seq_len=SEQ), recompute="full", flash=False)
    expected = megatron_flops_per_iteration(1, SEQ, 96, 12288, 51200, full_recompute=True)
    assert flops.hardware * SEQ == pytest.approx(expected, rel=REL)


def test_selective_recompute_adds_only_the_attention_core() -> None:
    workload = Workload(task="pretrain", seq_len=SEQ)
    plain = training_flops(GPT3, workload, flash=False)
    selective = training_flops(GPT3, workload, recompute="selective", flash=False)
    assert selective.matmul_hw == plain.matmul_hw
    assert selective.attention_hw - plain.attention_hw == pytest.approx(4 * 96 * 12288 * SEQ)


def test_flash_attention_executes_half_of_the_causal_scores() -> None:
    workload = Workload(task="pretrain", seq_len=SEQ)
    assert training_flops(GPT3, workload, flash=True).attention_hw == pytest.approx(
        training_flops(GPT3, workload, flash=False).attention_hw / 2
    )


def test_six_psi_dominates_for_a_7b_model() -> None:
    """Kaplan et al. 2020: C ≈ 6N per token; attention adds 12·L·h·s (≈ 6 % at s = 2048 for 7B)."""
    flops = training_flops(LLAMA2_7B, Workload(task="pretrain", seq_len=SEQ)).model
    assert 6 * 6.74e9 < flops < 6 * 6.74e9 * 1.1


def test_lora_skips_weight_gradients_of_the_frozen_base() -> None:
    """Forward 2Ψ + activation gradients 2Ψ (not 6Ψ); the attention core keeps its full backward."""
    full = training_flops(LLAMA2_7B, Workload(task="full_finetune", seq_len=SEQ)).model
    lora = training_flops(LLAMA2_7B, Workload(task="lora", seq_len=SEQ, lora=LoraSpec(rank=16))).model
    attention = 12 * 32 * 4096 * SEQ
    assert lora - attention == pytest.approx((full - attention) * 4 / 6, rel=0.01)  # adapters are ~0.6 %


def test_moe_flops_follow_active_parameters() -> None:
    dense = ModelSpec(name="d", layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=32000)
    moe = ModelSpec(
        name="m",
        layers=32,
        hidden=4096,
        heads=32,
        kv_heads=8,
        ffn=14336,
        vocab=32000,
        experts=8,
        experts_per_token=2,
        moe_layers=32,
    )  # Mixtral 8x7B shape (Jiang et al. 2024)
    ratio = training_flops(moe, Workload(seq_len=SEQ)).model / training_flops(dense, Workload(seq_len=SEQ)).model
    # Mixtral: 12.9B active of 46.7B total; attention, router and LM head are not doubled.
    assert 1.6 < ratio < 1.9


def test_prefill_is_two_flops_per_weight() -> None:
    """2 FLOPs per GEMM weight: 6.74B parameters less the 131M-entry embedding lookup."""
    assert prefill_flops_per_token(LLAMA2_7B, 1) == pytest.approx(2 * (6.738e9 - 32000 * 4096), rel=0.005)


def test_kv_cache_bytes_llama2_7b() -> None:
    """2 · 32 layers · 32 heads · 128 · 2 bytes = 512 KiB per token."""
    assert kv_cache_bytes(LLAMA2_7B, 4096, 1, "bf16") == 2 * 32 * 32 * 128 * 2 * 4096


def test_decode_reads_every_weight_once() -> None:
    assert decode_weight_bytes(LLAMA2_7B, 1, "bf16") == pytest.approx(2 * 6.74e9 - 2 * 32000 * 4096, rel=0.01)
