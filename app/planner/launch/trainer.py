"""The Hugging Face Trainer's side of the DeepSpeed launch: TrainingArguments, the model it builds, its data collator,
and for LoRA/QLoRA the adapter and the quantisation. PURE.

LoRA: PEFT `LoraConfig` (r, lora_alpha, lora_dropout, target_modules, bias, task_type), target_modules the family's
transformers module names (HF_FAMILY_MODULES); QLoRA: transformers `BitsAndBytesConfig` with NF4, double quantisation
and `bnb_4bit_quant_storage` (PEFT docs: needed to shard the 4-bit weights under ZeRO-3).
"""

from __future__ import annotations

from typing import Any

from app.estimator.memory import paged_optimizer
from app.estimator.specs import ModelSpec, Plan, Workload
from app.estimator.vocabulary import ATTENTION_TARGETS, BF16_RUN_PRECISIONS, Optimizer
from app.planner.launch.common import (
    TORCH_DTYPE,
    _alpha,
    _lora,
    _repo,
    accumulation_steps,
    lora_targets,
    run_schedule,
)

# LoRA target names: ours → Hugging Face Llama module names (PEFT).
HF_MODULES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}

# Hugging Face module names that differ from Llama's, per config.json model_type (transformers modeling files):
# Phi-3 fuses qkv_proj and gate_up_proj (models/phi3/modeling_phi3.py); Falcon and GPT-NeoX name them
# query_key_value, dense, dense_h_to_4h, dense_4h_to_h and have no gate (modeling_falcon.py, modeling_gpt_neox.py);
# GPT-2 has Conv1D c_attn, c_proj, c_fc (modeling_gpt2.py); Mixtral's experts are w1 (gate), w3 (up), w2 (down)
# under block_sparse_moe (modeling_mixtral.py, MixtralBlockSparseTop2MLP, at the transformers release the launch
# names: app/planner/launch_versions.py); DeepSeek-V2/V3 MLA projects q through
# q_a_proj/q_b_proj (q_proj without a q rank) and k, v through kv_a_proj_with_mqa/kv_b_proj (modeling_deepseek.py).
_FALCON: dict[str, tuple[str, ...]] = {
    "q": ("query_key_value",),
    "k": ("query_key_value",),
    "v": ("query_key_value",),
    "o": ("dense",),
}
_FALCON |= {"gate": ("dense_h_to_4h",), "up": ("dense_h_to_4h",), "down": ("dense_4h_to_h",)}
HF_FAMILY_MODULES: dict[str, dict[str, tuple[str, ...]]] = {
    "phi3": {
        "q": ("qkv_proj",),
        "k": ("qkv_proj",),
        "v": ("qkv_proj",),
        "gate": ("gate_up_proj",),
        "up": ("gate_up_proj",),
    },
    "falcon": _FALCON,
    "gpt_neox": _FALCON,
    "gpt2": {
        "q": ("c_attn",),
        "k": ("c_attn",),
        "v": ("c_attn",),
        "o": ("c_proj",),
        "up": ("c_fc",),
        "down": ("c_proj",),
    },
    "mixtral": {"gate": ("w1",), "up": ("w3",), "down": ("w2",)},
}


_DEEPSEEK_KV = ("kv_a_proj_with_mqa", "kv_b_proj")


# The optimizer the estimate sized (Workload.optimizer), as each tool names it (DEEPSPEED_OPTIMIZER,
# TORCHTITAN_OPTIMIZER, MEGATRON_OPTIMIZER beside their launches). A stack without an entry cannot express it (the
# support matrix never chooses it then; `expresses`).
# - Hugging Face Trainer `TrainingArguments.optim` (transformers training_args.py OptimizerNames; trainer.py
#   get_optimizer_cls_and_kwargs: adamw_torch = torch.optim.AdamW, adamw_bnb_8bit = bitsandbytes 8-bit AdamW,
#   lion_32bit = bitsandbytes Lion, sgd = torch.optim.SGD, adafactor = transformers' Adafactor).
TRAINER_OPTIM: dict[Optimizer, str] = {
    "adamw": "adamw_torch",
    "adamw_8bit": "adamw_bnb_8bit",
    "lion": "lion_32bit",
    "sgd": "sgd",
    "adafactor": "adafactor",
}
# The Trainer's bitsandbytes paged optimizers (OptimizerNames paged_adamw_32bit, paged_adamw_8bit, paged_lion_32bit),
# named where the estimate pages the states (app/estimator/memory/states.py `paged_optimizer`: QLoRA without ZeRO
# sharding).
TRAINER_PAGED_OPTIM: dict[Optimizer, str] = {
    "adamw": "paged_adamw_32bit",
    "adamw_8bit": "paged_adamw_8bit",
    "lion": "paged_lion_32bit",
}


def hf_modules(model: ModelSpec | None, target: str) -> tuple[str, ...]:
    """The Hugging Face module names PEFT adapts for one of our targets, in this model's family."""
    family = model.family if model is not None else None
    if model is not None and model.mla is not None and target in ATTENTION_TARGETS and target != "o":
        return (("q_a_proj", "q_b_proj") if model.mla[0] else ("q_proj",)) if target == "q" else _DEEPSEEK_KV
    names = HF_FAMILY_MODULES.get(family or "", {})
    return names.get(target, (HF_MODULES[target],))


def peft_config(workload: Workload, model: ModelSpec | None = None) -> dict[str, Any]:
    lora = _lora(workload)
    # "all-linear": PEFT's own shorthand for every linear layer but the output head (peft/tuners/tuners_utils.py)
    targets: Any = "all-linear" if "all-linear" in lora.targets else lora_targets(lora, lambda t: hf_modules(model, t))
    config: dict[str, Any] = {
        "r": lora.rank,
        "lora_alpha": _alpha(lora),
        "lora_dropout": lora.dropout,
        "target_modules": targets,
        "bias": "none",
        "task_type": "CAUSAL_LM",
    }
    if model is not None and model.family == "gpt2":
        config["fan_in_fan_out"] = True  # GPT-2's Conv1D stores weights transposed (PEFT LoraConfig)
    return config


def bnb_config(workload: Workload) -> dict[str, Any]:
    dtype = TORCH_DTYPE[workload.precision]
    return {
        "load_in_4bit": True,
        "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": True,
        "bnb_4bit_compute_dtype": dtype,
        "bnb_4bit_quant_storage": dtype,
    }


# The optimizers that take betas (AdamW and Lion, bitsandbytes' 8-bit AdamW too), with the schedule's (SCHEDULES)
OPTIMIZER_BETAS: dict[Optimizer, tuple[float, float]] = {
    "adamw": (0.9, 0.95),
    "adamw_8bit": (0.9, 0.95),
    "lion": (0.9, 0.95),
}


def data_collator(workload: Workload) -> dict[str, Any]:
    """The Trainer's collator as the estimate counted the batches: padded to the longest sample of each batch
    (transformers DataCollatorForSeq2Seq, `padding=True`, PaddingStrategy.LONGEST) where lengths vary, else padded to
    seq_len (`padding="max_length"`), batches of one length."""
    if workload.varied_lengths:
        return {"class": "DataCollatorForSeq2Seq", "padding": "longest"}
    return {"class": "DataCollatorForSeq2Seq", "padding": "max_length", "max_length": workload.seq_len}


def _trainer_arguments(model: ModelSpec, workload: Workload, plan: Plan, global_batch: int) -> dict[str, Any]:
    """Hugging Face TrainingArguments: the batch ds_config states, the run's length, recompute, dtype, and the
    optimizer the estimate sized (`optim`) with the schedule's rate. The Trainer checks ds_config's numbers against
    these (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process: `fill_match` of
    train_micro_batch_size_per_gpu, gradient_accumulation_steps, train_batch_size, gradient_clipping; a mismatch
    raises in trainer_config_finalize) and fills its "auto" optimizer values from them; `max_steps` ends the cosine
    schedule where the estimate's tokens end, as --train-iters does for Megatron."""
    run = run_schedule(model, workload, global_batch)
    arguments: dict[str, Any] = {
        "per_device_train_batch_size": plan.micro_batch,
        "gradient_accumulation_steps": accumulation_steps(plan, global_batch),
        **({"max_steps": run.iters} if run.iters is not None else {}),
        "gradient_checkpointing": plan.recompute == "full",
        "bf16": workload.precision in BF16_RUN_PRECISIONS,
        "fp16": workload.precision == "fp16",
        "optim": trainer_optim(workload, plan),
        # the memory levers the estimate counted (plan.loss fused: Liger's fused linear cross-entropy; plan.compile)
        **({"use_liger_kernel": True} if plan.fused_loss else {}),
        **({"torch_compile": True} if plan.compiled else {}),
        "learning_rate": run.lr,
        "weight_decay": 0.1,
        "lr_scheduler_type": "cosine",
        "warmup_ratio": run.warmup_fraction,
        "max_grad_norm": 1.0,
    }
    betas = OPTIMIZER_BETAS.get(workload.optimizer)
    if betas is not None:  # the Trainer passes them as these optimizers' betas
        arguments |= {"adam_beta1": betas[0], "adam_beta2": betas[1]}
    return arguments


def trainer_optim(workload: Workload, plan: Plan) -> str:
    """TrainingArguments.optim: the paged variant where the estimate counted paged states, else the plain one."""
    paged = TRAINER_PAGED_OPTIM.get(workload.optimizer) if paged_optimizer(workload, plan) else None
    return paged or TRAINER_OPTIM[workload.optimizer]


def _trainer_model(model: ModelSpec, workload: Workload, plan: Plan) -> dict[str, str]:
    """What the training script builds its model from: the released weights (AutoModelForCausalLM.from_pretrained of
    the repository) for every task but pretraining, which builds the architecture with random weights
    (AutoModelForCausalLM.from_config of the repository's config.json), with the attention the estimate sized
    (plan.attention: transformers modeling_utils.py from_pretrained `attn_implementation`)."""
    init = "from_config" if workload.task == "pretrain" else "from_pretrained"
    attention = TRAINER_ATTENTION["eager" if not plan.flash_attention else plan.attention]
    return {"pretrained_model_name_or_path": _repo(model), "init": init, "attn_implementation": attention}


# transformers' attn_implementation per plan.attention ("eager", "sdpa", "flash_attention_2": modeling_utils.py)
TRAINER_ATTENTION = {"flash": "flash_attention_2", "sdpa": "sdpa", "eager": "eager"}
