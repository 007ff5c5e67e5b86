"""The entry point: a plan as the named stack's launch configuration, with the versions it was written for, and the
stack's name for the optimizer the estimate sized. PURE."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from app.estimator.performance import compute_precision
from app.estimator.specs import GpuSpec, MemoryBreakdown, ModelSpec, Performance, Plan, Workload
from app.estimator.vocabulary import LORA_TASKS, Precision
from app.planner.launch.common import Job
from app.planner.launch.deepspeed import DEEPSPEED_OPTIMIZER, _deepspeed
from app.planner.launch.megatron_bridge import _bridge, _bridge_sft
from app.planner.launch.megatron_lm import MEGATRON_OPTIMIZER, _megatron_lm
from app.planner.launch.torchtitan import TORCHTITAN_OPTIMIZER, _fsdp
from app.planner.launch.trainer import trainer_optim
from app.planner.launch_versions import training_versions
from app.planner.stacks import Stack


def _megatron(job: Job) -> dict[str, Any]:
    """The megatron stack: LoRA, and a full fine-tune with a Megatron-Bridge SFT recipe, on Megatron-Bridge; the rest
    on Megatron-LM's pretrain_gpt.py."""
    model, workload = job.model, job.workload
    if workload.task == "lora":
        return _bridge(job)
    sft = _bridge_sft(model, workload, job.plan, job.gpu)
    if sft is not None:
        return _bridge(job, sft)
    return _megatron_lm(job)


def optimizer_name(stack: Stack, workload: Workload, plan: Plan) -> str | None:
    """The stack's name for the optimizer the estimate sized, None where the stack cannot run it: torchtitan has
    AdamW only (and the fsdp stack runs no LoRA/QLoRA), Megatron-LM AdamW and SGD; under ZeRO-Offload the optimizer
    must step on the CPU."""
    optimizer = workload.optimizer
    if stack == "megatron":
        return MEGATRON_OPTIMIZER.get(optimizer)
    if stack == "fsdp":
        return None if workload.task in LORA_TASKS else TORCHTITAN_OPTIMIZER.get(optimizer)
    if plan.offload != "none":
        return DEEPSPEED_OPTIMIZER.get(optimizer)
    return trainer_optim(workload, plan)


def launch_configs(
    stack: Stack | None,
    model: ModelSpec,
    workload: Workload,
    plan: Plan,
    nodes: int,
    gpus_per_node: int,
    global_batch: int,
    *,
    performance: Performance | None = None,
    gpu: GpuSpec | None = None,
    memory: MemoryBreakdown | None = None,
) -> dict[str, Any]:
    """{stack: its configuration} for the stack that runs the plan (empty for none, or where the stack cannot
    express the workload's optimizer: `optimizer_name`). `performance` (the plan's estimate) sets how often a run
    saves its checkpoint; `gpu` decides the precision that really runs (the estimator's `compute_precision`: fp8 on a
    GPU without an fp8 peak runs as bf16, and its launch asks for none); `memory` (the plan's breakdown) whether a
    ZeRO-3 save may gather the model into rank 0's host RAM."""
    if stack is None or optimizer_name(stack, workload, plan) is None:
        return {}
    if gpu is not None:
        workload = replace(workload, precision=cast(Precision, compute_precision(gpu, workload.precision)))
    job = Job(model, workload, plan, nodes, gpus_per_node, global_batch, performance, memory, gpu)
    bridge = stack == "megatron" and _bridge_sft(model, workload, plan, gpu) is not None
    versions = training_versions(stack, workload.task, bridge=bridge, liger=plan.fused_loss)
    return {stack: {**BUILDERS[stack](job), "versions": versions}}


BUILDERS: dict[Stack, Callable[[Job], dict[str, Any]]] = {"deepspeed": _deepspeed, "fsdp": _fsdp, "megatron": _megatron}
