"""Activation offloading (torchtune `enable_activation_offloading` / `OffloadActivations`, Unsloth's offloaded
gradient checkpointing): saved activations go to host RAM as they are made and come back for the backward, so the
GPU holds the layer in use and the one in flight; the copies cross PCIe on a side stream that overlaps compute."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.interconnects import host_pcie_bytes_per_s
from app.estimator.memory import estimate_memory, offloaded_activation_bytes
from app.estimator.performance import estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, Plan, Workload

LLAMA31_8B = get_preset("llama-3.1-8b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), host_ram_gib=2048)
WORKLOAD = Workload(task="full_finetune", seq_len=8192, global_batch=4)
PLAN = Plan(micro_batch=1, recompute="full")
# full recompute keeps each layer's input: 32 layers x 8,192 tokens x 4,096 hidden x 2 bytes = 2 GiB
CHECKPOINTS = 32 * 8192 * 4096 * 2


def test_checkpoints_move_to_host_ram_but_two_layers() -> None:
    kept = estimate_memory(LLAMA31_8B, WORKLOAD, PLAN, H100).breakdown
    moved = estimate_memory(LLAMA31_8B, WORKLOAD, replace(PLAN, activation_offload=True), H100).breakdown
    assert CHECKPOINTS == 2 * GIB
    # the activations term also carries the 5 % fragmentation charge in `other`, not here
    assert kept.activations - moved.activations == pytest.approx(CHECKPOINTS * 30 / 32)
    assert moved.host_ram - kept.host_ram == pytest.approx(CHECKPOINTS)
    assert offloaded_activation_bytes(LLAMA31_8B, WORKLOAD, replace(PLAN, activation_offload=True)) == CHECKPOINTS


def test_the_copies_cost_at_most_their_pcie_time() -> None:
    base = estimate_performance(LLAMA31_8B, WORKLOAD, PLAN, H100).performance.step_time_s or 0.0
    offload_plan = replace(PLAN, activation_offload=True)
    offloaded = estimate_performance(LLAMA31_8B, WORKLOAD, offload_plan, H100).performance.step_time_s or 0.0
    copies = 4 * 2 * CHECKPOINTS / host_pcie_bytes_per_s(5)  # 4 micro-batches, down and back up
    assert base < offloaded <= base + copies


def test_no_effect_without_the_flag_or_on_inference() -> None:
    inference = Workload(task="inference", seq_len=8192)
    assert offloaded_activation_bytes(LLAMA31_8B, inference, replace(PLAN, activation_offload=True)) == 0.0
    assert offloaded_activation_bytes(LLAMA31_8B, WORKLOAD, PLAN) == 0.0
