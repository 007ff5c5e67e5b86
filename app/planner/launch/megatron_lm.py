"""The Megatron-LM launch of the megatron stack: pretrain_gpt.py under torchrun with its arguments and notes, for the
runs Megatron-Bridge does not take (app/planner/launch/megatron_bridge.py). PURE.

Megatron-LM arguments (megatron/training/arguments.py): parallel sizes, --sequence-parallel,
--use-distributed-optimizer, recompute, batch sizes, and the architecture flags without which Megatron builds a
GPT-2-style model: --normalization RMSNorm with the model's --norm-epsilon, --position-embedding-type rope with
--rotary-base (the model's rope_theta) and, for Llama 3.1/3.2, --use-rope-scaling --rope-scaling-factor, --swiglu,
--untie-embeddings-and-output-weights, --disable-bias-linear, --add-qkv-bias (Qwen2), --group-query-attention
--num-query-groups, and for MoE --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
--expert-model-parallel-size. A fine-tune loads the converted checkpoint (--load, --finetune: iteration 0, no
optimizer or RNG state) and saves elsewhere (--save, --save-interval from the estimator's checkpoint interval); the
tokenizer is HuggingFaceTokenizer with the model's repository; data is a --data-path placeholder with --split;
--train-iters = tokens ÷ (global batch × sequence length); the optimizer the estimate sized (--optimizer adam | sgd:
TRAINER_OPTIM and its neighbours name it per tool) with a cosine schedule (SCHEDULES).
Per family: --qk-layernorm (Qwen3, DeepSeek), --multi-latent-attention with its ranks, --moe-layer-freq and the
router flags (DeepSeek); families Megatron's arguments cannot build never reach here (data/stacks.json).
"""

from __future__ import annotations

from typing import Any

from app.estimator.specs import ModelSpec, Performance, Plan, Workload
from app.estimator.vocabulary import BF16_RUN_PRECISIONS, Optimizer
from app.planner.launch.common import (
    Job,
    LaunchNote,
    _note,
    _notes_out,
    _repo,
    _slug,
    _task_notes,
    run_schedule,
    train_iters,
)
from app.planner.shapes import stage_layers

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


# The optimizer the estimate sized (trainer.TRAINER_OPTIM), as Megatron-LM names it: core_v0.15.3 arguments.py
# `--optimizer` choices ['adam', 'sgd'] (megatron/core/optimizer: adam is Transformer Engine's FusedAdam with
# decoupled weight decay, i.e. AdamW; sgd is FusedSGD with --sgd-momentum).
MEGATRON_OPTIMIZER: dict[Optimizer, str] = {"adamw": "adam", "sgd": "sgd"}
MEGATRON_SGD_MOMENTUM = 0.9  # arguments.py --sgd-momentum default; the estimate counts its momentum buffer


# Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh: FP8 through Transformer Engine (the default
# --transformer-impl) in a --bf16 run, E4M3 forward / E5M2 backward ("hybrid") with delayed scaling over a
# 1,024-step amax history. --fp8-param-gather (fp8 weights) only where the plan says fp8_params, as the estimate counts.
MEGATRON_FP8 = ["--fp8-format hybrid", "--fp8-amax-history-len 1024", "--fp8-amax-compute-algo max"]


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
    if plan.expert_tp is not None and model.is_moe:  # unset, Megatron-LM takes tp (arguments.py `validate_args`)
        args.append(f"--expert-tensor-parallel-size {plan.expert_tp}")
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
    (model_parallel_config.py cross_entropy_loss_fusion, named as Megatron-Bridge's launch names it: the implementation
    the estimate counts, memory.activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT, whatever the default;
    arguments.py at d98e8a64d refuses "te"), activations offloaded to the CPU for every layer but the last
    (cpu_offloading, cpu_offloading_num_layers below num_layers: transformer_config.py)."""
    args = [f"--attention-backend {'flash' if plan.flash_attention else 'unfused'}"]
    if plan.fused_loss:
        args += ["--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl native"]
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
    run = run_schedule(model, workload, global_batch, performance)
    if run.iters is not None:
        args += [f"--train-iters {run.iters}", f"--save-interval {run.save_interval}"]
    optimizer = MEGATRON_OPTIMIZER[workload.optimizer]
    args += [
        f"--optimizer {optimizer}",
        f"--lr {run.lr:g}",
        f"--min-lr {run.min_lr:g}",
        "--lr-decay-style cosine",
        "--weight-decay 0.1",
        "--clip-grad 1.0",
    ]
    if optimizer == "adam":
        args += ["--adam-beta1 0.9", "--adam-beta2 0.95"]
    else:
        args.append(f"--sgd-momentum {MEGATRON_SGD_MOMENTUM:g}")
    if workload.task == "pretrain" and run.warmup_steps is not None:
        args.append(f"--lr-warmup-iters {run.warmup_steps}")
    else:
        args.append(f"--lr-warmup-fraction {run.warmup_fraction:g}")
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


def _megatron_lm(job: Job) -> dict[str, Any]:
    model, workload = job.model, job.workload
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
