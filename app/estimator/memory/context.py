"""What one (model, workload) pair holds for every plan: the model's parameter facts, the activation coefficients,
the pipeline stages, and the context that caches per-split results (the package docstring, "Speed")."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.estimator.notes import Note
from app.estimator.specs import ModelSpec, Warning_, Workload


@dataclass(frozen=True, slots=True)
class _Facts:
    attn: float  # tensor-parallel part of one layer's attention
    dense_mlp: float
    routed_experts: float  # all routed experts of one MoE layer (ep- and tp-shardable)
    moe_other: float  # router + shared experts of one MoE layer
    norms: float  # per layer, replicated
    embedding: float
    lm_head: float  # 0 when tied
    final_norm: float
    moe_layers: int
    layers: int
    block_linear: float  # weights of all block linears (what NF4 quantises)
    largest_linear: float  # one matrix, for the QLoRA dequantisation buffer


@dataclass(frozen=True, slots=True)
class _ActCoeffs:
    """Elements kept per token for one layer's backward, split by how tensor parallelism divides them."""

    replicated: float  # norm inputs/outputs: divided by tp only with sequence parallelism
    q_side: float  # q and attention output: heads split by tp
    kv_side: float  # k and v: kv heads split by tp (replicated when kv_heads < tp)
    mlp: float  # MLP intermediates (dense layer), split by tp
    moe_mlp: float  # MoE layer MLP intermediates incl. dispatched copies, split by tp
    selective_replicated: float
    selective_q: float  # torchtitan's op-level selective recompute: wq and attention outputs (heads split by tp)
    selective_kv: float  # ... and wv's output (kv heads split by tp)
    selective_mlp: float
    selective_moe_mlp: float
    megatron_selective_mlp: float  # Megatron's selective recompute: the MLP is not recomputed (see _act_coeffs)
    megatron_selective_moe_mlp: float
    megatron_selective_replicated: float  # ... the norms' tensors (Transformer Engine's; else as torchtitan's)
    megatron_selective_q: float  # ... the attention side the checkpoint and linear_proj keep (heads split by tp)
    megatron_selective_kv: float  # ... (kv heads split by tp)
    attn_heads: float  # a: softmax rows per token per query position (non-flash s² term)
    kv_heads: int  # whole kv heads are replicated across tp ranks when kv_heads < tp
    per_layer_input: float  # hidden: what full recompute keeps per layer
    # Transformer Engine FP8 (the megatron stack at precision fp8): linear inputs TE saves quantized, 1 byte, not 2
    # (see activations.TE_FP8_SAVED): the norms' outputs (replicated), the o_proj input (heads split by tp) and the
    # down projection's input (MLP width split by tp), dense and MoE
    fp8_replicated: float = 0.0
    fp8_q: float = 0.0
    fp8_mlp: float = 0.0
    fp8_moe_mlp: float = 0.0


@dataclass(frozen=True, slots=True)
class _Stage:
    """Parameters held by one GPU of one pipeline stage (after tp/ep division, before ZeRO)."""

    layers: int
    moe_layers: int
    params: float  # all parameters on this GPU
    expert_params: float  # of which routed experts (sharded by ZeRO over the expert-data-parallel group)
    linear_params: float  # of which block linears (NF4-quantised under QLoRA)
    largest_unit: float  # largest module gathered at once under ZeRO-3 (layer, embedding or head)
    layer_params: float  # one transformer layer on this GPU
    layer_linear_params: float  # of which its linears (the rest: its norms)
    other_unit: float  # the embedding or head on this GPU, whichever is larger (0 on a middle pipeline stage)
    root_params: float  # the embedding, head and final norm on this GPU: FSDP's root unit when only layers are wrapped
    head_params: float  # the output head on this GPU (the tied embedding's copy under pipelining); 0 off the last stage
    is_first: bool
    is_last: bool


# The worst pipeline stage of a plan: total, its parts in MemoryBreakdown's order (weights, gradients, optimizer,
# activations, KV cache, other), host bytes per GPU, paged states, AdamW's step temporary, whether it is the last stage,
# the bytes the allocated reading holds less, DeepSpeed ZeRO-3's step bytes the reserved pool cannot cut from the
# backward's blocks (tuples of numbers only: the garbage collector stops tracking them)
_Worst = tuple[float, tuple[float, float, float, float, float, float], float, float, float, bool, float, float]
# (model states per stage: weights, gradients, optimizer, host; paged states; the ZeRO stage whose DeepSpeed step copies
# the gradients, 0 for none; torch AdamW's step share; the worst stage (`_Worst`) by whether the gradients are made in
# the backward), breakdown._sharded
_Sharded = tuple[tuple[tuple[float, ...], ...], bool, int, float, dict[bool, _Worst]]


@dataclass(slots=True)
class _Split:
    """One split of a context's model: the plan fields the activations, KV cache and `other` read (the key of
    `_Ctx.splits`, activations._split_of), their figures per stage, and what the plans of this split add, indexed
    under the few plan and cluster fields the split's key leaves out: each such key with the split's own holds every
    field its figures read. A plan's split is looked up once per estimate, and hashing a key costs in proportion to
    its length: the planner's plans of one split (every ZeRO stage and offload) then find their states, traps, advice
    and notes under keys of three to seven fields, not of six to twenty-three; all four stay shared by the splits in
    the context's own dicts, so a new split computes only what no split has."""

    working: tuple[tuple[float, float, float, float], ...]  # (activations, KV cache, other, host activations) a stage
    # the allocator's blocks for batches of varied length (activations.varied_length_slack) and bitsandbytes' pool
    # of dequantised copies before 0.43 (activations._bnb_dequant_pool)
    length_slack: float
    logits_block: float  # the 16-bit logits' cached block on the last stage (activations._logits_block)
    # the last stage's recomputed layer's working set counted beside the loss's logit-sized buffers, which no instant
    # holds together (activations._recompute_overlap): out of the allocated reading, not the others
    recompute_overlap: float
    # by (ZeRO shard group, ZeRO stage, offload, fp8_params, optimizer_in_backward, fsdp_torch_adamw, the Trainer's
    # DeepSpeed in `tuning`): model states per stage, the step's flags, and the worst stage by whether the gradients
    # are made in the backward (breakdown._sharded)
    sharded: dict[tuple[object, ...], _Sharded] = field(default_factory=dict)
    # by (offload, PCIe generation): the plan's traps
    traps: dict[tuple[object, ...], tuple[Warning_, ...]] = field(default_factory=dict)
    # by (ZeRO-3's dp, fp8_params, fsdp_torch_adamw, the Trainer's DeepSpeed, optimizer_in_backward, host_load and the
    # cluster's GPUs per node, usable memory, headroom, host RAM): the advice to a plan that does not fit
    advice: dict[tuple[object, ...], Warning_] = field(default_factory=dict)
    # by (ZeRO stage, offload, fp8_params, host_load): the notes an estimate states
    assumptions: dict[tuple[object, ...], tuple[Note, ...]] = field(default_factory=dict)


@dataclass(slots=True)
class _Ctx:
    """Quantities of one (model, workload) pair; the dicts cache per-split results under small int keys,
    which hash far faster than the 20-field ModelSpec (the planner varies only the plan)."""

    model: ModelSpec
    workload: Workload
    facts: _Facts
    coeffs: _ActCoeffs
    compiled_coeffs: _ActCoeffs  # under torch.compile (Plan.compiled)
    autocast_coeffs: _ActCoeffs  # fp32 parameters under autocast (Plan.fp32_params; activations._autocast_coeffs)
    autocast_compiled_coeffs: _ActCoeffs  # the same under torch.compile
    te_coeffs: _ActCoeffs  # Transformer Engine's layers, the megatron stack (Plan.fp32_main_grads; memory.saved)
    dtype: float  # bytes of a training weight / gradient
    optimizer_per_param: float
    flat_optimizer_per_param: float  # the same on ZeRO's flat partitions (`_flat_partitions`)
    act_bytes: float
    adapters: float  # LoRA parameters in the whole model (0 for other tasks)
    adapter_dtype: float
    adapter_optimizer: float
    flat_adapter_optimizer: float
    paged: tuple[bool, bool]  # (replicated, on ZeRO's flat partitions): `paged_optimizer` by `_flat_partitions`
    dropout_elements: float  # LoRA dropout copies, elements per token per layer
    nf4_bytes: float  # bytes per NF4-stored base weight (QLoRA)
    stages: dict[tuple[int, int, int, int], tuple[_Stage, ...]] = field(default_factory=dict)
    elements: dict[tuple[object, ...], tuple[float, float]] = field(default_factory=dict)
    splits: dict[tuple[object, ...], _Split] = field(default_factory=dict)
    # shared by the splits (a split's own dicts index them under shorter keys), each under every field it reads:
    # model states (states._stage_states), traps (advice._plan_warnings), the ZeRO-3 advice (advice._zero3_advice)
    # and the notes (estimate._plan_assumptions)
    states: dict[tuple[object, ...], tuple[tuple[float, ...], ...]] = field(default_factory=dict)
    traps: dict[tuple[object, ...], tuple[Warning_, ...]] = field(default_factory=dict)
    advice: dict[tuple[object, ...], Warning_] = field(default_factory=dict)
    assumptions: dict[tuple[object, ...], tuple[Note, ...]] = field(default_factory=dict)
