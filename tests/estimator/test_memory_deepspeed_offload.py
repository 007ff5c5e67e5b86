"""DeepSpeed's optimizer offload keeps the gradients it steps on the host (states._deepspeed_offload,
states._offloaded_grads): deepspeed/runtime/zero/stage3.py and stage_1_and_2.py read at edaa7221 (2026-08-22), the same
lines at v0.18.0 (79caae1c; ZeRO-1/2 also at v0.14.0, ce78a632). ZeRO-3 puts `grad_partitions_flat_buffer` on
`self.device`, the CPU under offload_optimizer, and brings one parameter's partition back to the GPU at a time, 16-bit
and cast to fp32 (`partition_grads`, `_offload_grad_partition_at_boundary`); ZeRO-1/2 with cpu_offload keep the fp32
gradient partition on the host and, on the GPU, `temp_grad_buffer_for_gpu_offload` (the largest parameter, 16-bit)
and one parameter's slice cast to fp32 (`async_inplace_copy_grad_to_fp32_buffer_from_gpu`). Before, the estimate kept
the whole 16-bit gradient partition on the GPU as well (ZeRO-1: every gradient), counting it twice.

Exact bytes: Llama 3.1 70B (meta-llama/Llama-3.1-70B config.json: vocab 128,256, hidden 8,192, untied head) has
70,553,706,496 parameters, the largest the embedding and the head, 128,256 x 8,192 = 1,050,673,152 elements."""

from __future__ import annotations

import math

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, Plan, Workload

LLAMA31_70B = get_preset("llama-3.1-70b").model
PARAMS = 70_553_706_496
LARGEST = 128_256 * 8_192  # the embedding, and the untied head
EIGHT_H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, host_ram_gib=2048.0)
WORKLOAD = Workload(task="full_finetune", seq_len=4096)


def _breakdown(zero: int, offload: str, workload: Workload = WORKLOAD) -> MemoryBreakdown:
    plan = Plan(dp=8, zero_stage=zero, micro_batch=1, recompute="full", offload=offload)  # type: ignore[arg-type]
    return estimate_memory(LLAMA31_70B, workload, plan, EIGHT_H100).breakdown


def test_zero3_optimizer_offload_keeps_one_parameters_partition_on_the_gpu() -> None:
    """The reviewer's plan (POST /estimate, ZeRO-3 over 8 H100, offload "optimizer"): 16.43 GiB of gradients a GPU
    before (the 16-bit partition, PARAMS / 8 x 2 bytes), now the largest parameter's partition, 16-bit and fp32:
    ceil(LARGEST / 8) x 6 = 788,004,864 bytes. The host gains the 16-bit partition buffer: 8 x PARAMS / 8 x 2."""
    offloaded, on_gpu = _breakdown(3, "optimizer"), _breakdown(3, "none")
    assert offloaded.gradients == math.ceil(LARGEST / 8) * (2 + 4) == 788_004_864
    assert on_gpu.gradients == pytest.approx(PARAMS / 8 * 2, rel=1e-12)  # without offload the partition is on the GPU
    assert offloaded.total / GIB == pytest.approx(34.70, abs=0.005)  # 50.39 GiB before
    # host: fp32 master, m, v and fp32 gradients (16 bytes) and the 16-bit partition buffer (2), over 8 GPUs
    assert offloaded.host_ram == pytest.approx(PARAMS * (16 + 2), rel=1e-12)


def test_zero3_offload_host_ram_per_node() -> None:
    """Per 8-GPU node: 1,051.3 GiB before (states and fp32 gradients, 16 bytes a parameter), 1,182.7 with the 16-bit
    partition buffer (18 bytes a parameter)."""
    assert _breakdown(3, "optimizer").host_ram / GIB == pytest.approx(PARAMS * 18 / GIB, rel=1e-12)
    assert _breakdown(3, "optimizer").host_ram / GIB == pytest.approx(1182.7, abs=0.05)


@pytest.mark.parametrize("zero", [1, 2])
def test_zero12_optimizer_offload_keeps_the_offload_buffer_and_one_cast(zero: int) -> None:
    """ZeRO-2 read 16.43 GiB (the 16-bit partition), ZeRO-1 131.42 (every 16-bit gradient); now the GPU holds
    `temp_grad_buffer_for_gpu_offload` (LARGEST x 2) and the head's slice cast to fp32 (LARGEST x 4), 5.87 GiB; the
    buckets stay in `other`. The host holds the fp32 gradient partition with the states, the 16-bit partition CPU
    Adam's result goes through and `temp_grad_buffer_for_cpu_offload` (LARGEST x 2), on each of 8 GPUs."""
    offloaded = _breakdown(zero, "optimizer")
    assert offloaded.gradients == LARGEST * (2 + 4) == 6_304_038_912
    assert offloaded.other == _breakdown(zero, "none").other  # DeepSpeed's gradient buckets, offload or not
    assert offloaded.host_ram == pytest.approx(PARAMS * (16 + 2) + 8 * LARGEST * 2, rel=1e-12)


def test_zero1_with_gradient_accumulation_keeps_its_gradients_whole() -> None:
    """ZeRO-1 reduces at the accumulation boundary only (deepspeed/runtime/engine.py `allreduce_gradients`): with
    two micro-batches a step the 16-bit gradients stay whole on the GPU between them, offload or not; ZeRO-2 reduces
    every micro-batch and keeps the rank's parameters' 16-bit gradients on the host between them
    (`accumulated_grads_in_cpu`)."""
    accumulating = Workload(task="full_finetune", seq_len=4096, global_batch=16)
    assert _breakdown(1, "optimizer", accumulating).gradients == pytest.approx(PARAMS * 2, rel=1e-12)
    zero2 = _breakdown(2, "optimizer", accumulating)
    assert zero2.gradients == LARGEST * 6
    assert zero2.host_ram == pytest.approx(PARAMS * (16 + 2 + 2) + 8 * LARGEST * 2, rel=1e-12)


def test_megatron_cpu_optimizer_keeps_its_gradient_buffer() -> None:
    """Megatron-LM's CPU optimizer (Plan.fp32_main_grads, ms-swift's 72b_offload.sh row) keeps its DDP gradient buffer
    on the GPU: unchanged, fp32 gradients over the model-parallel shard."""
    plan = Plan(dp=8, zero_stage=1, micro_batch=1, recompute="full", offload="optimizer", fp32_main_grads=True)
    breakdown = estimate_memory(LLAMA31_70B, WORKLOAD, plan, EIGHT_H100).breakdown
    assert breakdown.gradients == pytest.approx(PARAMS * 4, rel=1e-12)
