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
from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, Plan, Workload

LLAMA31_70B = get_preset("llama-3.1-70b").model
PARAMS = 70_553_706_496
LARGEST = 128_256 * 8_192  # the embedding, and the untied head
# one decoder layer: q and o 8,192 x 8,192, k and v 8,192 x 1,024 (8 KV heads of 128), gate, up and down 8,192 x
# 28,672, two RMSNorm weights of 8,192
LAYER = 2 * 8_192 * 8_192 + 2 * 8_192 * 1_024 + 3 * 8_192 * 28_672 + 2 * 8_192
EIGHT_H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, host_ram_gib=2048.0)
WORKLOAD = Workload(task="full_finetune", seq_len=4096)
PARAMS_OFFLOAD = Plan(dp=8, zero_stage=3, micro_batch=1, recompute="full", offload="optimizer_and_params")
DEEPSPEED_PARAMS_OFFLOAD = replace(PARAMS_OFFLOAD, tuning="trainer")  # the planner's deepspeed stack


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


def test_zero3_params_offload_adds_the_16_bit_parameter_partition_to_the_host() -> None:
    """Under the deepspeed stack (`Plan.tuning` "trainer", which the planner sets), offload_param keeps the rank's
    16-bit parameter partition in pinned host memory (stage3.py `_create_param_groups_fp16_flat_cpu_memory`) beside
    the 16-bit gradient buffer that optimizer offload keeps there: 2 bytes a parameter more than optimizer offload, 20
    in all, 1,314.2 GiB per node (1,182.7 before: the gradient buffer was left out)."""
    params_offloaded = estimate_memory(LLAMA31_70B, WORKLOAD, DEEPSPEED_PARAMS_OFFLOAD, EIGHT_H100).breakdown.host_ram
    assert params_offloaded == pytest.approx(PARAMS * (16 + 2 + 2), rel=1e-12)
    assert params_offloaded == pytest.approx(_breakdown(3, "optimizer").host_ram + PARAMS * 2, rel=1e-12)
    assert params_offloaded / GIB == pytest.approx(1314.2, abs=0.05)


def test_zero3_params_offload_keeps_one_parameters_partition_on_the_gpu() -> None:
    """ZeRO-3 with offload_param and offload_optimizer under the deepspeed stack: `partition_grads` reads nothing of
    offload_param, so the GPU holds one parameter's gradient partition, 16-bit and cast to fp32, as under optimizer
    offload: ceil(LARGEST / 8) x 6 = 788,004,864 bytes (0.73 GiB) where the estimate held FSDP's one layer of 16-bit
    gradients, LAYER x 2 (1.59 GiB). The GPU's weights are the gathered units either way: the embedding, current and
    prefetched, 2 x LARGEST x 2."""
    breakdown = estimate_memory(LLAMA31_70B, WORKLOAD, DEEPSPEED_PARAMS_OFFLOAD, EIGHT_H100).breakdown
    assert breakdown.gradients == math.ceil(LARGEST / 8) * (2 + 4) == 788_004_864
    assert breakdown.weights == 2 * LARGEST * 2
    assert breakdown.total / GIB == pytest.approx(18.27, abs=0.005)  # 19.13 GiB before


@pytest.mark.parametrize(
    "plan",
    [PARAMS_OFFLOAD, replace(PARAMS_OFFLOAD, tuning="torchtitan"), replace(PARAMS_OFFLOAD, fsdp_torch_adamw=True)],
    ids=["no-stack", "torchtitan", "trainer-fsdp"],
)
def test_fsdp_cpu_offload_keeps_its_own_account(plan: Plan) -> None:
    """FSDP's CPU offload (torchtitan's CPUOffloadPolicy, the Trainer's FSDP; a plan naming no stack, as the published
    runs of parameter offload ran: torchtune, universal-llm-trainer) reduce-scatters a unit's gradients on the GPU
    before copying the shard to the host (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py `foreach_reduce` at
    010ae4a8): one layer's 16-bit gradients, LAYER x 2 = 1,711,308,800 bytes; the host holds the fp32 master, moments
    and gradients and the 16-bit shard, 18 bytes a parameter. Unchanged."""
    breakdown = estimate_memory(LLAMA31_70B, WORKLOAD, plan, EIGHT_H100).breakdown
    assert breakdown.gradients == LAYER * 2 == 1_711_308_800
    assert breakdown.host_ram == pytest.approx(PARAMS * 18, rel=1e-12)


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
