"""The optimizer stepped in the backward (Plan.optimizer_in_backward): each parameter's gradient is freed as soon as its
step has run, so a full fine-tune holds one parameter's gradient at a time, not the model's.

torchtune runs it with `optimizer_in_bwd: True` (recipes/full_finetune_single_device.py `_setup_optimizer` builds one
optimizer per parameter and torchtune/utils/memory.py `register_optim_in_bwd_hooks` registers
`p.register_post_accumulate_grad_hook`, whose hook calls that optimizer's step() and zero_grad(): pytorch/torchtune at
5cbc1967b). The cited figure is a first-contact row (tests/estimator/memory_first_contact.py, torchtune-2403): it read
+91 % there, the whole 12.6 GiB bf16 gradient of Llama 2 7B counted; after this lever it is fitted.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB, EstimatorError, Plan
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT

LOW_MEMORY = next(c for c in MEMORY_FIRST_CONTACT if "7B_full_single_device_low_memory" in c.label)


def _reserved(plan: Plan) -> float:
    b = estimate_memory(LOW_MEMORY.model, LOW_MEMORY.workload, plan, LOW_MEMORY.cluster).breakdown
    return measured_bytes(b, plan, LOW_MEMORY.cluster, "reserved") / GIB


def test_torchtune_low_memory_full_finetune_holds_one_gradient_at_a_time() -> None:
    # pytorch/torchtune README.md at 5cbc1967b: Llama 2 7B full fine-tune, 7B_full_single_device_low_memory.yaml
    # (bf16, bitsandbytes PagedAdamW, optimizer_in_bwd True, activation checkpointing, batch 2 of Alpaca), 15.97 GB
    # max reserved = 14.87 GiB. The paged states live in CUDA managed memory, outside the reserved pool. Tolerance 15 %:
    # the sequence lengths of Alpaca's batches are not published (the longest, 1,304 tokens, is assumed), and the
    # figure was taken on an A100 with its memory fraction limited to the card named.
    assert LOW_MEMORY.plan.optimizer_in_backward
    assert _reserved(LOW_MEMORY.plan) == pytest.approx(LOW_MEMORY.published_gib, rel=0.15)


def test_without_the_lever_the_whole_gradient_is_counted() -> None:
    # the same run with the optimizer after the backward holds every bf16 gradient: 6.74e9 x 2 bytes = 12.6 GiB more,
    # less the largest parameter's (the 32,000 x 4,096 embedding, 0.24 GiB) that remains with the lever
    with_lever = _reserved(LOW_MEMORY.plan)
    without = _reserved(replace(LOW_MEMORY.plan, optimizer_in_backward=False))
    assert without - with_lever == pytest.approx(12.55 - 0.24, abs=0.1)


def test_refused_where_no_stack_runs_it() -> None:
    # torchtune runs it on one device and refuses gradient accumulation with it (full_finetune_single_device.py:
    # "Gradient accumulation is not supported with optimizer in bwd"); under ZeRO / FSDP the gradients are sharded
    # and reduced after the backward, which the per-parameter step would race
    plan = replace(LOW_MEMORY.plan, dp=2, zero_stage=3)
    with pytest.raises(EstimatorError):
        estimate_memory(LOW_MEMORY.model, LOW_MEMORY.workload, plan, replace(LOW_MEMORY.cluster, gpus_per_node=2))
    accumulating = replace(LOW_MEMORY.workload, global_batch=8)
    with pytest.raises(EstimatorError):
        estimate_memory(LOW_MEMORY.model, accumulating, LOW_MEMORY.plan, LOW_MEMORY.cluster)
