"""The estimator's inputs: model × workload × plan × cluster, as frozen dataclasses.

The four are kept apart (as in calculon-ai/calculon `calculon/llm/llm.py`) so that the planner can
hold the model and workload fixed and vary plans and hardware cheaply. Units are in field names
where they are not obvious. This module imports only the standard library and two data modules of the estimator
(its vocabulary and the words of its refusals, app/estimator/error_words.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from app.estimator.error_words import render
from app.estimator.vocabulary import (
    LORA_TARGETS,
    Attention,
    HostLoad,
    Mlp,
    Norm,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    Task,
    Tuning,
)

GIB = 2**30


class EstimatorError(ValueError):
    """Bad input to the estimator; the message says what is wrong and what is allowed.

    `field` names the offending input (dotted path, e.g. "plan.tp") so the API can report it.
    """

    def __init__(
        self, message: str, *, field: str | None = None, code: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.field = field
        self.code = code  # a code of app/estimator/error_words.py, worded in either language from `params`
        self.params = params or {}

    @classmethod
    def of(cls, code: str, *, field: str | None = None, **params: Any) -> EstimatorError:
        """The error of `code` (app/estimator/error_words.py) with its figures; its message is the English text."""
        return cls(render(code, params), field=field, code=code, params=params)


def require_choice(value: object, allowed: Collection[str], field: str) -> None:
    """An EstimatorError naming `field` (its last part in the message) and what it allows, unless
    `value` is one of `allowed`."""
    if value not in allowed:
        raise EstimatorError.of("choice", field=field, name=field.rsplit(".", 1)[-1], allowed=list(allowed))


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A decoder-only transformer. Dense when `experts` == 0.

    MoE: `moe_layers` of the `layers` use `experts` routed experts of width `expert_ffn`
    (plus `shared_experts` always-active ones, DeepSeek style), `experts_per_token` active.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    mlp: Mlp = "swiglu"
    tied_embeddings: bool = False
    head_dim: int | None = None  # None: hidden // heads (Gemma and Qwen3 set it explicitly)
    norm: Norm = "rmsnorm"
    qkv_bias: bool = False  # bias on q, k, v only (Qwen2)
    linear_bias: bool = False  # bias on every linear layer (GPT-2, GPT-NeoX, Falcon off)
    learned_positions: int = 0  # GPT-2 style learned position table rows; 0 for RoPE models
    experts: int = 0
    experts_per_token: int = 0
    expert_ffn: int | None = None
    shared_experts: int = 0
    moe_layers: int = 0
    approximate: bool = False  # architecture derived from a parameter count only (not a config.json's shape)
    rope_theta: float | None = None  # RoPE base frequency (config.json rope_theta / rotary_emb_base); None: unstated
    # config.json rope_scaling: its rope_type ("llama3", "yarn", …) and factor; None: no scaling stated
    rope_scaling: tuple[str, float] | None = None
    # rope_scaling's other numbers as (key, value) pairs, sorted: YaRN's mscale, mscale_all_dim, beta_fast, beta_slow,
    # original_max_position_embeddings (DeepSeek-V2/V3 config.json); empty: none stated
    rope_params: tuple[tuple[str, float], ...] = ()
    norm_eps: float | None = None  # config.json rms_norm_eps / layer_norm_epsilon / layer_norm_eps; None: unstated
    hf_repo: str | None = None  # the Hugging Face repository of the weights and tokenizer; None: unknown
    family: str | None = None  # config.json model_type ("llama", "gemma", "deepseek_v3"…); None: given by its shape
    # MLA (DeepSeek-V2/V3, modeling_deepseek.py): (q_lora_rank (0: none), kv_lora_rank, qk_nope_head_dim,
    # qk_rope_head_dim, v_head_dim); None: multi-head / grouped-query attention
    mla: tuple[int, int, int, int, int] | None = None
    first_dense_layers: int = 0  # MoE: leading dense layers (DeepSeek first_k_dense_replace)
    # the peak learning rate its publisher pre-trained it with (data/presets.json pretrain_peak_lr, each with its
    # source); None: unpublished or not a preset
    pretrain_peak_lr: float | None = None

    @property
    def d_head(self) -> int:
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def is_moe(self) -> bool:
        return self.experts > 0 and self.moe_layers > 0


@dataclass(frozen=True, slots=True)
class LoraSpec:
    rank: int = 16
    targets: tuple[str, ...] = LORA_TARGETS  # validated by the estimator ("all-linear" allowed)
    alpha: float | None = None  # does not change memory; kept for launch configs
    dropout: float = 0.0  # > 0 keeps a dropped-out copy of each adapted input and its mask (PEFT default 0.0)
    double_quant: bool = True  # QLoRA: quantise the NF4 block constants too (QLoRA §3; bitsandbytes, torchao)


@dataclass(frozen=True, slots=True)
class Workload:
    """What the customer wants to do with the model, independent of how it is split.

    For `inference`, `seq_len` is the context length (prompt + generated) and the batch is
    `Plan.micro_batch` concurrent sequences; `output_tokens` is the generated length.
    """

    task: Task = "full_finetune"
    precision: Precision = "bf16"
    mixed_precision: bool = True  # fp32 master weights + optimizer states (Megatron/DeepSpeed/FSDP default)
    optimizer: Optimizer = "adamw"
    seq_len: int = 2048
    global_batch: int | None = None  # sequences per optimizer step; None: dp × micro_batch
    tokens: float | None = None  # tokens to train on (time to train) or to generate (inference)
    lora: LoraSpec | None = None
    kv_cache_precision: Precision | None = None  # None: same as the weights
    output_tokens: int = 256  # inference only
    # optimizer states in paged (unified) memory that give way to activations and return for the step
    # (QLoRA §3, bitsandbytes paged optimizers); None: on for qlora, as the QLoRA recipe runs it, where the launch can
    # run a paged optimizer (no ZeRO sharding, an optimizer with a paged variant: memory.paged_optimizer), else off
    paged_optimizer: bool | None = None
    # QLoRA through PEFT's `prepare_model_for_kbit_training` (peft/utils/other.py; called by TRL's SFTTrainer for a
    # 4-bit model that is not sharded, and by the QLoRA recipe artidoro/qlora qlora.py): its fp32 norms put the
    # residual stream and the saved activations in fp32 (memory.kbit_upcast). None: on for qlora unless ZeRO-3 / FSDP
    # shards it over more than one GPU (TRL skips it then); torchtune, litgpt and Unsloth do not
    kbit_upcast: bool | None = None
    # batches of varied length: a dataset of varied sample lengths padded per batch (the Hugging Face Trainer's
    # collators pad to the longest sample of the batch), not packed or padded to one length. The caching allocator
    # then keeps the blocks it cut for shorter batches beside the ones the longest batch needs (memory
    # VARIED_LENGTH_SLACK): more reserved, not more allocated. None: as the stack that runs the plan feeds its data
    # (the planner's stacks.as_padded); the estimator reads None as batches of one length
    varied_lengths: bool | None = None
    # batches of varied length fed longest first after every clearing of the caching allocator: the training loop
    # calls torch.cuda.empty_cache(), which releases every cached segment no live tensor holds
    # (c10/cuda/CUDACachingAllocator.cpp `emptyCache` -> `release_cached_blocks`), at least wherever the next batch may
    # be longer than the one before. PEFT's method comparison runs so (huggingface/peft method_comparison/MetaMathQA
    # at 5d602fdb: run.py empties the cache every ACCELERATOR_EMPTY_CACHE_SCHEDULE = 10 steps, and utils.py
    # BucketIterator yields each bucket of BUCKET_FACTOR = 20 batches sorted long to short, `torch.argsort(...,
    # descending=True)`, so every bucket starts right after a clear). No batch then finds blocks cut for another,
    # shorter length beside its own: memory VARIED_LENGTH_SLACK and VARIED_LENGTH_ACTIVATION_SETS do not apply
    cache_cleared_longest_first: bool = False
    # LoRA whose decoder layers build no autograd graph: reentrant checkpointing (torch.utils.checkpoint with
    # use_reentrant=True, transformers' gradient_checkpointing_enable() default) of layers none of whose tensor inputs
    # requires grad (a frozen embedding, and no enable_input_require_grads: a LoRA other than PEFT's). The checkpoint
    # runs the layer under torch.no_grad() and its output requires grad only where an input does, so the layers keep
    # nothing for a backward and their adapters get no gradient; only adapters after the last layer (the head's) train
    # (memory.activations `_elements_of`). Read under full recompute only. ColossalChat's LoRA runs so
    decoder_without_graph: bool = False
    # QLoRA on bitsandbytes before 0.43.0, which quantised every weight from an fp16 copy (bitsandbytes/nn/modules.py
    # Params4bit.cuda `self.data.contiguous().half()`, dropped by dcfb6f81 "Initial FSDP Support for QLoRA
    # Finetuning", first in 0.43.0): the quantisation state is fp16, so under a bf16 compute dtype every matmul
    # dequantises its matrix to fp16 and casts it (autograd/_functions.py MatMul4Bit `F.dequantize_4bit(B,
    # state).to(A.dtype)`, forward and backward): two 16-bit copies of each matrix in turn, and a reserved pool of
    # them (memory BNB_FP16_DEQUANT_POOL_COPIES). Off: bitsandbytes 0.43 or later, or another NF4 (torchao, GPTQ)
    bnb_fp16_dequant: bool = False


# Frozen without __slots__: `plan_with` copies a plan's fields as one dict (below).
@dataclass(frozen=True)
class Plan:
    """How the work is split. Degrees multiply: dp × tp × pp × cp = GPUs (ep lives inside dp)."""

    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    # Megatron-core's expert tensor parallel size (--expert-tensor-parallel-size): the routed experts' own TP degree,
    # their weights split over ep × expert_tp ranks and their distributed optimizer over the expert-data-parallel
    # group of world / (pp × ep × expert_tp) (megatron/core/parallel_state.py `initialize_model_parallel` at
    # d98e8a64: expert_tensor_model_pipeline_parallel_size = expert_tp × ep × pp). None: Megatron's default, tp
    # (megatron/training/arguments.py `validate_args`: `args.expert_tensor_parallel_size =
    # args.tensor_model_parallel_size` when unset); ms-swift sets 1 (swift/megatron/arguments/megatron_args.py at
    # 3602360a). Only the megatron stack runs a value other than tp (app/planner/levers.py `runs_levers`)
    expert_tp: int | None = None
    zero_stage: int = 0
    offload: Offload = "none"
    recompute: Recompute = "none"
    sequence_parallel: bool = False
    flash_attention: bool = True
    # the attention implementation the launch names (Attention): "eager" where flash_attention is false; "sdpa" holds
    # flash's memory (no seq_len² scores) and differs only in what the launch sets
    attention: Attention = "flash"
    micro_batch: int = 1
    virtual_stages: int = 1  # interleaved 1F1B when > 1
    chunked_loss: bool = False  # cross-entropy in chunks/fused (torchtune, litgpt, Megatron): no full fp32 logits copy
    # the head and the loss fused (Liger FusedLinearCrossEntropy, Apple Cut Cross-Entropy): no logits of the whole
    # sequence at all, the gradient of the hidden states made in the forward (memory.FUSED_LOSS_BYTES_PER_HIDDEN);
    # with fp32_main_grads (the megatron stack) Megatron-LM's fused vocab-parallel cross-entropy, which keeps the
    # logits as its unfused one (memory.activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT)
    fused_loss: bool = False
    # the cross-entropy compiled with the model (torchtitan compiles its loss when compile is on since pytorch/
    # torchtitan PR #1033, April 2025; torchtune compiles its loss with `compile: True`): 4 bytes per logit, not 12
    # (memory.activations COMPILED_LOSS_BYTES_PER_LOGIT); needs `compiled`
    compiled_loss: bool = False
    # the cross-entropy on the 16-bit logits, no fp32 upcast (a trainer's own nn.CrossEntropyLoss on the logits with
    # autocast off, e.g. ljm565/universal-llm-trainer with amp_training False): 6 bytes per logit, not 12
    # (memory.activations NO_UPCAST_LOSS_ELEMENTS_PER_LOGIT); no stack the planner launches runs it (planner/levers.py)
    no_upcast_loss: bool = False
    # the loss as transformers 4.48 ran it (loss/loss_utils.py ForCausalLMLoss at v4.48.1: `logits.float()`, then
    # `logits[..., :-1, :].contiguous()`, while the model's forward holds its 16-bit logits; PR #35646 dropped the
    # copy): in the forward the 16-bit logits, the fp32 upcast, its shifted copy and the log-probs meet
    # (memory.activations SHIFT_COPY_LOSS_BYTES_PER_LOGIT); no stack the planner launches runs it
    shift_copy_loss: bool = False
    # a Megatron-style vocabulary-parallel cross-entropy on an fp32 upcast of the 16-bit logits (atorch's
    # ds_3d_llama2.py `my_loss_func`: `logits.float()`, then atorch's vocab_parallel_cross_entropy, a fork of
    # Megatron-LM's): the upcast and the softmax it saves meet in the forward, the gradient is written into the saved
    # softmax (memory.activations UPCAST_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT); with fp32_main_grads, Megatron-LM's own,
    # which upcasts inside and makes the softmax in place (MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT); no stack the
    # planner launches runs it
    upcast_vocab_parallel_loss: bool = False
    # bytes a logit of the model's output that the training loop keeps alive through the backward and the recompute
    # (atorch's llama2 example: `outputs = model(**batch)` then `loss.backward()`, the fp32 logits transformers 4.31
    # returns; memory.activations `_loop_kept_logits`); 0: the loop drops the output before the backward (the Trainer's
    # compute_loss returns the loss only); no stack the planner launches keeps it
    kept_logits_bytes: float = 0.0
    # linear weights stored and all-gathered in FP8 (Megatron-LM --fp8-param-gather, Transformer Engine
    # fp8_model_init; torchao float8 FSDP all-gather): 1 byte per linear weight in the model's working copy; fp8 only
    fp8_params: bool = False
    # parameters kept in fp32 and the step run under torch.autocast to the 16-bit precision, with no FSDP
    # mixed-precision policy (the Hugging Face Trainer's --bf16 on a model loaded without torch_dtype, FSDP without
    # MixedPrecision, Lightning "bf16-mixed", atorch's amp_native): 4-byte weights (sharded, all-gathered and, for
    # LoRA, the frozen base), fp32 gradients, optimizer states with no master copy, an fp32 residual stream and
    # 16-bit copies of the weights each matmul casts and keeps (memory.states `param_bytes`, memory.activations
    # `_autocast_coeffs`, `autocast_weight_copies`); training at bf16 or fp16 only
    fp32_params: bool = False
    # saved activations (with full recompute: the layer inputs) kept in host RAM and brought back for the backward
    # (torchtune `enable_activation_offloading`, Unsloth's offloaded gradient checkpointing)
    activation_offload: bool = False
    # torch.compile of the model (torchtune `compile: True`, torchtitan `--compile`): pointwise ops are fused and
    # recomputed in the backward, so fewer tensors are saved (memory.activations `_act_coeffs`); HF
    # Trainer's torch_compile defaults to off
    compiled: bool = False
    # hybrid sharding (HSDP): ZeRO-3 states sharded over groups of `dp_shard` data-parallel ranks and replicated
    # across the dp / dp_shard groups (PyTorch FSDP ShardingStrategy.HYBRID_SHARD, FSDP2 fully_shard on a 2-D
    # DeviceMesh; torchtitan data_parallel_shard_degree × data_parallel_replicate_degree); None: all of dp
    dp_shard: int | None = None
    # the stack that runs the plan, where known: moves the speed point inside its range (performance.TUNING_SPEED);
    # None: not stated, the point is the median tuned run
    tuning: Tuning | None = None
    # gradients accumulated in an fp32 main-gradient buffer beside the 16-bit weights, whole on every rank unless
    # ZeRO-2/3 shards it: Megatron-LM's DDP buffer (main_grads_dtype fp32, on with --bf16: megatron/training/
    # arguments.py), 18 B/param with Adam, 6 + 12/d with the distributed optimizer (Megatron-LM docs/user-guide/
    # features/dist_optimizer.md); the planner sets it for the plans its megatron stack runs (app/planner/stacks.py)
    fp32_main_grads: bool = False
    # Megatron-LM's hidden dropout left at its default p = 0.1 (megatron/core/transformer/transformer_config.py
    # `hidden_dropout: float = 0.1` at d98e8a64d): each layer's two bias-dropout-adds keep torch's 1-byte mask of the
    # hidden state for the backward (memory.activations HIDDEN_DROPOUT_MASK_BYTES); off where the launch sets
    # --hidden-dropout 0 (the release recipes, Megatron-Bridge's and ms-swift's Llama / Qwen configs); no stack the
    # planner launches keeps it
    hidden_dropout: bool = False
    # the pipeline schedule keeps every micro-batch's last-stage output (the logits) until the step returns:
    # torch.distributed.pipelining appends each forward output to `output_chunks` for `merge_output_chunks` (stage.py
    # `forward_one_chunk`; pytorch/pytorch PR #138504, Oct 2024, detaches them after their backward but keeps them,
    # issue #159251, July 2025), which torchtitan ran until it passed `return_outputs=False` to `step()` (pytorch/
    # torchtitan PR #1922, 2025-10-22, commit e5ef99aab); memory.activations `_kept_outputs`. Set on the published runs
    # of torchtitan before that change; no stack the planner launches keeps them
    pp_keeps_outputs: bool = False
    # the optimizer steps each parameter inside the backward, as soon as its gradient is accumulated, and frees that
    # gradient (torchtune `optimizer_in_bwd: True`: recipes/full_finetune_single_device.py builds one optimizer per
    # parameter and torchtune/utils/memory.py `register_optim_in_bwd_hooks` runs its step() and zero_grad() from
    # `p.register_post_accumulate_grad_hook`): one parameter's gradient at a time instead of the model's; one GPU,
    # no ZeRO, no gradient accumulation (the recipe refuses accumulation with it)
    optimizer_in_backward: bool = False
    # whether the stack's loader holds the whole model (as loaded: QLoRA's NF4 linears and 16-bit rest) in host RAM
    # before ZeRO-3 shards it, and on which ranks of a node: "every_rank" (transformers' bitsandbytes load under
    # DeepSpeed ZeRO-3: each rank quantises on its GPU and keeps the result on the CPU), "local_rank_0" (the same
    # under FSDP's cpu_ram_efficient_loading: the other local ranks hold meta tensors), "none" (no whole copy on the
    # host). The host RAM gate counts it (MemoryBreakdown.host_load); the planner sets it for the plans its stacks
    # load so (app/planner/stacks.py `host_load`), as it sets fp32_main_grads
    host_load: HostLoad = "none"
    # ZeRO-3 as PyTorch FSDP stepping torch.optim.AdamW's default foreach implementation: the Hugging Face Trainer's
    # adamw_torch under accelerate's FSDP. Its step makes one more copy of the second moment (memory.states
    # ADAMW_STEP_V_SHARE), and FSDP makes the sharded gradients in the backward (freed by the Trainer's
    # zero_grad(set_to_none=True) after each step), so a step of one micro-batch holds no gradients while its
    # activations peak (memory.breakdown `_grads_made_in_backward`). False: as inferred (no ZeRO: the Trainer's foreach
    # step; ZeRO / FSDP: torchtitan's fused AdamW, DeepSpeed's flat gradient buffer, with the Trainer's foreach step
    # where `tuning` names the Trainer: memory.states TRAINER_TUNINGS)
    fsdp_torch_adamw: bool = False
    # ZeRO-2 run by ColossalAI's LowLevelZero plugin (colossalai/booster/plugin/low_level_zero_plugin.py, stage 2;
    # ColossalChat's "zero2" / "zero2_cpu"), not DeepSpeed: its reduce bucket is 12 Mi elements and it keeps no
    # gradient buffer between steps, so a step of one micro-batch holds no gradients while its activations peak and
    # its step holds the 16-bit partition beside its fp32 copy (memory.breakdown LOW_LEVEL_ZERO_*). Read at ZeRO
    # stage 2 only. No stack the planner launches runs it
    low_level_zero: bool = False
    # ZeRO-3 run by PyTorch FSDP1 (torch.distributed.fsdp.FullyShardedDataParallel, FlatParameter units: the
    # Hugging Face Trainer's / accelerate's fsdp_config before fsdp_version 2, axolotl, Answer.AI's fsdp_qlora,
    # ljm565/universal-llm-trainer), not FSDP2's fully_shard (torchtitan) nor DeepSpeed. With
    # CPUOffload(offload_params=True) each unit's reduce-scattered gradient shard stays on the GPU beside its host copy
    # until the backward ends (memory.states `_offloaded`). No stack the planner launches runs it (its fsdp stack is
    # torchtitan's FSDP2, its Trainer stacks DeepSpeed)
    fsdp1: bool = False
    # DeepSpeed ZeRO-1/2's reduce bucket, in elements (ds_config zero_optimization.reduce_bucket_size): the 16-bit
    # buffers its backward cuts the gradients into (memory.states DEEPSPEED_IPG_BUFFERS); None: DeepSpeed's default,
    # which the planner's launch leaves (app/planner/launch/deepspeed.py names no bucket)
    reduce_bucket_elements: float | None = None
    # the expert-parallel all-to-all run beside another micro-batch's compute: DeepSeek-V3's DualPipe (arXiv
    # 2412.19437 §3.2.1, "both all-to-all and PP communication can be fully hidden"), Megatron-LM's
    # --overlap-moe-expert-parallel-comm (megatron/core/model_parallel_config.py at d98e8a64: "Overlap EP A2A
    # communications with independent computations of different micro-batches"); communication.ep_comm then hides it
    # behind the micro-batch's forward + backward. No stack the planner launches runs it
    ep_overlap: bool = False
    # the checkpointed regions of one layer under full recompute, each keeping its own input for the backward: 1 where
    # the whole decoder layer is one region (the Hugging Face Trainer's gradient checkpointing, torchtitan's full AC,
    # Megatron-LM's full recompute), 4 where the attention, the MLP and both norms are checkpointed apart (NVIDIA-NeMo/
    # Automodel nemo_automodel/components/distributed/parallelizer.py at b4733bdc18cc, DefaultParallelizationStrategy:
    # `checkpoint_wrapper` around self_attn, mlp, input_layernorm and post_attention_layernorm one by one, so the
    # residual stream before each norm and each norm's output stay saved: four hidden states a layer, not one;
    # memory.activations `_stage_elements`). No stack the planner launches runs more than 1
    checkpoint_regions: int = 1

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def etp(self) -> int:
        """The experts' tensor parallel degree: expert_tp, or tp where unset (Megatron's default)."""
        return self.expert_tp or self.tp

    @property
    def shard_dp(self) -> int:
        """Data-parallel ranks the ZeRO / FSDP states are sharded over: the shard group, or all of dp."""
        return self.dp_shard or self.dp

    @property
    def hybrid(self) -> bool:
        """Hybrid sharding: a shard group smaller than dp, replicated across the rest."""
        return self.dp_shard is not None and self.dp_shard < self.dp


# Copying a plan with some fields changed, as the plan search does thousands of times a request. dataclasses.replace
# walks the 37 fields' metadata and calls the frozen __init__, which sets each field through object.__setattr__: about
# 13 µs a plan; copying the instance dict whole and writing the changed fields into it takes about 2.2 µs (CPython
# 3.11, this module's Plan; timeit, best of 5 × 20,000). The plan stays frozen: its class refuses every attribute write.
_PLAN_FIELDS = frozenset(Plan.__dataclass_fields__)


def plan_with(plan: Plan, **changes: Any) -> Plan:
    """`dataclasses.replace(plan, **changes)`, faster (above); a name that is not a field of Plan raises KeyError."""
    unknown = changes.keys() - _PLAN_FIELDS
    if unknown:
        raise KeyError(sorted(unknown)[0])
    copy = object.__new__(Plan)
    copy.__dict__.update(plan.__dict__, **changes)
    return copy


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """Hardware facts of one GPU type; every figure is cited in data/gpus.json."""

    id: str  # stable slug, e.g. "h100-80g-sxm"
    name: str
    memory_gib: float  # as reported by nvidia-smi (total), in GiB
    usable_memory_gib: float  # what a training process can allocate (total minus reserved)
    hbm_bytes_per_s: float
    peak_flops: dict[str, float]  # dense tensor-core peak per precision: "fp32" (TF32), "fp16", "bf16", "fp8"
    intra_node_link: str  # "nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", ...
    nvlink_bytes_per_s: float  # per GPU, one direction; 0 when the card has no NVLink
    pcie_gen: int
    max_gpus_per_node: int = 8
    source: str = ""
    # share of the listed dense peak the card sustains through a training step at its own power limit: 1.0
    # where the listed peak already uses the part's own clocks; below 1 where a PCIe part shares the SXM part's
    # listed peak but runs at a lower power limit (cited per GPU in data/gpus.json)
    sustained_fraction: float = 1.0
    sm_count: int = 0  # streaming multiprocessors (architecture whitepapers); 0: unknown
    # measured STREAM-class HBM bandwidth (BabelStream Triad, bytes/s, cited in data/gpus.json); 0: not measured
    stream_hbm_bytes_per_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Cluster:
    """The GPUs a plan runs on: `nodes` servers of `gpus_per_node` cards each."""

    gpu: GpuSpec
    gpus_per_node: int = 1
    nodes: int = 1
    intra_node_link: str | None = None  # None: the GPU's own (a PCIe-only server overrides NVLink)
    inter_node_gbps: float | None = None  # per-node injection bandwidth in Gbit/s; None: no fabric
    host_ram_gib: float | None = None  # per node; None: unknown (offload is not checked)
    inter_node_fabric: str | None = None  # a named fabric (data/interconnects.json); None: inferred from the rate
    memory_headroom: float = 0.05  # share of the card's usable memory a plan must leave free

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes


# Every warning code the estimator and the planner can emit (API `warnings[].code`): app/text/messages.py
# words each in English and Chinese (tests/test_messages.py), and mypy holds each Warning_ to this list.
WarningCode = Literal[
    "indicative_price",
    "fabric_priced_on_request",
    "offload_over_pcie",
    "offload_slowdown",
    "host_ram_exceeded",
    "host_ram_unknown",
    "host_load_exceeded",
    "host_load_unknown",
    "term_longer_than_job",
    "billing_within_range",
    "over_monthly_budget",
    "other_term_cheaper",
    "host_ram_unconfirmed",
    "deadline_within_range",
    "memory_may_exceed",
    "memory_pool_fills_card",
    "pipeline_bubble",
    "pipeline_few_microbatches",
    "global_batch_small",
    "pp_uneven_layers",
    "tp_across_nodes",
    "kv_heads_replicated",
    "approximate_model",
    "estimate_uncertain",
    "params_mismatch",
    "ragged_batch",
    "global_batch_rounded",
    "moe_experts_resident",
    "moe_low_concurrency_unvalidated",
    "quantised_checkpoint",
    "kv_cache_dominates",
    "no_fit",
    "no_fit_zero3",
    "precision_unsupported",
    "fp8_not_launched",
    "no_stack",
    "ethernet_fabric",
    "communication_bound",
    "single_server_only",
    "starts_from_scratch",
    "no_kv_cache",
    "slo_missed",
    "slo_missed_peak",
    "slo_missed_percentile",
    "slo_missed_saturated",
    "concurrency_over_kv",
    "prompts_over_limit",
    "scaling_rows_unfit",
    "scaling_none_fits",
    "scaling_superlinear",
]


@dataclass(frozen=True, slots=True)
class Warning_:
    """A named trap as data: the stable code and its figures by name, never a sentence (app/text/messages.py words code
    and params in English and Chinese: the API's `message`, the pages, the PDF)."""

    code: WarningCode
    params: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(slots=True)  # an output, built on every estimate: a frozen __init__ costs ~0.3 µs per field
class MemoryBreakdown:
    """Per-GPU memory in bytes (worst pipeline stage); the API converts to GiB."""

    total: float  # the six parts below, summed once by the estimate (memory.breakdown._breakdown), read by every gate
    weights: float
    gradients: float
    optimizer: float
    activations: float
    kv_cache: float
    other: float
    capacity: float  # usable bytes of the card
    host_ram: float = 0.0  # bytes per node needed on the host when offloading
    limit: float | None = None  # bytes a plan may use: capacity less the headroom; None: capacity
    host_ram_limit: float | None = None  # host bytes per node offload may use (after the reserve); None: unknown
    # host bytes per node while the model loads (Plan.host_load): `host_load_copies` whole copies of the model as
    # loaded, before ZeRO-3 shards it and before anything is offloaded
    host_load: float = 0.0
    host_load_copies: int = 0
    # reserved bytes the caching allocator holds beyond live tensors for batches of varied length (Workload.
    # varied_lengths; counted in `other`, absent from torch.cuda.max_memory_allocated)
    length_slack: float = 0.0
    # bytes of paged optimizer states (Workload.paged_optimizer): bitsandbytes allocates them in CUDA managed memory
    # (bitsandbytes/functional.py `get_paged`: lib.cget_managed_ptr, a cudaMallocManaged allocation), outside
    # PyTorch's caching allocator, and the driver evicts their pages to host RAM when the card runs short and brings
    # them back page by page for the step. Not in `total` (the gate) nor in torch's allocated/reserved readings; the
    # device reading counts what of them the card has room to keep (memory.measured_bytes)
    paged_optimizer: float = 0.0
    # reserved bytes of the 16-bit logits' cached block beside the fp32 loss's backward (memory.activations
    # LOGITS_BLOCK_BYTES_PER_LOGIT): in the reserved and device readings, not in `total` nor the allocated one
    logits_block: float = 0.0
    # bytes of the last stage's recomputed layer counted beside the loss's logit-sized buffers, which the allocated
    # peak never holds together (memory.activations RECOMPUTE_BESIDE_LOSS): in `total` and the reserved and device
    # readings, not in the allocated one
    recompute_overlap: float = 0.0
    # reserved bytes of DeepSpeed ZeRO-3's step temporaries that `total` cuts from the blocks the backward freed and
    # the caching allocator cannot (memory.breakdown STEP_BLOCKS): in the reserved and device readings only
    step_block: float = 0.0

    @property
    def host_peak(self) -> float:
        """Host bytes per node at the plan's peak: the load or the offloaded states, whichever is larger. They do not
        meet: the loaded copies become ZeRO-3 partitions parameter by parameter when the engine is built, and the
        offloaded optimizer states are allocated after that."""
        return max(self.host_ram, self.host_load)

    @property
    def load_binds(self) -> bool:
        """The load, not the offload, sets the host peak (the figure host RAM messages name)."""
        return self.host_load > self.host_ram

    @property
    def gpu_fits(self) -> bool:
        return self.total <= (self.capacity if self.limit is None else self.limit)

    @property
    def host_fits(self) -> bool:
        """Nothing offloaded or loaded whole on the host, or the peak of the two within the host's limit; either onto
        a host of unknown RAM is not a plan anyone can sign (the planner never offloads there; the load rejects it;
        /estimate and quotes refuse it)."""
        peak = self.host_peak
        return not peak or (self.host_ram_limit is not None and peak <= self.host_ram_limit)

    @property
    def fits(self) -> bool:
        """The feasibility gate: GPU memory within the headroom and host RAM within the reserve."""
        return self.gpu_fits and self.host_fits


@dataclass(slots=True)  # an output, built on every estimate: a frozen __init__ costs ~0.3 µs per field
class Performance:
    """Speed of one plan. Training fields are None for inference and vice versa."""

    step_time_s: float | None = None
    tokens_per_s: float | None = None  # whole job
    tokens_per_s_per_gpu: float | None = None
    mfu: float | None = None
    breakdown_s: dict[str, float] = field(default_factory=dict)  # compute, exposed_comm, bubble, offload
    time_to_train_hours: float | None = None
    gpu_hours: float | None = None
    prefill_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    time_per_output_token_ms: float | None = None
    # [low, high]: low for a typical stack (HF Trainer/accelerate + DeepSpeed or FSDP), high for a tuned
    # one (Megatron-LM, torchtitan); time and GPU-hours ranges run the other way ([tuned, typical]).
    tokens_per_s_per_gpu_range: tuple[float, float] | None = None
    time_to_train_hours_range: tuple[float, float] | None = None
    gpu_hours_range: tuple[float, float] | None = None
    goodput: Goodput | None = None  # what the run loses besides compute (training with `tokens` only)
    # MFU with the attention core counted over the full s×s matrix; `mfu` counts the causal half (app/estimator/
    # performance.py CAUSAL_ATTENTION_SHARE)
    mfu_full_attention: float | None = None


@dataclass(slots=True)  # an output, built on every estimate: a frozen __init__ costs ~0.3 µs per field
class Goodput:
    """Where a training run's wall time goes besides compute (app/estimator/goodput.py), in job hours. The factor, the
    parts and the interruptions follow from the fields and are read off them when asked (every estimate builds one)."""

    ideal_hours: float  # compute alone
    wall_hours: float
    base_hours: float  # wall hours less what interruptions cost
    checkpoint_hours: float  # saving checkpoints
    evaluation_hours: float
    startup_hours: float
    checkpoint_interval_hours: float
    interruptions_per_hour: float  # of wall time, over the whole cluster
    checkpoint_bytes: float
    storage_bytes: float  # checkpoints kept plus the final weights

    @property
    def factor(self) -> float:
        """ideal ÷ wall."""
        return self.ideal_hours / self.wall_hours if self.wall_hours > 0 else 1.0

    @property
    def parts_hours(self) -> dict[str, float]:
        """failures, checkpoints, evaluation, startup."""
        return {
            "failures": self.wall_hours - self.base_hours,
            "checkpoints": self.checkpoint_hours,
            "evaluation": self.evaluation_hours,
            "startup": self.startup_hours,
        }

    @property
    def interruptions(self) -> float:
        """Expected number over the run."""
        return self.interruptions_per_hour * self.wall_hours
