"""The Megatron-Bridge launch of the megatron stack: LoRA, and a full fine-tune where the model has an SFT recipe.
PURE.

Megatron-Bridge (NVIDIA-NeMo/Megatron-Bridge v0.6.0): scripts/training/run_recipe.py under torchrun with `--recipe
<model>_peft_config --mode lora` (the model's PEFT recipe, data/stacks.json peft_recipes), and for a full fine-tune
`--recipe <model>_sft_config --mode sft` (`sft_recipe`; the same overrides less peft.*; fp8 on Hopper with bf16
weights adds `mixed_precision=bf16_with_fp8_subchannel_scaling_mixed`, `BRIDGE_FP8`), `--dataset local-jsonl` and
trailing KEY=VALUE ConfigContainer overrides (run_recipe.py COMMON_OVERRIDE_FIELDS and the dataclass fields: model.*
parallel sizes, sequence_parallel and recompute_* of Megatron-Core's TransformerConfig; train.*; dataset.seq_length /
dataset_root; checkpoint.pretrained_checkpoint, save, save_interval; the optimizer the estimate sized as
Megatron-Core's OptimizerConfig names it (optimizer.optimizer adam | sgd with its betas or sgd_momentum, lr / min_lr,
weight_decay, clip_grad, use_distributed_optimizer) and the schedule the Megatron-LM launch states, over the run it
launches (scheduler.lr_decay_iters = train.train_iters, lr_warmup_iters, cosine, lr_warmup_init, the weight decay:
the recipes hard-code others); peft.dim, alpha, dropout, target_modules of megatron/bridge/peft/lora.py LoRA on
linear_qkv, linear_proj, linear_fc1, linear_fc2).
"""

from __future__ import annotations

from typing import Any

from app.estimator.performance import generation
from app.estimator.specs import GpuSpec, ModelSpec, Plan, Workload
from app.estimator.vocabulary import LORA_TASKS
from app.planner.launch.common import (
    MIN_LR_RATIO,
    SCHEDULES,
    Job,
    LaunchNote,
    _alpha,
    _lora,
    _note,
    _notes_out,
    _repo,
    _slug,
    lora_targets,
    save_interval,
    train_iters,
    warmup_steps,
)
from app.planner.launch.megatron_lm import MEGATRON_OPTIMIZER, MEGATRON_SGD_MOMENTUM, _save_dir, uneven_stages
from app.planner.stacks import peft_recipe

# LoRA target names: ours → Megatron-Core linear layers.
MEGATRON_MODULES = {
    "q": "linear_qkv",
    "k": "linear_qkv",
    "v": "linear_qkv",
    "o": "linear_proj",
    "gate": "linear_fc1",
    "up": "linear_fc1",
    "down": "linear_fc2",
}


# Megatron-Core MultiLatentAttention's linear layers (megatron/core/transformer/multi_latent_attention.py)
MEGATRON_MLA_MODULES = {
    "q": ("linear_q_down_proj", "linear_q_up_proj"),
    "k": ("linear_kv_down_proj", "linear_kv_up_proj"),
    "v": ("linear_kv_down_proj", "linear_kv_up_proj"),
    "o": ("linear_proj",),
}


def sft_recipe(model: ModelSpec) -> str | None:
    """The Megatron-Bridge SFT recipe for a full fine-tune of this model, None without one. Megatron-Bridge v0.6.0
    (commit 51885cf) exports `<model>_sft_config` beside every `<model>_peft_config` our data/stacks.json lists
    (src/megatron/bridge/recipes/llama/__init__.py and recipes/qwen/__init__.py: aliases of recipes/llama/llama3.py,
    recipes/qwen/{qwen2,qwen3,qwen3_moe}.py), and scripts/training/run_recipe.py runs it with `--mode sft`
    (`--mode` choices pretrain, sft, lora, dora; sft and lora both run the finetune loop on a finetune dataset such
    as local-jsonl: prompt-completion data with the loss on the completion)."""
    peft = peft_recipe("megatron", model)
    return None if peft is None else peft.recipe.removesuffix("_peft_config") + "_sft_config"


# Megatron-Bridge v0.6.0 src/megatron/bridge/training/mixed_precision.py: the registered recipe a run's
# `mixed_precision=<name>` override selects (ConfigContainer.mixed_precision takes a registered name, resolved by
# get_mixed_precision_config in training/config.py; MixedPrecisionConfig.setup then writes its fp8 fields over the
# model, optimizer and DDP configs, so model.fp8 alone would be undone). bf16_with_fp8_subchannel_scaling_mixed is the
# one FP8 recipe with fp8_param_gather False (weights stay bf16, as the estimate sizes them without plan.fp8_params) and
# the fp32 gradient reduction of bf16_mixed (grad_reduce_in_fp32 True, the fp32 main-grad buffer the estimate counts);
# its blockwise scaling (128 x 128 weight blocks, 1 x 128 activation tiles) runs on Hopper ("blockwise" (for Hopper
# only), MixedPrecisionConfig.fp8_recipe). The other FP8 recipes gather FP8 weights (fp8_param_gather True).
BRIDGE_FP8 = "bf16_with_fp8_subchannel_scaling_mixed"
BRIDGE_FP8_GENERATIONS = frozenset({"hopper"})


def _bridge_sft(model: ModelSpec, workload: Workload, plan: Plan, gpu: GpuSpec | None = None) -> str | None:
    """The SFT recipe a full fine-tune on Megatron runs, None where it stays on Megatron-LM's pretrain_gpt.py: no
    recipe for the model, or an fp8 run the Bridge's FP8 recipe does not run as sized (`BRIDGE_FP8`: on a GPU other
    than Hopper, or with FP8 weights, plan.fp8_params, whose bf16 gradient buffer the Bridge recipes do not set)."""
    if workload.task != "full_finetune":
        return None
    if workload.precision == "fp8" and (
        plan.fp8_params or gpu is None or generation(gpu) not in BRIDGE_FP8_GENERATIONS
    ):
        return None
    return sft_recipe(model)


def _bridge(job: Job, sft: str | None = None) -> dict[str, Any]:
    """LoRA, or with `sft` (its SFT recipe) a full fine-tune, on Megatron: Megatron-Bridge's run_recipe.py with the
    model's recipe and KEY=VALUE overrides (scripts/training/run_recipe.py at v0.6.0); LoRA only reaches the stack for
    models with a recipe."""
    model = job.model
    recipe = peft_recipe("megatron", model)
    name = sft or (recipe.recipe if recipe is not None else f"{_slug(model)}_peft_config")
    mode = "lora" if sft is None else "sft"
    return {
        "command": job.torchrun(
            f"scripts/training/run_recipe.py --recipe {name} --mode {mode} --dataset local-jsonl "
            "$(cat bridge_overrides.txt)"
        ),
        **job.world(),
        "recipe": name,
        "overrides": bridge_overrides(job),
        **_notes_out(
            [
                _note("bridge_data", slug=_slug(model), repo=_repo(model)),
                *_bridge_notes(job),
                *([_note("bridge_fp8_blockwise")] if job.workload.precision == "fp8" else []),
            ]
        ),
    }


def _bridge_notes(job: Job) -> list[LaunchNote]:
    if train_iters(job.workload, job.global_batch) is not None:
        return []
    return [_note("bridge_no_tokens")]


def bridge_overrides(job: Job) -> list[str]:
    """The recipe's ConfigContainer overrides for this plan: parallel sizes, recompute, batch, length, LoRA,
    checkpoints and schedule (Megatron-Bridge ConfigContainer fields; Megatron-Core TransformerConfig for model.*)."""
    model, workload, plan = job.model, job.workload, job.plan
    out = [
        f"model.tensor_model_parallel_size={plan.tp}",
        f"model.pipeline_model_parallel_size={plan.pp}",
        f"model.context_parallel_size={plan.cp}",
        f"model.expert_model_parallel_size={plan.ep}",
        # the experts' TP as the estimate sized it (Plan.etp: plan.expert_tp, else tp as Megatron-Core's default,
        # expert_tensor_parallel_size None); the MoE recipes set 1 (qwen3_moe.py), so it is always named
        *([f"model.expert_tensor_parallel_size={plan.etp}"] if model.is_moe else []),
        f"model.sequence_parallel={str(plan.tp > 1).lower()}",
        f"model.virtual_pipeline_model_parallel_size={plan.virtual_stages if plan.virtual_stages > 1 else 'null'}",
        *_bridge_stage_split(model, plan),
        *BRIDGE_RECOMPUTE[plan.recompute],
        f"train.global_batch_size={job.global_batch}",
        f"train.micro_batch_size={plan.micro_batch}",
        f"dataset.seq_length={workload.seq_len}",
        f"dataset.dataset_root=/data/{_slug(model)}",
        f"optimizer.use_distributed_optimizer={str(plan.zero_stage >= 1 and plan.dp > 1).lower()}",
        *_bridge_levers(model, plan),
        *([f"mixed_precision={BRIDGE_FP8}"] if workload.precision == "fp8" else []),
        *_bridge_peft(job),
        f"checkpoint.pretrained_checkpoint=/checkpoints/{_slug(model)}-hf",
        f"checkpoint.save={_save_dir(model, workload)}",
    ]
    iters = train_iters(workload, job.global_batch)
    if iters is not None:
        out += [f"train.train_iters={iters}", f"checkpoint.save_interval={save_interval(iters, job.performance)}"]
    return out + _bridge_optimizer(workload) + _bridge_schedule(workload, iters)


def _bridge_stage_split(model: ModelSpec, plan: Plan) -> list[str]:
    """Uneven stages as Megatron-Core's TransformerConfig fields (the Megatron-LM launch's
    --decoder-first/last-pipeline-num-layers); a recipe's own layout or embedding/loss accounting is switched off,
    since Megatron-Core refuses either beside them (transformer_config.py __post_init__)."""
    uneven = uneven_stages(model, plan)
    if uneven is None:
        return []
    return [
        f"model.num_layers_in_first_pipeline_stage={uneven[0]}",
        f"model.num_layers_in_last_pipeline_stage={uneven[1]}",
        "model.pipeline_model_parallel_layout=null",
        "model.account_for_embedding_in_pipeline_split=false",
        "model.account_for_loss_in_pipeline_split=false",
    ]


def _bridge_levers(model: ModelSpec, plan: Plan) -> list[str]:
    """The memory levers the estimate counted, as Megatron-Core's TransformerConfig fields (the Megatron-LM launch's
    `_megatron_lever_args`): eager attention as the unfused backend (attention_backend, Megatron-Core's AttnBackend;
    the recipe's default, auto, picks a fused kernel that never holds the scores the estimate counted), the native
    fused cross-entropy (cross_entropy_loss_fusion, cross_entropy_fusion_impl) and activation offload (cpu_offloading,
    cpu_offloading_num_layers)."""
    out = [] if plan.flash_attention else ["model.attention_backend=unfused"]
    if plan.fused_loss:
        out += ["model.cross_entropy_loss_fusion=true", "model.cross_entropy_fusion_impl=native"]
    if plan.activation_offload:
        out += ["model.cpu_offloading=true", f"model.cpu_offloading_num_layers={max(0, model.layers // plan.pp - 1)}"]
    return out


def _bridge_peft(job: Job) -> list[str]:
    """LoRA's adapter (megatron/bridge/peft/lora.py); a full fine-tune (`--mode sft`) trains every weight."""
    if job.workload.task not in LORA_TASKS:
        return []
    lora = _lora(job.workload)
    targets = ",".join(lora_targets(lora, lambda t: _megatron_modules(job.model, t)))
    return [
        f"peft.dim={lora.rank}",
        f"peft.alpha={_alpha(lora):g}",
        f"peft.dropout={lora.dropout:g}",
        f"peft.target_modules=[{targets}]",
    ]


def _bridge_optimizer(workload: Workload) -> list[str]:
    """The optimizer the estimate sized, with the settings the Megatron-LM launch states (`_megatron_run_args`):
    Megatron-Core OptimizerConfig.optimizer "adam" | "sgd" (megatron/core/optimizer/optimizer_config.py at the
    Megatron-LM commit Megatron-Bridge v0.6.0 pins; `_get_megatron_optimizer_based_on_param_groups` builds FusedSGD
    with `sgd_momentum`). The PEFT recipes leave `_peft_common`'s Adam with beta2 0.98 (or set 0.95); the peak is the
    task's (SCHEDULES: LoRA's, or full fine-tuning's for an SFT recipe)."""
    schedule = SCHEDULES.get(workload.task, SCHEDULES["lora"])
    optimizer = MEGATRON_OPTIMIZER[workload.optimizer]
    out = [
        f"optimizer.optimizer={optimizer}",
        f"optimizer.lr={schedule.lr:g}",
        f"optimizer.min_lr={schedule.lr * MIN_LR_RATIO:g}",
        f"optimizer.weight_decay={BRIDGE_WEIGHT_DECAY:g}",
        "optimizer.clip_grad=1.0",
    ]
    if optimizer == "adam":
        return out + ["optimizer.adam_beta1=0.9", "optimizer.adam_beta2=0.95"]
    return out + [f"optimizer.sgd_momentum={MEGATRON_SGD_MOMENTUM:g}"]


def _bridge_schedule(workload: Workload, iters: int | None) -> list[str]:
    """The schedule the launch states, over the run it launches. Every Megatron-Bridge v0.6.0 PEFT recipe
    (recipes/common.py `_peft_common`, recipes/qwen/h100/{qwen2,qwen3,qwen3_moe}.py, recipes/llama/h100/llama3.py)
    hard-codes warm-up iterations (10 or 50), the Qwen ones `lr_decay_iters = 100`, and a constant weight decay of
    0.033 in the scheduler (`start_weight_decay` / `end_weight_decay`, which training/optim.py hands Megatron-Core's
    OptimizerParamScheduler in place of the optimizer's). ConfigContainer fills lr_decay_iters from train_iters only
    when it is None (training/config.py `_calculate_scheduler_steps`): without a token count it is null, and the
    warm-up a share of the run (lr_warmup_fraction, which needs lr_warmup_iters 0), so both follow the
    train.train_iters the customer adds."""
    out = [
        "scheduler.lr_decay_style=cosine",
        "scheduler.lr_warmup_init=0.0",  # Megatron-LM's --lr-warmup-init default, as the Megatron-LM launch runs
        f"scheduler.start_weight_decay={BRIDGE_WEIGHT_DECAY:g}",
        f"scheduler.end_weight_decay={BRIDGE_WEIGHT_DECAY:g}",
        "scheduler.weight_decay_incr_style=constant",
    ]
    if iters is None:
        warmup = SCHEDULES.get(workload.task, SCHEDULES["lora"]).warmup_fraction
        return out + [
            "scheduler.lr_decay_iters=null",
            "scheduler.lr_warmup_iters=0",
            f"scheduler.lr_warmup_fraction={warmup:g}",
        ]
    return out + [f"scheduler.lr_decay_iters={iters}", f"scheduler.lr_warmup_iters={warmup_steps(workload, iters)}"]


BRIDGE_WEIGHT_DECAY = 0.1  # SCHEDULES: Llama 2's 0.1, as the Megatron-LM launch's --weight-decay


# Megatron-Core TransformerConfig recompute fields (megatron/core/transformer/transformer_config.py): selective
# recomputes the attention core, full whole layers (uniform, one layer per chunk); null: none.
BRIDGE_RECOMPUTE: dict[str, tuple[str, ...]] = {
    "none": ("model.recompute_granularity=null",),
    "selective": ("model.recompute_granularity=selective",),
    "full": (
        "model.recompute_granularity=full",
        "model.recompute_method=uniform",
        "model.recompute_num_layers=1",
    ),
}


def _megatron_modules(model: ModelSpec, target: str) -> tuple[str, ...]:
    """Megatron-Core linear layers for one of our LoRA targets: MLA's own projections for attention."""
    if model.mla is not None and target in MEGATRON_MLA_MODULES:
        if target == "q" and not model.mla[0]:
            return ("linear_q_proj",)  # no q compression (DeepSeek-V2-Lite: q_lora_rank null)
        return MEGATRON_MLA_MODULES[target]
    return (MEGATRON_MODULES[target],)
