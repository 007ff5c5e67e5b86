"""DeepSpeed under the Hugging Face Trainer steps torch's foreach AdamW on its fp32 partitions (memory.states
TRAINER_TUNINGS): without offload the planner's ds_config names no optimizer (app/planner/launch/deepspeed.py
`_deepspeed_optimizer`), so the Trainer builds its `optim` adamw_torch (transformers integrations/deepspeed.py
`deepspeed_optim_sched`: trainer.create_optimizer()) and DeepSpeed's ZeRO optimizer calls its step() on the fp32
partition (deepspeed/runtime/zero/stage_1_and_2.py `_optimizer_step`). torch/optim/adamw.py `_multi_tensor_adamw`
makes `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`: 4 bytes per parameter of the partition beside the
states, once the activations are freed. Under ZeRO-Offload the ds_config names DeepSpeedCPUAdam: nothing on the GPU.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from app.planner.launch import deepspeed_config
from app.planner.stacks import as_run, stack_for

MODEL = get_preset("llama-3-8b").model
EIGHT_H100 = Cluster(get_gpu("h100-80g-sxm"), 8)
# a short sequence with full recompute: the activations are freed well below the step's copy of v
WORKLOAD = Workload(task="full_finetune", seq_len=512, global_batch=64)
PLAN = Plan(dp=8, zero_stage=2, recompute="full", micro_batch=1)


def test_the_deepspeed_stack_runs_the_trainers_torch_adamw_without_offload() -> None:
    (run,) = as_run(WORKLOAD, PLAN, MODEL)
    assert stack_for(WORKLOAD, run, MODEL) == "deepspeed" and run.tuning == "trainer"
    assert "optimizer" not in deepspeed_config(WORKLOAD, run, 64)  # the Trainer builds adamw_torch
    offloaded = replace(run, offload="optimizer")
    assert deepspeed_config(WORKLOAD, offloaded, 64)["optimizer"]["type"] == "AdamW"  # DeepSpeedCPUAdam


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_its_step_counts_a_copy_of_v_of_the_fp32_partition(zero: int) -> None:
    """4 bytes a parameter of the partition (a third of the 12 bytes of fp32 master, m and v), less the activations
    freed by then; before, a ZeRO plan counted no step temporary unless it named FSDP's AdamW."""
    (run,) = as_run(WORKLOAD, replace(PLAN, zero_stage=zero), MODEL)
    counted = estimate_memory(MODEL, WORKLOAD, run, EIGHT_H100).breakdown
    unnamed = estimate_memory(MODEL, WORKLOAD, replace(run, tuning=None), EIGHT_H100).breakdown
    v_copy = counted.optimizer * 4.0 / 12.0
    if zero == 3:  # one sub-group of at most 1e9 elements (test_zero3_steps_one_sub_group_at_a_time)
        v_copy = min(v_copy, 4e9)
    # the step reuses the activations' blocks and, under ZeRO-1/2, DeepSpeed's gradient buckets (two of 5e8 bf16
    # elements, freed before it: states._ipg_buffers)
    freed = counted.activations + (2 * 5e8 * 2 if zero < 3 else 0.0)
    assert v_copy > freed  # the case the step sets the peak in
    # what DeepSpeed's step copies whatever optimizer steps (tests/estimator/test_memory_deepspeed_step.py), which the
    # plan naming no stack (DeepSpeed's FusedAdam) counts too: ZeRO-1/2 a 16-bit copy of the partition beside its fp32
    # cast, gone before AdamW's copy of v (ZeRO-1: below its whole 16-bit gradients either way; ZeRO-2: beside the
    # 16-bit partition both count); ZeRO-3 one sub-group's (1e9 of the 1.0e9 elements a GPU owns) 16-bit copy and fp32
    # cast, 6 bytes an element, where AdamW keeps the fp32 cast beside its copy of v, 4 + 4
    elements = counted.optimizer / 12.0  # the partition: fp32 master, m and v
    other = total = v_copy - freed
    if zero == 2:
        total += max(0.0, 2.0 * elements - freed) - max(0.0, 4.0 * elements - freed)
    if zero == 3:
        other = total = (4.0 * min(elements, 1e9) + v_copy) - 6.0 * min(elements, 1e9)
    assert counted.other - unnamed.other == pytest.approx(other, rel=1e-6)
    assert counted.total - unnamed.total == pytest.approx(total, rel=1e-6)
    offloaded = replace(run, offload="optimizer")
    assert (
        estimate_memory(MODEL, WORKLOAD, offloaded, EIGHT_H100).breakdown.total
        == estimate_memory(MODEL, WORKLOAD, replace(offloaded, tuning=None), EIGHT_H100).breakdown.total
    )


def test_zero3_steps_one_sub_group_at_a_time() -> None:
    """Llama 3 70B over 8 GPUs: 8.8e9 parameters a partition, stepped in sub-groups of stage3_sub_group_size 1e9
    elements (stage3.py `_create_fp16_sub_groups`, the default the planner's ds_config keeps): the copy of v is 4 GB,
    not 35, beside the sub-group's 4 GB fp32 gradient; DeepSpeed's FusedAdam (no stack named) holds the sub-group's
    16-bit copy and its fp32 cast, 6 GB (states._zero3_step_temp): 2 GB apart."""
    model = get_preset("llama-3-70b").model
    plan = Plan(dp=8, zero_stage=3, recompute="full", micro_batch=1, tuning="trainer")
    counted = estimate_memory(model, WORKLOAD, plan, EIGHT_H100).breakdown
    unnamed = estimate_memory(model, WORKLOAD, replace(plan, tuning=None), EIGHT_H100).breakdown
    assert counted.total - unnamed.total == pytest.approx(8e9 - 6e9, rel=1e-6)


def test_deepspeed_makes_its_states_before_the_activations() -> None:
    """Batches of varied length: DeepSpeed's optimizers step once with zero gradients when built, "allocating optimizer
    state at the beginning of training instead of after activations have been allocated" (deepspeed/runtime/
    bf16_optimizer.py `initialize_optimizer_states`), so no activation blocks are kept for states made after them
    (memory.activations VARIED_LENGTH_ACTIVATION_SETS): one GPU at 8 x 4,096 (the loss's buffers outweigh the step's
    copy of v) keeps the loss's logit set alone, 12 bytes a logit, where the same plan stepped by torch's AdamW
    without DeepSpeed keeps the activation sets too."""
    varied = Workload(task="full_finetune", seq_len=4096, global_batch=64, varied_lengths=True)
    one = Cluster(get_gpu("h100-80g-sxm"), 1)
    (run,) = as_run(varied, Plan(recompute="full", micro_batch=8), MODEL)
    assert run.tuning == "trainer"
    deepspeed = estimate_memory(MODEL, varied, run, one).breakdown
    torch_only = estimate_memory(MODEL, varied, replace(run, tuning=None), one).breakdown
    assert deepspeed.length_slack == pytest.approx(8 * 4096 * MODEL.vocab * 12.0)
    assert torch_only.length_slack > deepspeed.length_slack
