"""The estimate read as a published peak was measured (memory.measured_bytes): torch's reserved pool leaves NCCL's
own buffers out; nvidia-smi adds the CUDA context (gpus.json memory_gib less usable_memory_gib); torch's allocated
peak leaves the allocator's slack out as well. The reserved pool keeps the 16-bit logits' block beside the standard
loss's fp32 backward (memory.activations LOGITS_BLOCK_BYTES_PER_LOGIT; MemoryBreakdown.logits_block), up to the card."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import FRAGMENTATION, OTHER_NCCL_BYTES, estimate_memory, measured_bytes
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, EstimatorError, Plan, Workload

H100 = get_gpu("h100-80g-sxm")


def _total(plan: Plan, cluster: Cluster) -> tuple[float, float, float]:
    model = get_preset("llama-3.1-8b").model
    breakdown = estimate_memory(model, Workload(task="pretrain", seq_len=4096), plan, cluster).breakdown
    total, reserved, device = (
        measured_bytes(breakdown, plan, cluster, kind) for kind in ("total", "reserved", "device")
    )
    return total, reserved, device


def test_reserved_leaves_out_nccl_buffers_on_more_than_one_gpu() -> None:
    block = 4096 * 128256 * 2.0  # the 16-bit logits' block the fp32 backward cannot reuse
    total, reserved, _ = _total(Plan(dp=8, zero_stage=3), Cluster(gpu=H100, gpus_per_node=8))
    assert total - reserved == pytest.approx(OTHER_NCCL_BYTES - block)
    total, reserved, _ = _total(Plan(), Cluster(gpu=H100))
    # one GPU: no communicator; and a plan past the card keeps no cached block beyond it (a failed cudaMalloc frees
    # the cached blocks and retries)
    assert total == reserved


def test_device_adds_the_cuda_context() -> None:
    total, _, device = _total(Plan(), Cluster(gpu=H100))
    assert device - total == pytest.approx((79.6 - 79.0) * GIB)  # gpus.json: nvidia-smi 79.6 GiB, 79.0 usable


def test_allocated_leaves_out_the_allocator_slack_and_nccl() -> None:
    model = get_preset("llama-3.1-8b").model
    plan, cluster = Plan(dp=8, zero_stage=3), Cluster(gpu=H100, gpus_per_node=8)
    breakdown = estimate_memory(model, Workload(task="pretrain", seq_len=4096), plan, cluster).breakdown
    reserved = measured_bytes(breakdown, plan, cluster, "reserved")
    allocated = measured_bytes(breakdown, plan, cluster, "allocated")
    assert breakdown.activations > 0
    assert reserved - allocated == pytest.approx(FRAGMENTATION * breakdown.activations + breakdown.logits_block)


def test_unknown_kind_is_refused() -> None:
    model = get_preset("llama-3.1-8b").model
    plan, cluster = Plan(), Cluster(gpu=H100)
    breakdown = estimate_memory(model, Workload(task="pretrain", seq_len=4096), plan, cluster).breakdown
    with pytest.raises(EstimatorError):
        measured_bytes(breakdown, plan, cluster, "nvml")
