"""A plan as the named stack's complete launch configuration. PURE.

Every configuration carries the world size, the batch arithmetic over the ranks that really see
different data (data parallel only: tensor, pipeline and context ranks share a batch), recompute,
and for LoRA/QLoRA the adapter settings. Keys come from each tool's documentation:

- DeepSpeed `ds_config.json` (deepspeed.readthedocs.io "DeepSpeed Configuration JSON"):
  train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel
  size, which DeepSpeed checks at start-up; zero_optimization.stage,
  offload_optimizer / offload_param {device, pin_memory}, overlap_comm, contiguous_gradients,
  stage3_gather_16bit_weights_on_model_save; bf16 / fp16. Data parallel only (the Trainer runs no
  pipeline: data/stacks.json); the Trainer's gradient_checkpointing is the recompute.
  LoRA: PEFT `LoraConfig` (r, lora_alpha, lora_dropout, target_modules, bias, task_type); QLoRA:
  transformers `BitsAndBytesConfig` with NF4, double quantisation and `bnb_4bit_quant_storage`
  (PEFT docs: needed to shard the 4-bit weights under ZeRO-3).
- torchtitan job config (torchtitan/config/job_config.py at v0.2.2, the last release configured by a
  TOML file; docs/composability.md): parallelism.{data_parallel_replicate_degree,
  data_parallel_shard_degree, tensor_parallel_degree, pipeline_parallel_degree,
  context_parallel_degree, fsdp_reshard_after_forward, pipeline_parallel_microbatch_size},
  training.{local_batch_size, global_batch_size, seq_len, steps, mixed_precision_param,
  mixed_precision_reduce, enable_cpu_offload}, activation_checkpoint.{mode, selective_ac_option},
  checkpoint.{initial_load_in_hf, interval}, optimizer, lr_scheduler, model.converters for float8.
  FSDP2 has no FSDP1 `sharding_strategy`: the shard and replicate degrees say it. The fsdp stack runs
  no LoRA/QLoRA (data/stacks.json: torchtune's recipe needs a per-model config this launch did not write).
- Megatron-LM arguments (megatron/training/arguments.py): parallel sizes, --sequence-parallel,
  --use-distributed-optimizer, recompute, batch sizes, and the architecture flags without which
  Megatron builds a GPT-2-style model: --normalization RMSNorm with the model's --norm-epsilon,
  --position-embedding-type rope with --rotary-base (the model's rope_theta) and, for Llama 3.1/3.2,
  --use-rope-scaling --rope-scaling-factor, --swiglu, --untie-embeddings-and-output-weights,
  --disable-bias-linear, --add-qkv-bias (Qwen2), --group-query-attention --num-query-groups, and for
  MoE --num-experts, --moe-router-topk, --moe-ffn-hidden-size, --expert-model-parallel-size. A
  fine-tune loads the converted checkpoint (--load, --finetune: iteration 0, no optimizer or RNG
  state) and saves elsewhere (--save, --save-interval from the estimator's checkpoint interval); the
  tokenizer is HuggingFaceTokenizer with the model's repository; data is a --data-path placeholder
  with --split; --train-iters = tokens ÷ (global batch × sequence length); the optimizer the estimate
  sized (--optimizer adam | sgd: TRAINER_OPTIM and its neighbours name it per tool) with a cosine schedule
  (SCHEDULES).
  Per family: --qk-layernorm (Qwen3, DeepSeek), --multi-latent-attention with its ranks, --moe-layer-freq and
  the router flags (DeepSeek); families Megatron's arguments cannot build never reach here (data/stacks.json).
  PEFT target_modules are the family's transformers module names (HF_FAMILY_MODULES).
- Megatron-Bridge for LoRA (NVIDIA-NeMo/Megatron-Bridge v0.6.0): scripts/training/run_recipe.py under torchrun
  with `--recipe <model>_peft_config --mode lora` (the model's PEFT recipe, data/stacks.json peft_recipes), and for
  a full fine-tune `--recipe <model>_sft_config --mode sft` (`sft_recipe`; the same overrides less peft.*; fp8 on
  Hopper with bf16 weights adds `mixed_precision=bf16_with_fp8_subchannel_scaling_mixed`, `BRIDGE_FP8`),
  `--dataset local-jsonl` and trailing KEY=VALUE ConfigContainer overrides (run_recipe.py COMMON_OVERRIDE_FIELDS
  and the dataclass fields: model.* parallel sizes, sequence_parallel and recompute_* of Megatron-Core's
  TransformerConfig; train.*; dataset.seq_length / dataset_root; checkpoint.pretrained_checkpoint, save,
  save_interval; the optimizer the estimate sized as Megatron-Core's OptimizerConfig names it (optimizer.optimizer
  adam | sgd with its betas or sgd_momentum, lr / min_lr, weight_decay, clip_grad, use_distributed_optimizer) and the
  schedule the Megatron-LM launch states, over the run it launches (scheduler.lr_decay_iters = train.train_iters,
  lr_warmup_iters, cosine, lr_warmup_init, the weight decay: the recipes hard-code others); peft.dim, alpha,
  dropout, target_modules of megatron/bridge/peft/lora.py LoRA on linear_qkv, linear_proj, linear_fc1,
  linear_fc2).

tests/planner/test_launch_schemas.py checks every emitted Megatron flag, Megatron-Bridge override and torchtitan
key against the lists extracted from those files (tests/planner/data/, with their commits).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

from app.estimator.memory import paged_optimizer
from app.estimator.params import count_params
from app.estimator.performance import compute_precision, generation
from app.estimator.specs import GpuSpec, LoraSpec, MemoryBreakdown, ModelSpec, Performance, Plan, Workload
from app.estimator.vocabulary import (
    ATTENTION_TARGETS,
    BF16_RUN_PRECISIONS,
    BYTES_PER_ELEMENT,
    LORA_TARGETS,
    LORA_TASKS,
    Optimizer,
    Precision,
)
from app.messages import launch as launch_text
from app.planner.launch_versions import training_versions
from app.planner.shapes import stage_layers
from app.planner.stacks import Stack, flavor, peft_recipe

# LoRA target names: ours → Hugging Face Llama module names (PEFT) / Megatron-Core linear layers.
HF_MODULES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}
MEGATRON_MODULES = {
    "q": "linear_qkv",
    "k": "linear_qkv",
    "v": "linear_qkv",
    "o": "linear_proj",
    "gate": "linear_fc1",
    "up": "linear_fc1",
    "down": "linear_fc2",
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
# Megatron-Core MultiLatentAttention's linear layers (megatron/core/transformer/multi_latent_attention.py)
MEGATRON_MLA_MODULES = {
    "q": ("linear_q_down_proj", "linear_q_up_proj"),
    "k": ("linear_kv_down_proj", "linear_kv_up_proj"),
    "v": ("linear_kv_down_proj", "linear_kv_up_proj"),
    "o": ("linear_proj",),
}
TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "bfloat16"}


@dataclass(frozen=True, slots=True)
class Schedule:
    """Peak learning rate and warm-up of a run, by task. AdamW with beta1 0.9, beta2 0.95, weight decay 0.1,
    gradient clipping 1.0 and a cosine decay to a tenth of the peak, as Llama 2 was trained (Touvron et al.
    2023 §2.2); the customer tunes the rate, the launch block only has to start a sane run."""

    lr: float
    warmup_fraction: float


SCHEDULES = {
    "pretrain": Schedule(3e-4, 0.03),  # Llama 2 7B/13B peak (§2.2, Table 1); warm-up: PRETRAIN_WARMUP_ITERS
    # Continued pretraining re-warms the rate and decays it again over the new tokens, which with replay of the
    # original data matches re-training from scratch (Ibrahim et al. 2024, "Simple and Scalable Strategies to
    # Continually Pre-train Large Language Models", arXiv:2403.08763); a lower peak forgets less of the upstream
    # data (Gupta et al. 2023, "Continual Pre-Training of LLMs: How to (re)warm your model?", arXiv:2308.04014),
    # so the peak is Llama 2's 34B/70B pretraining peak, half the 7B one (Touvron et al. 2023 Table 1: 1.5e-4), and
    # never above the peak the model itself was pre-trained with where its publisher states it (`peak_lr`); the
    # warm-up's length mattered little there, so a short 1 % of the run
    "continued_pretrain": Schedule(1.5e-4, 0.01),
    "full_finetune": Schedule(2e-5, 0.03),  # Llama 2 SFT: 2e-5, cosine (§3.1); warm-up ratio 0.03: Stanford Alpaca
    "lora": Schedule(2e-4, 0.03),  # QLoRA's 2e-4 for 7B-13B adapters (Dettmers et al. 2023, App. B.2), ratio 0.03
    "qlora": Schedule(2e-4, 0.03),
}
GIB_BYTES = 1024**3
PRETRAIN_WARMUP_ITERS = 2000  # Llama 2's warm-up (§2.2); a shorter run warms up over its first 3 %
MIN_LR_RATIO = 0.1  # cosine decay to 10 % of the peak (Llama 2 §2.2)
# Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh: train / validation / test shares of the data
MEGATRON_SPLIT = "949,50,1"
# Megatron's --use-rope-scaling applies the llama3 frequency scaling (low 1, high 4, original 8,192 positions);
# config.json's other rope types (linear, dynamic…) have no such flag. YaRN has flags for multi-latent attention
# only (MEGATRON_MLA_YARN).
MEGATRON_ROPE_SCALING = "llama3"
MEGATRON_YARN = "yarn"
# Megatron-LM core_v0.15.3 arguments.py `_add_mla_args`: --rotary-scaling-factor (default 1.0), --mscale (1.0),
# --mscale-all-dim (0.0) feed MLATransformerConfig (megatron/core/transformer/transformer_config.py), whose YaRN
# rope is the default for MLA; config.json key -> flag.
MEGATRON_MLA_YARN = {"mscale": "--mscale", "mscale_all_dim": "--mscale-all-dim"}
# MLATransformerConfig's YaRN fields no argument sets (original_max_position_embeddings 4096, beta_fast 32,
# beta_slow 1): a model stating other values needs them set in the model provider.
MEGATRON_MLA_YARN_FIXED = {"original_max_position_embeddings": 4096.0, "beta_fast": 32.0, "beta_slow": 1.0}

# The optimizer the estimate sized (Workload.optimizer), as each tool names it. A stack without an entry cannot
# express it (the support matrix never chooses it then; `expresses`).
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
# named where the estimate pages the states (app/estimator/memory.py `paged_optimizer`: QLoRA without ZeRO sharding).
TRAINER_PAGED_OPTIM: dict[Optimizer, str] = {
    "adamw": "paged_adamw_32bit",
    "adamw_8bit": "paged_adamw_8bit",
    "lion": "paged_lion_32bit",
}
# - DeepSpeed ds_config `optimizer.type` under ZeRO-Offload (deepspeed/runtime/engine.py `_configure_basic_optimizer`):
#   AdamW and Lion select its CPU implementations (DeepSpeedCPUAdam, DeepSpeedCPULion); `_configure_optimizer`
#   refuses a Trainer-built optimizer under offload, so the support matrix offers only these two there.
DEEPSPEED_OPTIMIZER: dict[Optimizer, str] = {"adamw": "AdamW", "lion": "Lion"}
# - Megatron-LM core_v0.15.3 arguments.py `--optimizer` choices ['adam', 'sgd'] (megatron/core/optimizer: adam is
#   Transformer Engine's FusedAdam with decoupled weight decay, i.e. AdamW; sgd is FusedSGD with --sgd-momentum).
MEGATRON_OPTIMIZER: dict[Optimizer, str] = {"adamw": "adam", "sgd": "sgd"}
MEGATRON_SGD_MOMENTUM = 0.9  # arguments.py --sgd-momentum default; the estimate counts its momentum buffer
# - torchtitan v0.2.2 torchtitan/components/optimizer.py `build_optimizers`: {"Adam", "AdamW"}, anything else
#   raises NotImplementedError.
TORCHTITAN_OPTIMIZER: dict[Optimizer, str] = {"adamw": "AdamW"}

# Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh: FP8 through Transformer Engine (the default
# --transformer-impl) in a --bf16 run, E4M3 forward / E5M2 backward ("hybrid") with delayed scaling over a
# 1,024-step amax history. --fp8-param-gather (fp8 weights) only where the plan says fp8_params, as the estimate counts.
MEGATRON_FP8 = ["--fp8-format hybrid", "--fp8-amax-history-len 1024", "--fp8-amax-compute-algo max"]


def accumulation_steps(plan: Plan, global_batch: int) -> int:
    return max(1, global_batch // (plan.dp * plan.micro_batch))


def train_iters(workload: Workload, global_batch: int) -> int | None:
    """Optimizer steps that train on `workload.tokens`: tokens ÷ (global batch × sequence length), rounded up;
    None without a token count."""
    if not workload.tokens or not global_batch:
        return None
    return max(1, math.ceil(workload.tokens / (global_batch * workload.seq_len)))


def warmup_steps(workload: Workload, iters: int) -> int:
    """Learning-rate warm-up: the task's share of the run (SCHEDULES), pretraining at most Llama 2's 2,000 steps."""
    steps = max(1, math.ceil(iters * SCHEDULES.get(workload.task, SCHEDULES["full_finetune"]).warmup_fraction))
    return min(PRETRAIN_WARMUP_ITERS, steps) if workload.task == "pretrain" else steps


def save_interval(iters: int, performance: Performance | None) -> int:
    """Steps between checkpoints: the estimator's checkpoint interval (Young's optimum, app/estimator/goodput.py)
    over the step time; the whole run when the estimate has none."""
    goodput = performance.goodput if performance is not None else None
    step = performance.step_time_s if performance is not None else None
    if goodput is None or not step:
        return iters
    return max(1, min(iters, math.floor(goodput.checkpoint_interval_hours * 3600 / step)))


def _repo(model: ModelSpec) -> str:
    """The Hugging Face repository the weights and tokenizer come from, or a local path to fill in."""
    return model.hf_repo or f"/models/{_slug(model)}-hf"


def _slug(model: ModelSpec) -> str:
    """A file-name-safe name for the model's checkpoint and data directories."""
    name = (model.hf_repo or model.name).rsplit("/", 1)[-1].lower()
    return re.sub(r"[^a-z0-9._-]+", "-", name).strip("-") or "model"


def _lora(workload: Workload) -> LoraSpec:
    return workload.lora or LoraSpec()


def _alpha(lora: LoraSpec) -> float:
    return lora.alpha if lora.alpha is not None else 2.0 * lora.rank


def hf_modules(model: ModelSpec | None, target: str) -> tuple[str, ...]:
    """The Hugging Face module names PEFT adapts for one of our targets, in this model's family."""
    family = model.family if model is not None else None
    if model is not None and model.mla is not None and target in ATTENTION_TARGETS and target != "o":
        return (("q_a_proj", "q_b_proj") if model.mla[0] else ("q_proj",)) if target == "q" else _DEEPSEEK_KV
    names = HF_FAMILY_MODULES.get(family or "", {})
    return names.get(target, (HF_MODULES[target],))


def lora_targets(lora: LoraSpec, names: Any) -> list[str]:
    """Module names for the LoRA targets, each once, in our target order."""
    chosen = LORA_TARGETS if "all-linear" in lora.targets else tuple(t for t in LORA_TARGETS if t in lora.targets)
    return list(dict.fromkeys(name for t in chosen for name in names(t)))


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


# The optimizers that take betas (AdamW and Lion, bitsandbytes' 8-bit AdamW too), with the schedule's (SCHEDULES)
OPTIMIZER_BETAS: dict[Optimizer, tuple[float, float]] = {
    "adamw": (0.9, 0.95),
    "adamw_8bit": (0.9, 0.95),
    "lion": (0.9, 0.95),
}


def peak_lr(model: ModelSpec, workload: Workload) -> float:
    """The run's peak learning rate: the task's (SCHEDULES). Continued pretraining re-warms to at most the peak the
    model was pre-trained with, where its publisher states it (ModelSpec.pretrain_peak_lr, data/presets.json: Llama
    3.1 405B 8e-5, The Llama 3 Herd of Models Table 3), so a large model is not pushed past its own peak."""
    lr = SCHEDULES.get(workload.task, SCHEDULES["full_finetune"]).lr
    if workload.task == "continued_pretrain" and model.pretrain_peak_lr is not None:
        return min(lr, model.pretrain_peak_lr)
    return lr


@dataclass(frozen=True)
class Job:
    """What every stack's launch block is written from: the model, the workload, the plan, the servers it
    runs on, and the plan's estimate (which sets how often a run saves)."""

    model: ModelSpec
    workload: Workload
    plan: Plan
    nodes: int
    gpus_per_node: int
    global_batch: int
    performance: Performance | None
    memory: MemoryBreakdown | None = None  # the plan's per-GPU breakdown: host RAM used and left on a node
    gpu: GpuSpec | None = None  # the GPU it runs on: where fp8 runs on Megatron-Bridge (`_bridge_sft`)

    def world(self) -> dict[str, Any]:
        return {"world_size": self.nodes * self.gpus_per_node, "data_parallel_size": self.plan.dp}

    def torchrun(self, target: str) -> str:
        return (
            f"torchrun --nnodes={self.nodes} --nproc-per-node={self.gpus_per_node} --rdzv-backend=c10d "
            f"--rdzv-endpoint=$MASTER_ADDR:29500 {target}"
        )


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
    (app/estimator/memory.py host_ram_limit). Unknown host RAM or no estimate: assumed to fit, DeepSpeed's usual
    setting."""
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
    schedule = SCHEDULES.get(workload.task, SCHEDULES["full_finetune"])
    iters = train_iters(workload, global_batch)
    arguments: dict[str, Any] = {
        "per_device_train_batch_size": plan.micro_batch,
        "gradient_accumulation_steps": accumulation_steps(plan, global_batch),
        **({"max_steps": iters} if iters is not None else {}),
        "gradient_checkpointing": plan.recompute == "full",
        "bf16": workload.precision in BF16_RUN_PRECISIONS,
        "fp16": workload.precision == "fp16",
        "optim": trainer_optim(workload, plan),
        # the memory levers the estimate counted (plan.loss fused: Liger's fused linear cross-entropy; plan.compile)
        **({"use_liger_kernel": True} if plan.fused_loss else {}),
        **({"torch_compile": True} if plan.compiled else {}),
        "learning_rate": peak_lr(model, workload),
        "weight_decay": 0.1,
        "lr_scheduler_type": "cosine",
        "warmup_ratio": schedule.warmup_fraction,
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


# A launch note: its code in the launch's catalog (app/launch_words.py LAUNCH, en and zh) and its parameters.
LaunchNote = dict[str, Any]


def _note(code: str, **params: Any) -> LaunchNote:
    return {"code": code, "params": params}


def _notes_out(notes: list[LaunchNote]) -> dict[str, Any]:
    """A launch block's `notes` in English, and `texts` with their codes and parameters (a page words them in its
    reader's language, as a serving launch's)."""
    return {"notes": [launch_text(n["code"], n["params"]) for n in notes], "texts": {"notes": notes}}


def _task_notes(model: ModelSpec, workload: Workload) -> list[LaunchNote]:
    """What the task asks of the data, whatever the stack: continued pretraining mixes replay into the new text
    (Ibrahim et al. 2024, arXiv:2403.08763: replaying 5 % of the original distribution kept the loss on it for a weak
    shift, English to English; a stronger shift, English to German, needed 25 %) and re-warms to `peak_lr`, which
    names the model's published peak where that caps it (app/launch_words.py, en and zh)."""
    if workload.task != "continued_pretrain":
        return []
    lr, default = peak_lr(model, workload), SCHEDULES["continued_pretrain"].lr
    if lr < default:
        return [_note("continued_pretrain_capped", lr=lr, default=default, model=_repo(model))]
    return [_note("continued_pretrain", lr=lr)]


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


def _fsdp(job: Job) -> dict[str, Any]:
    model, workload, plan = job.model, job.workload, job.plan
    return {
        "command": job.torchrun("-m torchtitan.train --job.config_file train.toml"),
        **job.world(),
        "torchtitan": torchtitan_config(model, workload, plan, job.global_batch, job.performance),
        **_notes_out([_note("torchtitan_download", repo=_repo(model)), *_task_notes(model, workload)]),
    }


def _torchtitan_stage_split(model: ModelSpec, plan: Plan) -> dict[str, int]:
    """The stage split the estimate sized (app/planner/shapes.py stage_layers), in torchtitan's terms: its
    automatic split counts the embedding as `first_stage_less_layers` layers and the head as `last_stage_less_layers`
    (both default 1, which gives even layer counts uneven stages: 32 layers on PP 4 as 8 | 9 | 8 | 7) and deals the
    layers plus those out evenly (v0.2.2 distributed/pipeline_parallel.py generate_llm_fqn_per_model_part). Setting
    them to the first and last stages' shortfall from the middle stages' count makes every stage hold exactly its
    share of the split: pp × middle effective layers, none left over."""
    split = stage_layers(model.layers, plan.pp) if plan.virtual_stages == 1 else None
    if split is None:
        return {}
    first, middle, last = split
    return {
        "pipeline_parallel_first_stage_less_layers": middle - first,
        "pipeline_parallel_last_stage_less_layers": middle - last,
    }


def torchtitan_config(
    model: ModelSpec, workload: Workload, plan: Plan, global_batch: int, performance: Performance | None = None
) -> dict[str, Any]:
    """train.toml for torchtitan (job_config.py's sections; FSDP2, so no FSDP1 sharding strategy: ZeRO-3 is
    fsdp_reshard_after_forward "always", ZeRO-2 "never", hybrid sharding a replicate degree above 1)."""
    sharded = plan.zero_stage >= 2 and plan.dp > 1
    # hybrid sharding: shard over dp_shard, replicate over the rest (torchtitan runs HSDP when both exceed 1)
    shard = plan.shard_dp if sharded else 1
    parallelism: dict[str, Any] = {
        "data_parallel_replicate_degree": plan.dp // shard,
        "data_parallel_shard_degree": shard,
        "tensor_parallel_degree": plan.tp,
        "pipeline_parallel_degree": plan.pp,
        "context_parallel_degree": plan.cp,
        "fsdp_reshard_after_forward": "always" if plan.zero_stage == 3 else "never",
    }
    if plan.pp > 1:
        parallelism["pipeline_parallel_microbatch_size"] = plan.micro_batch
        parallelism["pipeline_parallel_schedule"] = "Interleaved1F1B" if plan.virtual_stages > 1 else "1F1B"
        parallelism.update(_torchtitan_stage_split(model, plan))
    training: dict[str, Any] = {
        # torchtitan accumulates gradients itself when global > local × data-parallel ranks
        "local_batch_size": global_batch // plan.dp if plan.pp > 1 else plan.micro_batch,
        "global_batch_size": global_batch,
        "seq_len": workload.seq_len,
        "mixed_precision_param": TORCH_DTYPE[workload.precision],
        "mixed_precision_reduce": "float32",
        "enable_cpu_offload": plan.offload != "none",
        "max_norm": 1.0,
        "dataset_path": f"/data/{_slug(model)}",
    }
    # scripts/download_hf_assets.py --repo_id <repo> writes ./assets/hf/<name> (torchtitan's example configs)
    assets = f"./assets/hf/{(model.hf_repo or _slug(model)).rsplit('/', 1)[-1]}"
    # the registered model and flavor (torchtitan/models/*/__init__.py); the stack is only chosen for those
    entry = flavor("fsdp", model)
    named = {"name": entry.name, "flavor": entry.flavor} if entry is not None else {}
    config: dict[str, Any] = {
        "model": {**named, "hf_assets_path": assets},
        "parallelism": parallelism,
        "training": training,
        "activation_checkpoint": {"mode": plan.recompute, "selective_ac_option": "op"},
    }
    iters = train_iters(workload, global_batch)
    name = TORCHTITAN_OPTIMIZER[workload.optimizer]
    lr = peak_lr(model, workload)
    config["optimizer"] = {"name": name, "lr": lr, "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95}
    config["lr_scheduler"] = {"decay_type": "cosine", "min_lr_factor": MIN_LR_RATIO}
    checkpoint: dict[str, Any] = {"enable": True, "folder": f"{_slug(model)}-{workload.task.replace('_', '-')}"}
    if iters is not None:
        training["steps"] = iters
        config["lr_scheduler"]["warmup_steps"] = warmup_steps(workload, iters)
        checkpoint["interval"] = save_interval(iters, performance)
    if workload.task != "pretrain":  # start from the published weights in hf_assets_path (docs/checkpoint.md)
        checkpoint |= {"initial_load_in_hf": True, "initial_load_model_only": True}
    config["checkpoint"] = checkpoint
    if plan.compiled:  # the estimate counted torch.compile's recomputed pointwise ops (plan.compile)
        # and, with plan.loss "compiled", the loss compiled with it (torchtitan --compile.components)
        config["compile"] = {"enable": True, "components": ["model", "loss"] if plan.compiled_loss else ["model"]}
    if workload.precision == "fp8":
        config |= _torchtitan_float8(shard > 1)
        config["model"]["converters"] = ["quantize.linear.float8"]
    return config


def _torchtitan_float8(sharded: bool) -> dict[str, Any]:
    """torchtitan v0.2.2 float8 training (docs/float8.md, torchtitan/components/quantization/float8.py): the
    quantize.linear.float8 converter swaps nn.Linear for torchao's Float8Linear, tensorwise scaling by default;
    with FSDP sharding it all-gathers the weights in float8 and precomputes their scales in one all-reduce;
    torch.compile fuses the casts ("required for competitive performance"). The converter raises below SM89, so it
    is only emitted where the GPU runs fp8 (`launch_configs`)."""
    float8 = {"enable_fsdp_float8_all_gather": True, "precompute_float8_dynamic_scale_for_fsdp": True}
    return {"quantize": {"linear": {"float8": float8 if sharded else {}}}, "compile": {"enable": True}}


def megatron_args(
    model: ModelSpec, workload: Workload, plan: Plan, global_batch: int, performance: Performance | None = None
) -> list[str]:
    args = _megatron_parallel_args(model, workload, plan, global_batch)
    args += _architecture_args(model)
    args += _megatron_run_args(model, workload, global_batch, performance)
    return args


def uneven_stages(model: ModelSpec, plan: Plan) -> tuple[int, int] | None:
    """The layers of the first and the last pipeline stage where pp does not divide the layers (None otherwise, or
    with virtual stages, which Megatron-LM splits only evenly here): the split the estimate sized
    (app/planner/shapes.py stage_layers: the middle stages hold the most layers, the first and last the rest)."""
    if plan.pp == 1 or plan.virtual_stages > 1 or model.layers % plan.pp == 0:
        return None
    split = stage_layers(model.layers, plan.pp)
    return None if split is None else (split[0], split[2])


def _megatron_parallel_args(model: ModelSpec, workload: Workload, plan: Plan, global_batch: int) -> list[str]:
    args = [
        f"--tensor-model-parallel-size {plan.tp}",
        f"--pipeline-model-parallel-size {plan.pp}",
        f"--micro-batch-size {plan.micro_batch}",
        f"--global-batch-size {global_batch}",
        f"--seq-length {workload.seq_len}",
        f"--max-position-embeddings {max(workload.seq_len, model.learned_positions)}",
        f"--num-layers {model.layers}",
        f"--hidden-size {model.hidden}",
        f"--num-attention-heads {model.heads}",
        f"--ffn-hidden-size {model.ffn}",
        "--attention-dropout 0.0",
        "--hidden-dropout 0.0",
    ]
    if plan.virtual_stages > 1:
        args.append(f"--num-layers-per-virtual-pipeline-stage {model.layers // (plan.pp * plan.virtual_stages)}")
    uneven = uneven_stages(model, plan)
    if uneven is not None:
        args += [f"--decoder-first-pipeline-num-layers {uneven[0]}", f"--decoder-last-pipeline-num-layers {uneven[1]}"]
    if plan.tp > 1:
        args.append("--sequence-parallel")
    if plan.cp > 1:
        args.append(f"--context-parallel-size {plan.cp}")
    if plan.ep > 1:
        args.append(f"--expert-model-parallel-size {plan.ep}")
    if plan.zero_stage >= 1 and plan.dp > 1:
        args.append("--use-distributed-optimizer")
    args += _megatron_lever_args(model, plan)
    args += _megatron_recompute_args(plan)
    args += _megatron_precision_args(workload, plan)
    # Megatron-LM pads the tokenizer's length up to a multiple of make_vocab_size_divisible_by × tp
    # (megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding, default 128) while a converted Hugging Face
    # checkpoint keeps config.json's vocab_size (Megatron-Bridge should_pad_vocab False): vocab_size ÷ tp pads to
    # exactly that size at any tp, as Megatron-LM's examples/post_training/modelopt/conf files set it per model
    if model.vocab % plan.tp == 0:
        args.append(f"--make-vocab-size-divisible-by {model.vocab // plan.tp}")
    return args


def _megatron_recompute_args(plan: Plan) -> list[str]:
    if plan.recompute == "selective":
        return ["--recompute-activations"]
    if plan.recompute == "full":
        return ["--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"]
    return []


def _megatron_precision_args(workload: Workload, plan: Plan) -> list[str]:
    """The run's 16-bit type (an FP8 run keeps BF16 outside its GEMMs), then FP8's own flags."""
    args = ["--bf16"] if workload.precision in BF16_RUN_PRECISIONS else []
    if workload.precision == "fp16":
        args.append("--fp16")
    if workload.precision != "fp8":
        return args
    args += MEGATRON_FP8
    if plan.fp8_params:  # the weights the estimate counts in FP8 (plan.fp8_params; Megatron-LM arguments.py)
        # and the bf16 gradient buffer it counts with them (memory.states `fp32_grad_buffer`)
        args += ["--fp8-param-gather", "--grad-reduce-in-bf16"]
    return args


def _megatron_lever_args(model: ModelSpec, plan: Plan) -> list[str]:
    """The memory levers the estimate counted (app/planner/levers.py): the attention backend (megatron/core/
    transformer/enums.py AttnBackend: flash, or unfused for eager), Megatron-Core's native fused cross-entropy
    (model_parallel_config.py cross_entropy_loss_fusion), activations offloaded to the CPU for every layer but the
    last (cpu_offloading, cpu_offloading_num_layers below num_layers: transformer_config.py)."""
    args = [f"--attention-backend {'flash' if plan.flash_attention else 'unfused'}"]
    if plan.fused_loss:
        args.append("--cross-entropy-loss-fusion")
    if plan.activation_offload:
        args += ["--cpu-offloading", f"--cpu-offloading-num-layers {max(0, model.layers // plan.pp - 1)}"]
    return args


def _megatron_run_args(
    model: ModelSpec, workload: Workload, global_batch: int, performance: Performance | None
) -> list[str]:
    """Checkpoints, tokenizer, data, length and schedule. A fine-tune loads the converted checkpoint and starts
    a new run from it (--finetune: iteration 0, optimizer and RNG state not loaded); pretraining starts from
    scratch. The data prefix is a placeholder for the customer's dataset, preprocessed by Megatron's
    tools/preprocess_data.py with the same tokenizer."""
    slug = _slug(model)
    save = _save_dir(model, workload)
    # pretraining loads its own save directory: a relaunch resumes there, a first launch finds none and starts
    # from scratch (Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh passes one path to both)
    args = [f"--load /checkpoints/{slug}-mcore", "--finetune"] if workload.task != "pretrain" else [f"--load {save}"]
    args += [
        f"--save {save}",
        "--tokenizer-type HuggingFaceTokenizer",
        f"--tokenizer-model {_repo(model)}",
        f"--data-path /data/{slug}_text_document",
        f"--split {MEGATRON_SPLIT}",
    ]
    iters = train_iters(workload, global_batch)
    if iters is not None:
        args += [f"--train-iters {iters}", f"--save-interval {save_interval(iters, performance)}"]
    schedule = SCHEDULES.get(workload.task, SCHEDULES["full_finetune"])
    optimizer, lr = MEGATRON_OPTIMIZER[workload.optimizer], peak_lr(model, workload)
    args += [
        f"--optimizer {optimizer}",
        f"--lr {lr:g}",
        f"--min-lr {lr * MIN_LR_RATIO:g}",
        "--lr-decay-style cosine",
        "--weight-decay 0.1",
        "--clip-grad 1.0",
    ]
    if optimizer == "adam":
        args += ["--adam-beta1 0.9", "--adam-beta2 0.95"]
    else:
        args.append(f"--sgd-momentum {MEGATRON_SGD_MOMENTUM:g}")
    if workload.task == "pretrain" and iters is not None:
        args.append(f"--lr-warmup-iters {warmup_steps(workload, iters)}")
    else:
        args.append(f"--lr-warmup-fraction {schedule.warmup_fraction:g}")
    return args


def _architecture_args(model: ModelSpec) -> list[str]:
    """Megatron defaults describe GPT-2 (LayerNorm, learned positions, GELU, tied embeddings, biases)."""
    return _layer_args(model) + _attention_args(model) + _moe_args(model)


def _layer_args(model: ModelSpec) -> list[str]:
    """Normalisation, positions, MLP, embeddings and biases."""
    args = ["--normalization RMSNorm"] if model.norm == "rmsnorm" else []
    args += _position_args(model)
    if model.norm_eps is not None:  # Megatron's default is 1e-5; Qwen and Gemma use 1e-6
        args.append(f"--norm-epsilon {model.norm_eps:g}")
    if model.mlp == "swiglu":
        args.append("--swiglu")
    if not model.tied_embeddings:
        args.append("--untie-embeddings-and-output-weights")
    if not model.linear_bias:
        args.append("--disable-bias-linear")
    if model.qkv_bias:
        args.append("--add-qkv-bias")
    if model.family in QK_NORM_FAMILIES:
        args.append("--qk-layernorm")
    return args


def _position_args(model: ModelSpec) -> list[str]:
    if model.learned_positions:
        return []
    args = ["--position-embedding-type rope"]
    if model.rope_theta is not None:  # Megatron's default base is 10,000; Llama 3 uses 500,000
        args.append(f"--rotary-base {model.rope_theta:.0f}")
    if model.rope_scaling is not None and model.rope_scaling[0] == MEGATRON_ROPE_SCALING:
        args += ["--use-rope-scaling", f"--rope-scaling-factor {model.rope_scaling[1]:g}"]
    return args + _mla_yarn_args(model)


def _attention_args(model: ModelSpec) -> list[str]:
    if model.mla is not None:
        return _mla_args(model.mla)
    args = [f"--kv-channels {model.head_dim}"] if model.head_dim is not None else []
    if model.kv_heads != model.heads:
        args += ["--group-query-attention", f"--num-query-groups {model.kv_heads}"]
    return args


def _moe_args(model: ModelSpec) -> list[str]:
    """Where the expert layers start, DeepSeek's routing, and the experts."""
    args = []
    if model.is_moe and model.moe_layers < model.layers and model.first_dense_layers:
        dense = model.first_dense_layers
        args.append(f"--moe-layer-freq ([0]*{dense}+[1]*{model.layers - dense})")
    args += DEEPSEEK_ROUTER.get(model.family or "", [])
    if not model.is_moe:
        return args
    args += [
        f"--num-experts {model.experts}",
        f"--moe-router-topk {model.experts_per_token}",
        f"--moe-ffn-hidden-size {model.expert_ffn or model.ffn}",
        "--moe-token-dispatcher-type alltoall",
        "--moe-grouped-gemm",
    ]
    if "--moe-router-enable-expert-bias" not in DEEPSEEK_ROUTER.get(model.family or "", []):
        # load balancing: arguments.py defaults --moe-aux-loss-coeff to 0.0, which trains with none; Megatron-LM's
        # examples/mixtral/train_mixtral_8x7b_distributed.sh passes 1e-2 (DeepSeek-V3 balances by expert bias)
        args.append(f"--moe-aux-loss-coeff {MOE_AUX_LOSS_COEFF:g}")
    if model.shared_experts:
        args.append(f"--moe-shared-expert-intermediate-size {model.shared_experts * (model.expert_ffn or model.ffn)}")
    return args


# Qwen3 normalises q and k per head (modeling_qwen3.py q_norm/k_norm; Megatron-LM
# examples/post_training/modelopt/conf/qwen/Qwen3-8B.sh, Qwen3-30B-A3B.sh pass --qk-layernorm); DeepSeek's MLA
# normalises its q and kv latents (q_a_layernorm, kv_a_layernorm; conf/deepseek-ai/*.sh pass --qk-layernorm too).
QK_NORM_FAMILIES = frozenset({"qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3"})
# DeepSeek routing, as Megatron-LM's examples/post_training/modelopt/conf/deepseek-ai/ configure it from the models'
# config.json: V2-Lite softmax top-k without renormalisation (DeepSeek-V2-Lite.sh), V3 sigmoid scores with the
# expert bias, 8 groups of which 4 are routed to and a 2.5 scaling (DeepSeek-R1.sh, the V3 architecture).
MOE_AUX_LOSS_COEFF = 1e-2  # Megatron-LM examples/mixtral/train_mixtral_8x7b_distributed.sh
DEEPSEEK_ROUTER = {
    "deepseek_v2": [
        "--moe-router-score-function softmax",
        "--moe-router-topk-scaling-factor 1.0",
        "--moe-router-pre-softmax",
    ],
    "deepseek_v3": [
        "--moe-router-score-function sigmoid",
        "--moe-router-enable-expert-bias",
        "--moe-router-num-groups 8",
        "--moe-router-group-topk 4",
        "--moe-router-topk-scaling-factor 2.5",
    ],
}


def _mla_yarn(model: ModelSpec) -> bool:
    """Whether Megatron's MLA YaRN flags express the model's RoPE scaling."""
    return model.mla is not None and model.rope_scaling is not None and model.rope_scaling[0] == MEGATRON_YARN


def _mla_yarn_args(model: ModelSpec) -> list[str]:
    """YaRN for multi-latent attention, as Megatron-LM's conf/deepseek-ai/DeepSeek-V2-Lite.sh and DeepSeek-R1.sh
    pass it: the factor and config.json's mscale / mscale_all_dim (arguments.py defaults 1.0 / 1.0 / 0.0 differ)."""
    if not _mla_yarn(model) or model.rope_scaling is None:
        return []
    params = dict(model.rope_params)
    args = [f"--rotary-scaling-factor {model.rope_scaling[1]:g}"]
    return args + [f"{flag} {params[key]:g}" for key, flag in MEGATRON_MLA_YARN.items() if key in params]


def _mla_args(mla: tuple[int, int, int, int, int]) -> list[str]:
    """Megatron-Core multi-latent attention with the model's ranks (arguments.py --multi-latent-attention group)."""
    q_rank, kv_rank, nope, rope, v_dim = mla
    args = ["--multi-latent-attention"] + ([f"--q-lora-rank {q_rank}"] if q_rank else [])
    return args + [
        f"--kv-lora-rank {kv_rank}",
        f"--qk-head-dim {nope}",
        f"--qk-pos-emb-head-dim {rope}",
        f"--v-head-dim {v_dim}",
    ]


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


def _megatron(job: Job) -> dict[str, Any]:
    model, workload = job.model, job.workload
    if workload.task == "lora":
        return _bridge(job)
    sft = _bridge_sft(model, workload, job.plan, job.gpu)
    if sft is not None:
        return _bridge(job, sft)
    # Megatron-LM's validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS == "1" when tp or cp > 1 before Blackwell
    # (megatron/training/arguments.py at core_v0.15.3; the overlap of its TP/CP communication relies on one hardware
    # queue), and its example scripts export it (examples/llama/train_llama3_8b_h100_fp8.sh): each server's torchrun
    # gets it on its command line
    env = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"} if job.plan.tp > 1 or job.plan.cp > 1 else {}
    prefix = "".join(f"{key}={value} " for key, value in env.items())
    return {
        "command": prefix + job.torchrun("pretrain_gpt.py $(cat megatron_args.txt)"),
        **({"env": env} if env else {}),
        **job.world(),
        "args": megatron_args(model, workload, job.plan, job.global_batch, job.performance),
        **_notes_out(_megatron_notes(model, workload, job.global_batch)),
    }


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
        # the estimate splits routed experts over tp as Megatron-Core's default does (expert_tensor_parallel_size None:
        # the tensor parallel size); the MoE recipes set 1 (qwen3_moe.py), which would keep every expert whole per rank
        *([f"model.expert_tensor_parallel_size={plan.tp}"] if model.is_moe else []),
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
    `_megatron_lever_args`): the native fused cross-entropy (cross_entropy_loss_fusion, cross_entropy_fusion_impl) and
    activation offload (cpu_offloading, cpu_offloading_num_layers)."""
    out = []
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


def _save_dir(model: ModelSpec, workload: Workload) -> str:
    return f"/checkpoints/{_slug(model)}-{workload.task.replace('_', '-')}"


def _megatron_notes(model: ModelSpec, workload: Workload, global_batch: int) -> list[LaunchNote]:
    """What the customer does before launching: convert the weights, tokenize the data; what is left to fill."""
    slug = _slug(model)
    notes = []
    if workload.task != "pretrain":
        notes.append(_note("megatron_convert", repo=_repo(model), slug=slug, save=_save_dir(model, workload)))
    notes.append(_note("megatron_tokenize", slug=slug))
    notes += _task_notes(model, workload)
    if workload.task == "full_finetune":  # here only without a Megatron-Bridge SFT recipe (`_megatron`)
        notes.append(_note("megatron_raw_finetune"))
    if train_iters(workload, global_batch) is None:
        notes.append(_note("megatron_no_tokens"))
    fixed = {k: v for k, v in model.rope_params if k in MEGATRON_MLA_YARN_FIXED and MEGATRON_MLA_YARN_FIXED[k] != v}
    if _mla_yarn(model) and fixed:
        notes.append(_note("megatron_yarn", stated=", ".join(f"{k} {v:g}" for k, v in fixed.items())))
    elif model.rope_scaling is not None and model.rope_scaling[0] != MEGATRON_ROPE_SCALING and not _mla_yarn(model):
        notes.append(_note("megatron_rope", kind=model.rope_scaling[0], factor=model.rope_scaling[1]))
    return notes


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
