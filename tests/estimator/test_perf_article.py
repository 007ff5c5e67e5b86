"""The company's article's claims, each on a precisely stated workload, or why physics disagrees."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.performance import estimate_performance
from app.estimator.specs import Cluster, Performance, Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, H100_96_TITAN, H100_SXM, LLAMA2_7B, LLAMA3_8B, LLAMA3_70B

# Llama-2-7B full fine-tune, bf16 mixed precision AdamW, one 1,024-token sequence per GPU, no accumulation.
SFT = Workload(task="full_finetune", seq_len=1024)


def perf(workload: Workload, plan: Plan, cluster: Cluster, model=LLAMA2_7B) -> Performance:
    return estimate_performance(model, workload, plan, cluster).performance


def dp_speedup(link: str, zero_stage: int, workload: Workload = SFT) -> float:
    one = perf(replace(workload, global_batch=1), Plan(zero_stage=zero_stage), Cluster(gpu=A100_80_SXM))
    eight = perf(
        replace(workload, global_batch=8),
        Plan(dp=8, zero_stage=zero_stage),
        Cluster(gpu=A100_80_SXM, gpus_per_node=8, intra_node_link=link),
    )
    return eight.tokens_per_s / one.tokens_per_s


def test_8_gpu_data_parallel_on_nvlink_lands_6_to_7_5x() -> None:
    """DDP (ZeRO-0) on 8×A100 SXM NVSwitch, the SFT workload above: the 103 ms gradient all-reduce
    hides only partly behind a ~0.2 s backward, so the speed-up is 6-7.5× (article: 6-7.5×)."""
    assert 6.0 <= dp_speedup("nvlink3", 0) <= 7.5


def test_gradient_accumulation_pushes_dp_scaling_towards_8x() -> None:
    """Physics beyond the article: 8 accumulated micro-batches amortise the one all-reduce per step."""
    accumulated = replace(SFT, global_batch=64)
    one = perf(replace(accumulated, global_batch=8), Plan(), Cluster(gpu=A100_80_SXM))
    eight = perf(accumulated, Plan(dp=8), Cluster(gpu=A100_80_SXM, gpus_per_node=8))
    assert eight.tokens_per_s / one.tokens_per_s > 7.5


def test_8_gpus_on_pcie_scale_far_worse_than_nvlink() -> None:
    assert dp_speedup("pcie4", 0) < 0.6 * dp_speedup("nvlink3", 0)


def test_cross_node_tensor_parallel_over_10gbe_is_slower_than_one_gpu() -> None:
    """TP = 2 with one A100 in each of two nodes joined by 10 GbE vs the same batch on one GPU."""
    one = perf(replace(SFT, global_batch=1), Plan(), Cluster(gpu=A100_80_SXM))
    tp = perf(
        replace(SFT, global_batch=1), Plan(tp=2), Cluster(gpu=A100_80_SXM, gpus_per_node=1, nodes=2, inter_node_gbps=10)
    )
    assert tp.tokens_per_s < one.tokens_per_s / 2


def offload_slowdown(global_batch: int) -> float:
    """7B full fine-tune, ZeRO-2, 8×A100 80G (PCIe 4 host links), micro-batch 4 × 2,048 tokens."""
    workload = Workload(task="full_finetune", seq_len=2048, global_batch=global_batch)
    node = Cluster(gpu=A100_80_SXM, gpus_per_node=8)
    plan = Plan(dp=8, zero_stage=2, micro_batch=4)
    return (
        perf(workload, replace(plan, offload="optimizer"), node).step_time_s / perf(workload, plan, node).step_time_s
        - 1
    )


def test_optimizer_offload_costs_40_to_60_percent_at_64_sequences_per_step() -> None:
    """Global batch 64 (2 accumulation steps): the CPU Adam step over 6.7B parameters (~2 s at an
    assumed 100 GB/s of host memory traffic) against ~3.6 s of GPU compute: +40-60 % (article)."""
    assert 0.40 <= offload_slowdown(64) <= 0.60


def test_offload_cost_shrinks_with_larger_batches() -> None:
    """Physics beyond the article: the CPU step is per optimizer step, so large batches amortise it."""
    assert offload_slowdown(256) < offload_slowdown(64) / 3


@pytest.mark.parametrize("model", [LLAMA3_8B, LLAMA3_70B], ids=["8b", "70b"])
def test_fp8_on_h100_is_tens_of_percent_not_6x(model) -> None:
    """FP8 speeds up only the linear-layer GEMMs; attention, element-wise kernels and communication stay.
    Published end to end: torchtitan Llama 3.1 8B, 8 H100, FSDP + compile: 6,667 → 8,532 tokens/s/GPU
    (1.28×, pytorch/torchtitan docs/performance.md). The article's "2-4×" is above every published run
    we found; we assert 1.15-2× and well below the vendor's 6×."""
    workload = Workload(task="pretrain", seq_len=8192, global_batch=16)
    plan = Plan(dp=8, zero_stage=3, micro_batch=2, recompute="selective")
    node = Cluster(gpu=H100_SXM, gpus_per_node=8)
    ratio = (
        perf(replace(workload, precision="fp8"), plan, node, model).tokens_per_s
        / perf(workload, plan, node, model).tokens_per_s
    )
    assert 1.15 <= ratio <= 2.0


def test_fp8_ratio_matches_torchtitan_within_10_percent() -> None:
    workload = Workload(task="pretrain", seq_len=8192, global_batch=16)
    plan = Plan(dp=8, zero_stage=3, micro_batch=2, recompute="selective")
    node = Cluster(gpu=H100_96_TITAN, gpus_per_node=8)
    bf16 = perf(workload, plan, node, LLAMA3_8B).tokens_per_s
    fp8 = perf(replace(workload, precision="fp8"), plan, node, LLAMA3_8B).tokens_per_s
    assert fp8 / bf16 == pytest.approx(8532 / 6667, rel=0.10)


def test_fp8_on_a100_runs_at_bf16_speed_and_says_so() -> None:
    """Ampere has no FP8 tensor cores (gpu_specs.csv A100 rows: no fp8 column)."""
    workload = Workload(task="pretrain", seq_len=2048, global_batch=8)
    node = Cluster(gpu=A100_80_SXM, gpus_per_node=8)
    plan = Plan(dp=8, zero_stage=1)
    bf16 = estimate_performance(LLAMA2_7B, workload, plan, node)
    fp8 = estimate_performance(LLAMA2_7B, replace(workload, precision="fp8"), plan, node)
    assert fp8.performance.tokens_per_s == pytest.approx(bf16.performance.tokens_per_s)
    assert "precision_unsupported" in {w.code for w in fp8.warnings}
