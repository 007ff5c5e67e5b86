"""Which training stack runs a plan: the support matrix. PURE (standard library + estimator specs).

Three stacks, each a row of what it runs, with its sources, in data/stacks.json (docs/stacks.md
shows the matrix as a table):

- `deepspeed`: DeepSpeed ZeRO under the Hugging Face Trainer / accelerate, PEFT for LoRA/QLoRA.
- `fsdp`: torchrun + FSDP2 (torchtitan for full training, torchtune for LoRA/QLoRA).
- `megatron`: Megatron-LM / Megatron-Core; LoRA through Megatron-Bridge's PEFT.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from app.estimator.specs import Plan, Workload
from app.estimator.vocabulary import LORA_TASKS, OFFLOADS, RECOMPUTES

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
    hsdp: bool  # hybrid sharding (Plan.dp_shard < dp) for full training
    source: str


def _row(entry: dict[str, Any]) -> Row:
    """One stack's row of data/stacks.json; a word outside the vocabulary is an error at import."""
    zero = {False: frozenset(entry["zero"]["data_parallel"]), True: frozenset(entry["zero"]["model_parallel"])}
    offload = {level: frozenset(stages) for level, stages in entry["offload"].items()}
    recompute, lora_recompute = frozenset(entry["recompute"]), frozenset(entry["lora_recompute"])
    if not set(offload) <= set(OFFLOADS) or not recompute | lora_recompute <= set(RECOMPUTES):
        raise ValueError(f"data/stacks.json: offload {sorted(offload)} or recompute {sorted(recompute)} unknown")
    return Row(**{**entry, "zero": zero, "offload": offload, "recompute": recompute, "lora_recompute": lora_recompute})


def _matrix() -> dict[Stack, Row]:
    text = (Path(__file__).parent / "data" / "stacks.json").read_text(encoding="utf-8")
    rows: dict[str, dict[str, Any]] = json.loads(text)["stacks"]
    if set(rows) != set(STACKS):
        raise ValueError(f"data/stacks.json lists {sorted(rows)}; the stacks are {', '.join(STACKS)}")
    return {stack: _row(rows[stack]) for stack in STACKS}


MATRIX = _matrix()

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
    if plan.hybrid and (zero != 3 or not row.hsdp or workload.task in LORA_TASKS):
        return False
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
