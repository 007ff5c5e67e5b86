"""The DeepSpeed launch (with the Hugging Face Trainer, app/planner/launch/trainer.py): the `deepspeed` runner's
command, ds_config.json and its notes. PURE.

DeepSpeed `ds_config.json` (deepspeed.readthedocs.io "DeepSpeed Configuration JSON"): train_batch_size =
train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel size, which DeepSpeed checks at start-up;
zero_optimization.stage, offload_optimizer / offload_param {device, pin_memory}, overlap_comm, contiguous_gradients,
stage3_gather_16bit_weights_on_model_save; bf16 / fp16. Data parallel only (the Trainer runs no pipeline:
data/stacks.json); the Trainer's gradient_checkpointing is the recompute.
"""

from __future__ import annotations

from typing import Any

from app.estimator.params import count_params
from app.estimator.specs import ModelSpec, Plan, Workload
from app.estimator.vocabulary import BF16_RUN_PRECISIONS, BYTES_PER_ELEMENT, LORA_TASKS, Optimizer
from app.planner.launch.common import Job, LaunchNote, _note, _notes_out, _task_notes, accumulation_steps
from app.planner.launch.trainer import (
    _trainer_arguments,
    _trainer_model,
    bnb_config,
    data_collator,
    peft_config,
)

GIB_BYTES = 1024**3


# The optimizer the estimate sized (trainer.TRAINER_OPTIM), as DeepSpeed's ds_config `optimizer.type` names it under
# ZeRO-Offload (deepspeed/runtime/engine.py `_configure_basic_optimizer`): AdamW and Lion select its CPU
# implementations (DeepSpeedCPUAdam, DeepSpeedCPULion); `_configure_optimizer` refuses a Trainer-built optimizer under
# offload, so the support matrix offers only these two there.
DEEPSPEED_OPTIMIZER: dict[Optimizer, str] = {"adamw": "AdamW", "lion": "Lion"}


def deepspeed_config(
    workload: Workload, plan: Plan, global_batch: int, *, gather_on_save: bool = True
) -> dict[str, Any]:
    """ds_config.json. The data-parallel size DeepSpeed divides by is plan.dp (the world: data parallel only).
    `gather_on_save`: whether rank 0 may gather the whole 16-bit model into its host RAM at each save (ZeRO-3;
    `consolidated_save_fits`)."""
    zero: dict[str, Any] = {"stage": plan.zero_stage, "overlap_comm": True, "contiguous_gradients": True}
    if plan.offload != "none":
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if plan.offload == "optimizer_and_params":
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    if plan.zero_stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = gather_on_save
    steps = accumulation_steps(plan, global_batch)
    config: dict[str, Any] = {
        "train_batch_size": plan.dp * plan.micro_batch * steps,
        "train_micro_batch_size_per_gpu": plan.micro_batch,
        "gradient_accumulation_steps": steps,
        "gradient_clipping": 1.0,
        "zero_optimization": zero,
    }
    if workload.precision in BF16_RUN_PRECISIONS:
        config["bf16"] = {"enabled": True}
    elif workload.precision == "fp16":
        config["fp16"] = {"enabled": True, "loss_scale": 0}
    config |= _deepspeed_optimizer(workload, plan)
    return config


def _deepspeed_optimizer(workload: Workload, plan: Plan) -> dict[str, Any]:
    """ds_config's optimizer block. Under the Hugging Face Trainer the Trainer builds the optimizer named by `optim`
    when ds_config has none (transformers integrations/deepspeed.py `deepspeed_optim_sched`: trainer.create_optimizer(),
    zero_allow_untested_optimizer set); under ZeRO-Offload the support matrix runs DeepSpeed's own CPU optimizers only
    (data/stacks.json offload_optimizers), named here with "auto" values the Trainer fills from its arguments
    (HfTrainerDeepSpeedConfig.trainer_config_process)."""
    if plan.offload == "none":
        return {}
    optimizer = workload.optimizer
    params = {"lr": "auto", "betas": "auto", "weight_decay": "auto"} | ({"eps": "auto"} if optimizer == "adamw" else {})
    return {"optimizer": {"type": DEEPSPEED_OPTIMIZER[optimizer], "params": params}}  # Lion takes no eps


def consolidated_save_bytes(model: ModelSpec, workload: Workload) -> float:
    """Host bytes rank 0 holds when DeepSpeed gathers the ZeRO-3 model for a save
    (deepspeed/runtime/engine.py `_zero3_consolidated_16bit_state_dict`: layer by layer, `param.detach().cpu()` into
    one state_dict on rank 0, frozen weights included unless excluded, which the Trainer does not ask): every
    parameter in the dtype ZeRO-3 holds it, the training dtype (bf16 for fp8 runs, whose weights stay bf16; fp32 for a
    pure fp32 run), QLoRA's base as NF4 packed two values a byte into its quant storage."""
    params = count_params(model).total
    if workload.task == "qlora":
        return params * 0.5
    return params * BYTES_PER_ELEMENT["bf16" if workload.precision == "fp8" else workload.precision]


def consolidated_save_fits(job: Job) -> bool:
    """Whether the gathered 16-bit model fits in the host RAM the plan leaves free on node 0 (rank 0's node): the
    estimate's host figure per node (offloaded states, pinned buffers) against the node's limit after the reserve
    (MemoryBreakdown.host_ram_limit, app/estimator/memory/). Unknown host RAM or no estimate: assumed to fit,
    DeepSpeed's usual setting."""
    memory = job.memory
    if job.plan.zero_stage != 3 or memory is None or memory.host_ram_limit is None:
        return True
    return memory.host_ram + consolidated_save_bytes(job.model, job.workload) <= memory.host_ram_limit


# ZeRO-3 prefetches parameters in the order the first step met its modules; MoE routing changes which experts run
# from step to step, so the sparse MoE block must be a ZeRO-3 leaf, gathered whole (deepspeed/utils/z3_leaf_module.py
# `set_z3_leaf_modules`). accelerate's DeepSpeedPlugin, which the Trainer builds, reads its class names from
# ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES (`transformer_moe_cls_names`; `accelerate launch
# --deepspeed_moe_layer_cls_names` sets the same variable) and marks them at prepare. transformers' block per
# model_type (models/*/modeling_*.py):
HF_MOE_BLOCKS = {
    "mixtral": "MixtralSparseMoeBlock",
    "qwen2_moe": "Qwen2MoeSparseMoeBlock",
    "qwen3_moe": "Qwen3MoeSparseMoeBlock",
    "deepseek_v2": "DeepseekV2MoE",
    "deepseek_v3": "DeepseekV3MoE",
}
MOE_LEAF_ENV = "ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES"


def _deepspeed_env(model: ModelSpec, plan: Plan) -> dict[str, str]:
    """The environment a ZeRO-3 launch of an MoE model needs: its sparse block as a ZeRO-3 leaf."""
    block = HF_MOE_BLOCKS.get(model.family or "") if model.is_moe and plan.zero_stage == 3 else None
    return {MOE_LEAF_ENV: block} if block else {}


def _deepspeed(job: Job) -> dict[str, Any]:
    model, workload, plan = job.model, job.workload, job.plan
    gather = consolidated_save_fits(job)
    env = _deepspeed_env(model, plan)
    # one server: the runner's local processes inherit the command's environment. Several: the runner starts the
    # others over pdsh from a hostfile (it raises "Num nodes is >1 but no extra nodes available via hostfile" without
    # one) and passes them only its EXPORT_ENVS prefixes and the lines of .deepspeed_env (deepspeed/launcher/runner.py)
    multi = job.nodes > 1
    prefix = "" if multi else "".join(f"{key}={value} " for key, value in env.items())
    hostfile = "--hostfile hostfile " if multi else ""
    out: dict[str, Any] = {
        "command": f"{prefix}deepspeed {hostfile}--num_nodes {job.nodes} --num_gpus {job.gpus_per_node} train.py "
        "--deepspeed ds_config.json",
        **({"env": env} if env else {}),
        **({"deepspeed_env": [f"{key}={value}" for key, value in env.items()]} if multi and env else {}),
        **job.world(),
        "ds_config": deepspeed_config(workload, plan, job.global_batch, gather_on_save=gather),
        "trainer": _trainer_arguments(model, workload, plan, job.global_batch),
        "model": _trainer_model(model, workload, plan),
    }
    if workload.varied_lengths is not None:  # the batches the estimate's readings assumed (stacks.as_padded)
        out["data_collator"] = data_collator(workload)
    if workload.task in LORA_TASKS:
        out["peft"] = peft_config(workload, model)
    if workload.task == "qlora":
        out["quantization"] = bnb_config(workload)
    notes = _deepspeed_notes(job, gather)
    if notes:
        out |= _notes_out(notes)
    return out


def _deepspeed_notes(job: Job, gather: bool) -> list[LaunchNote]:
    notes = _task_notes(job.model, job.workload)
    if job.nodes > 1:
        notes.append(_note("hostfile", gpus_per_node=job.gpus_per_node, nodes=job.nodes))
    if not gather:
        size = consolidated_save_bytes(job.model, job.workload) / GIB_BYTES
        memory = job.memory
        free = (memory.host_ram_limit or 0.0) - memory.host_ram if memory is not None else 0.0
        notes.append(_note("zero3_no_gather", size_gib=size, free_gib=max(0.0, free) / GIB_BYTES))
    if job.model.is_moe and job.plan.zero_stage == 3 and not _deepspeed_env(job.model, job.plan):
        notes.append(_note("moe_leaf", env=MOE_LEAF_ENV))
    if job.workload.optimizer == "sgd" and job.plan.pp == 1:
        notes.append(_note("trainer_sgd"))
    return notes
