"""Which training stack runs a plan: the support matrix. PURE (standard library + estimator specs).

Three stacks, each a row of what it runs (docs/stacks.md shows the matrix as a table):

- `deepspeed`: DeepSpeed ZeRO under the Hugging Face Trainer / accelerate, PEFT for LoRA/QLoRA.
  - ZeRO 0-3 over data parallel; `offload_optimizer` with ZeRO 1-3 and `offload_param` with ZeRO-3
    only (DeepSpeed configuration docs, "ZeRO Optimizations": offload_param "valid only with stage 3").
  - Pipeline parallel through its PipelineModule with ZeRO 0 or 1 only: the engine asserts
    "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
    (deepspeed/runtime/pipe/engine.py, PipelineEngine.__init__); no offload, no PEFT there (PEFT wraps
    Hugging Face modules, a PipelineModule is a flat layer list).
  - No tensor, context or expert parallel in this stack (those are Megatron-DeepSpeed, not the
    Trainer path named here).
  - Activation checkpointing is the Trainer's `gradient_checkpointing` (whole layers): full recompute
    only, no selective.
  - QLoRA with ZeRO-3 needs `bnb_4bit_quant_storage` = the compute dtype so the 4-bit weights can be
    sharded (PEFT docs, "DeepSpeed": "Use PEFT QLoRA and DeepSpeed with ZeRO3").
- `fsdp`: torchrun + FSDP2. Full training is torchtitan (FSDP2 × tensor parallel with sequence
  parallel × pipeline × context parallel, torchtitan docs/composability.md); LoRA/QLoRA is
  torchtune's `lora_finetune_distributed` recipe (FSDP2, data parallel only, `quantize_base` for
  QLoRA).
  - ZeRO-3 = `reshard_after_forward=True` (FULL_SHARD), ZeRO-2 = `reshard_after_forward=False`
    (SHARD_GRAD_OP), ZeRO-0 = replicate (DDP); FSDP has no ZeRO-1.
  - CPU offload (`CPUOffloadPolicy`) moves parameters, gradients and the optimizer step together:
    offload = optimizer_and_params with ZeRO-3, data parallel only; no optimizer-only offload.
  - Recompute: torchtitan `activation_checkpoint.mode` none / selective / full; torchtune
    `enable_activation_checkpointing` (whole layers): LoRA runs none or full.
- `megatron`: Megatron-LM / Megatron-Core (arguments from megatron/training/arguments.py); LoRA through
  Megatron-Bridge's PEFT (LoRA on linear_qkv, linear_proj, linear_fc1, linear_fc2, with tensor and
  pipeline parallel).
  - Tensor (with `--sequence-parallel`), pipeline, context and expert parallel.
  - ZeRO-0 or ZeRO-1 (`--use-distributed-optimizer` shards the optimizer states over data
    parallel); no ZeRO-2/3 and no CPU offload in the arguments we emit.
  - Recompute: `--recompute-activations` (selective) or `--recompute-granularity full`.
  - No QLoRA (no 4-bit base in Megatron-Core).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from app.estimator.specs import Plan, Workload
from app.estimator.vocabulary import LORA_TASKS, RECOMPUTES

Stack = Literal["deepspeed", "fsdp", "megatron"]
STACKS: tuple[Stack, ...] = get_args(Stack)


@dataclass(frozen=True, slots=True)
class Row:
    """What one stack runs. Degrees: which of tp/pp/cp/ep may exceed 1. `zero` maps the model-parallel
    case (False: tp = pp = cp = ep = 1, True: any of them > 1) to the ZeRO stages allowed;
    `offload` maps an offload level to the ZeRO stages it runs with (data parallel only)."""

    tp: bool
    pp: bool
    cp: bool
    ep: bool
    zero: dict[bool, frozenset[int]]
    offload: dict[str, frozenset[int]]
    recompute: frozenset[str]
    lora_recompute: frozenset[str]
    lora: bool  # LoRA (data parallel)
    lora_model_parallel: bool  # LoRA with tp/pp/cp/ep > 1
    qlora: bool  # QLoRA (data parallel only in every stack that has it)


MATRIX: dict[Stack, Row] = {
    "deepspeed": Row(
        tp=False,
        pp=True,
        cp=False,
        ep=False,
        zero={False: frozenset({0, 1, 2, 3}), True: frozenset({0, 1})},
        offload={
            "none": frozenset({0, 1, 2, 3}),
            "optimizer": frozenset({1, 2, 3}),
            "optimizer_and_params": frozenset({3}),
        },
        recompute=frozenset({"none", "full"}),
        lora_recompute=frozenset({"none", "full"}),
        lora=True,
        lora_model_parallel=False,
        qlora=True,
    ),
    "fsdp": Row(
        tp=True,
        pp=True,
        cp=True,
        ep=False,
        zero={False: frozenset({0, 2, 3}), True: frozenset({0, 2, 3})},
        offload={"none": frozenset({0, 2, 3}), "optimizer_and_params": frozenset({3})},
        recompute=frozenset(RECOMPUTES),
        lora_recompute=frozenset({"none", "full"}),
        lora=True,
        lora_model_parallel=False,
        qlora=True,
    ),
    "megatron": Row(
        tp=True,
        pp=True,
        cp=True,
        ep=True,
        zero={False: frozenset({0, 1}), True: frozenset({0, 1})},
        offload={"none": frozenset({0, 1})},
        recompute=frozenset(RECOMPUTES),
        lora_recompute=frozenset(RECOMPUTES),
        lora=True,
        lora_model_parallel=True,
        qlora=False,
    ),
}

# When several stacks run a plan: model-parallel plans go to the stack built for them first;
# data-parallel fine-tuning to the Hugging Face path most teams already use.
PREFERENCE: dict[bool, tuple[Stack, ...]] = {
    True: ("megatron", "fsdp", "deepspeed"),
    False: ("deepspeed", "fsdp", "megatron"),
}


def model_parallel(plan: Plan) -> bool:
    return plan.tp > 1 or plan.pp > 1 or plan.cp > 1 or plan.ep > 1


def runs(stack: Stack, workload: Workload, plan: Plan) -> bool:
    """Whether `stack` runs this plan of this workload (training; inference is not a stack's job here)."""
    row = MATRIX[stack]
    parallel = model_parallel(plan)
    if (plan.tp > 1 and not row.tp) or (plan.pp > 1 and not row.pp):
        return False
    if (plan.cp > 1 and not row.cp) or (plan.ep > 1 and not row.ep):
        return False
    zero = plan.zero_stage if plan.dp > 1 else 0
    if zero not in row.zero[parallel]:
        return False
    allowed = row.offload.get(plan.offload)
    if allowed is None or (plan.offload != "none" and (parallel or zero not in allowed)):
        return False
    lora = workload.task in LORA_TASKS
    if plan.recompute not in (row.lora_recompute if lora else row.recompute):
        return False
    if workload.task == "qlora":
        return row.qlora and not parallel
    if lora:
        return row.lora and (row.lora_model_parallel or not parallel)
    return True


def stack_for(workload: Workload, plan: Plan) -> Stack | None:
    """The preferred stack that runs the plan, or None when none does (the search never emits it)."""
    if workload.task == "inference":
        return None
    for stack in PREFERENCE[model_parallel(plan)]:
        if runs(stack, workload, plan):
            return stack
    return None


def supported(workload: Workload, plan: Plan) -> bool:
    return workload.task == "inference" or stack_for(workload, plan) is not None
