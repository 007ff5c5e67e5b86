"""Inference (prefill compute-bound, decode memory-bound) and the fine-tuning variants."""

from __future__ import annotations

import pytest

from app.estimator.performance import estimate_performance
from app.estimator.specs import Cluster, LoraSpec, ModelSpec, Performance, Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, H100_SXM, LLAMA2_7B, LLAMA3_70B
from tests.factories import moe_model

A100 = Cluster(gpu=A100_80_SXM)
MIXTRAL = moe_model(expert_ffn=None)


def serve(batch: int, context: int = 1024, tp: int = 1, model: ModelSpec = LLAMA2_7B, gpu=A100_80_SXM) -> Performance:
    workload = Workload(task="inference", seq_len=context, output_tokens=256)
    cluster = Cluster(gpu=gpu, gpus_per_node=tp)
    return estimate_performance(model, workload, Plan(tp=tp, micro_batch=batch), cluster).performance


def test_decode_at_batch_1_sits_at_the_memory_roofline() -> None:
    """13.5 GB of bf16 weights per token over 2.04 TB/s: ≥ 6.6 ms; we assume 80 % of HBM peak."""
    roofline_ms = 2 * 6.74e9 / 2.039e12 * 1e3
    assert roofline_ms < serve(1).time_per_output_token_ms < 1.4 * roofline_ms


def test_batching_amortises_the_weights() -> None:
    assert serve(32).decode_tokens_per_s > 15 * serve(1).decode_tokens_per_s


def test_long_context_kv_reads_slow_decode() -> None:
    """Llama-2-7B (MHA) holds 0.5 MiB of KV per token: 16 × 32k tokens = 256 GiB read per step."""
    assert serve(16, context=32768).time_per_output_token_ms > 5 * serve(16, context=1024).time_per_output_token_ms


def test_prefill_is_compute_bound_and_far_faster_than_decode() -> None:
    perf = serve(1, context=2048)
    assert perf.prefill_tokens_per_s > 50 * perf.decode_tokens_per_s


def test_tensor_parallel_cuts_time_per_token_for_70b_but_not_linearly() -> None:
    """4× the GPUs read 1/4 of the weights each, but 160 small all-reduces per token (~12 µs each on
    NVLink) do not shrink: between 1/4 and 1/2 of the TP = 2 time per token."""
    tp2 = serve(1, tp=2, model=LLAMA3_70B, gpu=H100_SXM).time_per_output_token_ms
    tp8 = serve(1, tp=8, model=LLAMA3_70B, gpu=H100_SXM).time_per_output_token_ms
    assert 0.25 * tp2 < tp8 < 0.5 * tp2


def test_generation_time_when_tokens_are_given() -> None:
    workload = Workload(task="inference", seq_len=1024, output_tokens=256, tokens=1e6)
    perf = estimate_performance(LLAMA2_7B, workload, Plan(micro_batch=8), A100).performance
    assert perf.time_to_train_hours > 1e6 / perf.decode_tokens_per_s / 3600
    assert perf.gpu_hours == pytest.approx(perf.time_to_train_hours)


def finetune(task: str) -> Performance:
    lora = LoraSpec(rank=16) if task in ("lora", "qlora") else None
    workload = Workload(task=task, seq_len=2048, global_batch=4, lora=lora)
    return estimate_performance(LLAMA2_7B, workload, Plan(micro_batch=4), A100).performance


def test_lora_is_faster_than_full_fine_tuning_and_qlora_pays_for_dequantisation() -> None:
    """LoRA skips the frozen weight-gradient GEMMs (and most of the optimizer step); QLoRA adds the
    NF4→bf16 dequantisation of every weight in forward and backward (Dettmers et al. 2023 §3)."""
    full, lora, qlora = finetune("full_finetune"), finetune("lora"), finetune("qlora")
    assert lora.tokens_per_s > 1.3 * full.tokens_per_s
    assert full.tokens_per_s < qlora.tokens_per_s < lora.tokens_per_s


def test_time_to_train_and_gpu_hours() -> None:
    """1B tokens on 8 × A100: compute alone at the predicted rate, then the wall time that goodput adds
    (start-up, evaluation, checkpoints, interruptions: app/estimator/goodput.py); GPU-hours = hours × GPUs."""
    workload = Workload(task="pretrain", seq_len=2048, global_batch=64, tokens=1e9)
    node = Cluster(gpu=A100_80_SXM, gpus_per_node=8)
    perf = estimate_performance(LLAMA2_7B, workload, Plan(dp=8, zero_stage=3, micro_batch=2), node).performance
    assert perf.goodput.ideal_hours == pytest.approx(1e9 / perf.tokens_per_s / 3600)
    assert perf.time_to_train_hours == pytest.approx(perf.goodput.ideal_hours + sum(perf.goodput.parts_hours.values()))
    assert perf.goodput.factor == pytest.approx(perf.goodput.ideal_hours / perf.time_to_train_hours)
    assert 0.8 < perf.goodput.factor < 1.0
    assert perf.gpu_hours == pytest.approx(8 * perf.time_to_train_hours)


def test_moe_expert_parallel_and_context_parallel_plans_run() -> None:
    workload = Workload(task="pretrain", seq_len=32768, global_batch=16)
    node = Cluster(gpu=H100_SXM, gpus_per_node=8)
    moe = estimate_performance(MIXTRAL, workload, Plan(dp=8, ep=8, zero_stage=1), node).performance
    context = estimate_performance(LLAMA2_7B, workload, Plan(dp=4, cp=2, zero_stage=1), node).performance
    assert moe.step_time_s > 0 and context.step_time_s > 0
    assert moe.breakdown_s["exposed_comm"] > 0 and context.breakdown_s["exposed_comm"] > 0
